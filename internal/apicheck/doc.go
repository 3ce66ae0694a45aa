// Package apicheck measures and guards usmbridge's public API: the export
// count of each public package (Surface), and the rules its tests
// enforce on every public package: no internal type in an exported
// signature, purego imported only by internal/ffi.
package apicheck
