package clapi

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// Call calls the C function fn with integer and pointer arguments and
// returns its result register.
//
// go:uintptrescapes is why this wrapper exists: callers write
// Call(fn, uintptr(unsafe.Pointer(&out))), and the directive makes the
// compiler move out to the heap and keep it alive until Call returns. Without
// it, out could stay on the goroutine stack, and a stack growth on the way
// into the C call (ffi.Call itself is not annotated) would leave C writing
// to the old stack.
//
//go:uintptrescapes
//go:noinline
func Call(fn uintptr, args ...uintptr) uintptr {
	return ffi.Call(fn, args...)
}

// StrPtr returns the address of a NUL-terminated constant string. Only use
// it with string constants (they live in read-only data for ever).
func StrPtr(s string) uintptr {
	if len(s) == 0 || s[len(s)-1] != 0 {
		panic("clapi.StrPtr: string must be NUL-terminated: " + s)
	}
	return uintptr(unsafe.Pointer(unsafe.StringData(s)))
}
