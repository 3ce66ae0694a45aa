package pyext

// The Go functions the C half calls (the //export functions of the *_cgo.go
// files, each beside the C file it serves: call_cgo.go for call.c,
// array_cgo.go for the Array's protocols, exchange_cgo.go, fromdlpack_cgo.go,
// module_cgo.go, class_cgo.go), each with the GIL held, share what this
// file has: the guard of every entry, and errors both ways. Only an
// extension module (built with cgo and UBX_MODULE) calls them; -O2 because
// a build that sets CGO_CFLAGS (Python's include directory) replaces cgo's
// default "-g -O2", and the C half's fast paths would otherwise be
// compiled unoptimised. A call of an undeclared function is an error, not
// the warning of older compilers: it would be compiled with the wrong
// types and crash at run time.

// #cgo CFLAGS: -O2 -Werror=implicit-function-declaration
// #include "ubx.h"
// void ubx_set_error(void *exc);
import "C"

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
)

// errorOf is the error of an exception C took (a new reference).
func errorOf(exc unsafe.Pointer) error {
	var err error
	_ = ext.py.DoHeld(func(g *pybridge.GIL) error { err = g.ErrorOf(pybridge.UnsafeObject(uintptr(exc))); return nil })
	return err
}

// raise hands C err's Python exception to raise once Go has returned (a
// Python exception pending when Do ends would be taken as Do's own error).
// The caller returns failure to C.
func raise(err error) {
	_ = ext.py.DoHeld(func(g *pybridge.GIL) error {
		exc := moduleException(g, err)
		if exc.Ptr() == 0 {
			exc = g.ExceptionOf(err)
		}
		C.ubx_set_error(cmem.Ptr(exc.Ptr()))
		return nil
	})
}

// moduleException is the exception of the module's own that err is raised
// as (NewException), a new reference; no object when err is none of them.
func moduleException(g *pybridge.GIL, err error) pybridge.Object {
	k := ext.mod.exceptionFor(err)
	if k < 0 || k >= len(ext.excs) || ext.excs[k].typ == 0 {
		return pybridge.Object{}
	}
	msg, e := g.FromGo(errkind.Message(err))
	if e != nil {
		return g.ExceptionOf(e)
	}
	defer g.DecRef(msg)
	exc, e := g.Call(pybridge.UnsafeObject(ext.excs[k].typ), msg)
	if e != nil {
		return g.ExceptionOf(e) // what making it raised (MemoryError), as itself
	}
	g.ReleaseError(err) // what err held of Python (an exception it wraps) goes now
	return exc
}

// guard runs the body of an export: a panic is recovered, counted and
// logged (boundary), and raised as RuntimeError; an error is raised. It
// reports whether the body succeeded.
func guard(where string, fn func() error) (ok bool) {
	goCalls.Add(1)
	var err error
	func() {
		defer boundary.Recover(where, &err)
		boundary.Check(where)
		err = fn()
	}()
	if err != nil {
		raise(err)
		return false
	}
	return true
}

func status(ok bool) C.int {
	if ok {
		return 0
	}
	return -1
}

// forkSkips is what a forked child skipped (tests).
func forkSkips() int64 { return int64(C.ubx_fork_skips()) }
