// Package apicheck measures and guards usmbridge's public API: the export
// count of each public package (Surface), docs/api.md read back (APIDoc),
// and the rules its tests enforce on every public package: every export
// listed in docs/api.md with its user, none over its budget, no internal
// type in an exported signature, purego imported only by internal/ffi.
package apicheck
