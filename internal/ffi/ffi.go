// Package ffi is the only package of usmbridge that imports purego. It keeps
// the rules of calling native code in one place: callbacks are created once
// per C signature for the life of the process (purego has 2000 slots and
// never frees them), hot calls go through SyscallN, and symbols that a
// runtime may lack are looked up, never assumed.
package ffi

import (
	"errors"
	"strings"

	"github.com/ebitengine/purego"
)

// Dlopen flags (glibc values; purego does not export NOLOAD).
const (
	RTLDLazy   = purego.RTLD_LAZY
	RTLDNow    = purego.RTLD_NOW
	RTLDGlobal = purego.RTLD_GLOBAL
	RTLDLocal  = purego.RTLD_LOCAL
	RTLDNoLoad = 0x4
)

// LibraryError reports that none of the candidate names of a library could
// be opened. It carries every name tried and the loader's messages.
type LibraryError struct {
	Tried  []string
	Errors []string
}

func (e *LibraryError) Error() string {
	parts := make([]string, len(e.Tried))
	for i, n := range e.Tried {
		parts[i] = n + ": " + e.Errors[i]
	}
	return "cannot load any of " + strings.Join(e.Tried, ", ") + " (" + strings.Join(parts, "; ") + ")"
}

// Open opens the first library of names that loads.
func Open(mode int, names ...string) (handle uintptr, name string, err error) {
	le := &LibraryError{}
	for _, n := range names {
		h, err := purego.Dlopen(n, mode)
		if err == nil {
			return h, n, nil
		}
		msg := err.Error()
		if msg == "" {
			msg = "not loaded"
		}
		le.Tried, le.Errors = append(le.Tried, n), append(le.Errors, msg)
	}
	return 0, "", le
}

// Sym returns the address of a symbol, or an error if it is absent.
func Sym(handle uintptr, name string) (uintptr, error) {
	p, err := purego.Dlsym(handle, name)
	if err != nil {
		return 0, err
	}
	if p == 0 {
		return 0, errors.New("symbol " + name + " is NULL")
	}
	return p, nil
}

// Bind sets *fptr (a pointer to a func variable) to call the C function at
// addr. Use it on cold paths; hot paths use Call.
func Bind(fptr any, addr uintptr) { purego.RegisterFunc(fptr, addr) }

// Call calls the C function at fn with integer or pointer arguments and
// returns its integer result.
//
// Arguments written as uintptr(unsafe.Pointer(&x)) at a call site keep x
// alive and in place until C returns only because of go:uintptrescapes
// (purego.SyscallN has it too; a wrapper without it would let x move when
// the goroutine's stack grows during the call). Such x escape to the heap.
//
//go:uintptrescapes
func Call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// NewCallback returns a C function pointer that calls fn. Each call uses
// one of the process's 2000 permanent slots: create callbacks once, at
// package level, never per operation.
func NewCallback(fn any) uintptr { return purego.NewCallback(fn) }
