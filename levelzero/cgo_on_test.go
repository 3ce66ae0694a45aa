//go:build cgo

package levelzero

// cgoEnabled: native calls go through the cgo trampoline, which allocates
// nothing (internal/ffi, fixed.go).
const cgoEnabled = true
