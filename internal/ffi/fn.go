package ffi

import "github.com/ebitengine/purego"

// Fn is the address of a C function; 0 for an optional entry point the
// library lacks.
type Fn uintptr

// Present reports whether the entry point was found.
func (f Fn) Present() bool { return f != 0 }

// Call calls the C function with integer or pointer arguments and returns
// its integer result (the whole register: callers narrow it to the C
// return type).
//
// Arguments written as uintptr(unsafe.Pointer(&x)) at a call site keep x
// alive and in place until C returns only because of go:uintptrescapes
// (purego.SyscallN has it too; a wrapper without it would let x move when
// the goroutine's stack grows during the call). Such x escape to the heap.
// The directive acts at direct call sites only, so typed wrappers must do
// the conversion in the argument list of Call itself.
//
//go:uintptrescapes
func (f Fn) Call(args ...uintptr) uintptr {
	return call(uintptr(f), args)
}

// Register sets *fptr (a pointer to a func variable) to call f, for
// signatures SyscallN cannot express: structs passed by value, floats.
// It does nothing when f is absent, leaving *fptr nil.
func (f Fn) Register(fptr any) {
	if f != 0 {
		purego.RegisterFunc(fptr, uintptr(f))
	}
}

// NewCallback returns a C function pointer that calls fn. Each call uses
// one of the process's 2000 permanent slots: create callbacks once, at
// package level, never per operation.
func NewCallback(fn any) uintptr { return purego.NewCallback(fn) }
