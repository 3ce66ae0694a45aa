//go:build !cgo

package ffi

import "github.com/ebitengine/purego"

// call is Fn.Call without cgo: purego's SyscallN.
func call(fn uintptr, args []uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
