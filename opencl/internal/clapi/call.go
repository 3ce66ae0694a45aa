package clapi

import (
	"unsafe"
)

// StrPtr returns the address of a NUL-terminated constant string. Only use
// it with string constants (they live in read-only data for ever).
func StrPtr(s string) uintptr {
	if len(s) == 0 || s[len(s)-1] != 0 {
		panic("clapi.StrPtr: string must be NUL-terminated: " + s)
	}
	return uintptr(unsafe.Pointer(unsafe.StringData(s)))
}
