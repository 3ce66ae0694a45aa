package pyapi

import (
	"runtime"

	"github.com/usmbridge/usmbridge/internal/cmem"
)

// Errors: the pending exception, taken, restored, raised and chained.

func (a *API) ErrOccurred() uintptr { return a.errOccurred.Call0() }
func (a *API) ErrClear()            { a.errClear.Call0() }

// ErrSetString raises exc with msg, every byte of it: PyErr_SetString
// reads a C string, which ends at the first NUL, and a decoding error of
// bytes that are not UTF-8 would replace the exception meant. So the
// message is decoded with its length, invalid bytes replaced (U+FFFD), and
// raised with PyErr_SetObject.
func (a *API) ErrSetString(exc uintptr, msg string) {
	b := cstr(msg)
	s := a.unicodeDecodeUTF8.Call3(p(b), uintptr(len(msg)), p(errorsReplace))
	runtime.KeepAlive(b)
	if s == 0 {
		return // MemoryError is set
	}
	a.errSetObject.Call2(exc, s)
	a.DecRef(s)
}

var errorsReplace = cstr("replace")

func (a *API) ErrWriteUnraisable(o uintptr) { a.errWriteUnraisable.Call1(o) }
func (a *API) ErrGivenMatches(given, exc uintptr) bool {
	return a.errGivenMatches.Call2(given, exc) != 0
}

// ErrTake removes the current exception and returns its type and value
// (new references; value may be 0 only if type is 0). It uses
// PyErr_GetRaisedException where present, PyErr_Fetch otherwise; then the
// traceback is attached to the value (__traceback__), as 3.12 keeps it, so
// that ErrRestore can raise the same exception with its traceback.
func (a *API) ErrTake() (typ, val uintptr) {
	if a.errGetRaised != 0 {
		v := a.errGetRaised.Call0()
		if v == 0 {
			return 0, 0
		}
		t := a.Type(v)
		a.IncRef(t)
		return t, v
	}
	// Out-parameters live in C memory: Go stacks may move during a call.
	blk := cmem.Alloc(24)
	defer cmem.Free(blk, 24)
	a.errFetch.Call3(blk, blk+8, blk+16)
	if *(*uintptr)(cmem.Ptr(blk)) == 0 {
		return 0, 0
	}
	a.errNormalize.Call3(blk, blk+8, blk+16)
	t, v, tb := *(*uintptr)(cmem.Ptr(blk)), *(*uintptr)(cmem.Ptr(blk + 8)), *(*uintptr)(cmem.Ptr(blk + 16))
	if v == 0 {
		v = a.None
		a.IncRef(v)
	}
	if tb != 0 {
		if v != a.None {
			a.exceptionSetTraceback.Call2(v, tb) // takes its own reference
		}
		a.DecRef(tb)
	}
	return t, v
}

// ErrRestore makes exc (an exception instance, as ErrTake returns it) the
// current exception, with the traceback it carries; it steals the
// reference to exc.
func (a *API) ErrRestore(exc uintptr) {
	if a.errSetRaised != 0 {
		a.errSetRaised.Call1(exc)
		return
	}
	t := a.Type(exc)
	a.IncRef(t)
	tb := a.exceptionGetTraceback.Call1(exc) // a new reference, or NULL
	a.errRestore.Call3(t, exc, tb)           // steals all three
}

// ExceptionSetCause sets exc.__cause__ = cause (and __suppress_context__);
// it steals the reference to cause.
func (a *API) ExceptionSetCause(exc, cause uintptr) { a.exceptionSetCause.Call2(exc, cause) }
