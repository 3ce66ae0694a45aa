//go:build cgo

package opencl

// cgoEnabled: native calls go through the cgo trampoline, which allocates
// nothing (internal/ffi, fixed.go).
const cgoEnabled = true
