// Package apicheck measures and guards usmbridge's public API and its
// layering: the export count of each public package (Surface), docs/api.md
// read back (APIDoc), the module's dependencies between its own packages
// (Deps), and the rules its tests enforce: every export listed in
// docs/api.md with its user, none over its budget, no internal type in an
// exported signature, purego imported only by internal/ffi, no internal
// package depending on a public one, and each public package depending
// only on its own layer and those below (the protocol core, the backends,
// the Python boundary).
package apicheck
