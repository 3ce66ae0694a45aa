package pybridge

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// Exception is a Python exception seen from Go. It holds a strong
// reference to the exception object itself (its traceback attached), so
// that GIL.raise gives Python back the very same object: a producer's
// BufferError subclass stays that subclass, a custom exception stays
// itself, and the traceback is kept. Type and Message are read once, when
// Go takes the exception, so that Error works on any goroutine.
//
// The reference is dropped after the Exception becomes unreachable: the
// garbage collector queues it, and the next entry into the interpreter
// (Python.Do or held, which hold the GIL) releases it. Nothing takes the
// GIL for it, so a collection during or after interpreter shutdown touches
// no Python state.
type Exception struct {
	Type    string // qualified type name: "ValueError", "dpctl._sycl_queue.SyclQueueCreationError"
	Message string // str(exception)
	Op      string // what Go was doing, if known
	kind    *errkind.Kind
	held    *heldException // nil when Go made the exception up (SystemError)
}

// heldException is the reference, separate from Exception so that a copy
// of an Exception value shares it instead of outliving it. p is 0 once
// the reference was dropped (GIL.ReleaseError, or after collection).
type heldException struct{ ref *excRef }

type excRef struct{ p atomic.Uintptr }

// take removes the reference from the heldException and returns it (0 if
// it was already given away); the caller now owns it.
func (h *heldException) take() uintptr {
	p := h.ref.p.Swap(0)
	if p != 0 {
		heldExceptions.Add(-1)
	}
	return p
}

func (e *Exception) Error() string {
	s := e.Type
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Op != "" {
		s = e.Op + ": " + s
	}
	return s
}

// Is matches the usm error kind of the exception's class: ValueError is
// usm.ErrValue, TypeError usm.ErrType, BufferError usm.ErrBuffer,
// AttributeError usm.ErrAttribute, OverflowError usm.ErrOverflow,
// MemoryError usm.ErrMemory, NotImplementedError usm.ErrNotSupported
// (subclasses included). Exceptions of other classes (KeyError,
// RuntimeError, ImportError, ...) match no kind: they are the one error
// of usmbridge with none, since no kind says what Python code raised, and
// usm.PythonException of one is "RuntimeError" while raising it back
// raises the exception itself.
func (e *Exception) Is(target error) bool { return e.kind != nil && target == error(e.kind) }

// Object returns a new reference to the exception object, or NULL for an
// exception Go made up (a C API call that failed without setting one) or
// one already released.
func (e *Exception) object(g *GIL) Object {
	if e.held == nil {
		return Object{}
	}
	p := e.held.ref.p.Load()
	if p == 0 {
		return Object{}
	}
	g.api().IncRef(p)
	return Object{p}
}

// ReleaseError drops the Python exception err carries at once, for a
// caller that holds the GIL and is done with err: it raised it (Raise
// gives Python its own reference) or handled it (a retry after a
// TypeError, a callback's error logged and dropped). The object, its
// traceback and the frames the traceback keeps alive then do not wait for
// Go's garbage collector, which Python's memory does not prompt. err still
// reads the same afterwards; raising it again raises a new exception of
// the same class and message. Errors without one are ignored.
func (g *GIL) ReleaseError(err error) {
	var pe *Exception
	if errors.As(err, &pe) && pe.held != nil {
		if p := pe.held.take(); p != 0 {
			g.api().DecRef(p)
		}
	}
}

// kindOrder: subclass checks, most specific first (ModuleNotFoundError is
// an ImportError; nothing here subclasses another listed class).
var kindOrder = []struct {
	exc  string
	kind *errkind.Kind
}{
	{"BufferError", errkind.Buffer}, {"TypeError", errkind.Type}, {"AttributeError", errkind.Attribute},
	{"OverflowError", errkind.Overflow}, {"MemoryError", errkind.Memory},
	{"NotImplementedError", errkind.NotSupported}, {"ValueError", errkind.Value},
}

// fetch takes the pending Python exception (which must be set) and turns
// it into an *Exception that holds it. If none is pending it returns a
// SystemError-like error: a C API call failed without saying why.
func (g *GIL) fetch(op string) error {
	a := g.api()
	t, v := a.ErrTake()
	if t == 0 {
		return &Exception{Type: "SystemError", Message: "a C API call failed without setting an exception", Op: op}
	}
	defer a.DecRef(t)
	e := &Exception{Op: op, Type: g.typeName(t)}
	for _, k := range kindOrder {
		if a.ErrGivenMatches(t, a.Exc[k.exc]) {
			e.kind = k.kind
			break
		}
	}
	if s := a.Str(v); s != 0 {
		e.Message, _ = a.UnicodeAsString(s)
		a.DecRef(s)
	}
	a.ErrClear()
	e.held = holdException(v)
	return e
}

// momentary reports whether err is a Python exception that tells of the
// moment it was raised in rather than of what was being done: a
// BaseException that is not an Exception (KeyboardInterrupt, SystemExit),
// a RecursionError or a MemoryError. Such an exception propagates as
// itself, never as a failure of the operation (dpctl "not available"),
// and a later attempt may well succeed.
func (g *GIL) momentary(err error) bool {
	var pe *Exception
	if !errors.As(err, &pe) {
		return false
	}
	o := pe.object(g)
	if o.isNil() {
		return false
	}
	defer g.DecRef(o)
	a := g.api()
	t := a.Type(o.p)
	return !a.ErrGivenMatches(t, a.Exc["Exception"]) || a.ErrGivenMatches(t, a.Exc["RecursionError"]) ||
		a.ErrGivenMatches(t, a.Exc["MemoryError"])
}

// holdException takes over a reference to an exception object until the
// heldException holding it is collected, unless Raise or release took it
// first.
func holdException(p uintptr) *heldException {
	h := &heldException{ref: &excRef{}}
	h.ref.p.Store(p)
	heldExceptions.Add(1)
	runtime.AddCleanup(h, releaseException, h.ref)
	return h
}

func releaseException(r *excRef) {
	if p := r.p.Swap(0); p != 0 {
		heldExceptions.Add(-1)
		releaseLater(p)
	}
}

// typeName returns module.qualname of a type object, without "builtins.",
// for messages: at most 200 bytes of it, as CPython's "%.200s" gives a
// type's name (errkind.Clip), since a class may be named anything.
func (g *GIL) typeName(t uintptr) string {
	a := g.api()
	name := ""
	if q := a.GetAttrString(t, "__qualname__"); q != 0 {
		name, _ = a.UnicodeAsString(q)
		a.DecRef(q)
	}
	a.ErrClear()
	if name == "" {
		name = typeObjectName(t)
	}
	if m := a.GetAttrString(t, "__module__"); m != 0 {
		if mod, ok := a.UnicodeAsString(m); ok && mod != "builtins" && mod != "" && !strings.Contains(name, ".") {
			name = mod + "." + name
		}
		a.DecRef(m)
	}
	a.ErrClear()
	return errkind.Clip(name)
}

// Raise sets the Python exception for a Go error, so that a function
// called from Python can return NULL. Python exceptions propagate:
//
//   - An error that is a Python exception (*Exception), possibly behind
//     wrappers that only add context (no error kind of their own, such as
//     fmt.Errorf's %w), raises that same exception object, with its class
//     and traceback.
//   - A Go error raises the class its kind names (the outermost usm.Err*
//     kind in its chain: BufferError, ValueError, TypeError,
//     AttributeError, OverflowError, MemoryError, NotImplementedError;
//     RuntimeError for none), with err's message as Python reads it: without
//     the Go operations its chain names (errkind.Message). If it wraps
//     a Python exception — a Go error that gave it another meaning — that
//     exception becomes the new one's __cause__.
func (g *GIL) raise(err error) {
	if err == nil {
		return
	}
	a := g.api()
	pe, same := errkind.Origin[*Exception](err)
	if pe != nil && same && pe.held != nil {
		if p := pe.held.ref.p.Load(); p != 0 {
			a.IncRef(p)
			a.ErrRestore(p)
			return
		}
	}
	var exc uintptr
	msg := errkind.Message(err)
	if pe != nil && same { // made up by Go, or already released: no object
		exc, msg = a.Exc[pe.Type], pe.Message
	} else if k := errkind.Of(err); k != nil {
		exc = a.Exc[k.Python()]
	} else {
		exc = a.Exc[usm.PythonException(err)]
	}
	if exc == 0 {
		exc = a.Exc["RuntimeError"]
	}
	a.ErrSetString(exc, msg)
	if pe != nil && pe.held != nil {
		if p := pe.held.ref.p.Load(); p != 0 {
			t, v := a.ErrTake()
			a.DecRef(t)
			a.IncRef(p)
			a.ExceptionSetCause(v, p) // steals the new reference
			a.ErrRestore(v)
		}
	}
}

// raisedAsItself returns the Python exception err is, when raising err
// raises that exception object as it is: err is an *Exception, or one
// behind wrappers that add only context (errkind.Origin). An error of
// usmbridge's (or a user's) that wraps an exception, giving it another
// meaning, is not: raised, it is a new exception whose __cause__ is the
// wrapped one.
func raisedAsItself(err error) (*Exception, bool) {
	pe, same := errkind.Origin[*Exception](err)
	if pe == nil || !same {
		return nil, false
	}
	return pe, true
}

// ExceptionOf returns the Python exception object for err, a new
// reference, without raising it: the very object for an *Exception (behind
// wrappers that add no error kind), else a new exception of the class err's
// kind names with err's message, chained to the Python exception it wraps.
// C code that Go returns to raises it (PyErr_SetRaisedException, or
// PyErr_Restore before 3.12). The reference err held goes to the result.
func (g *GIL) ExceptionOf(err error) Object {
	a := g.api()
	aside := g.setAside()
	g.raise(err)
	g.ReleaseError(err)
	t, v := a.ErrTake()
	if t != 0 {
		a.DecRef(t)
	}
	if aside != 0 {
		a.ErrRestore(aside)
	}
	return Object{v}
}

// ErrorOf is the inverse of ExceptionOf: the error of an exception object
// C code took (PyErr_GetRaisedException), an *Exception that holds the
// reference it is given (raising the error raises the same object).
func (g *GIL) ErrorOf(exc Object) error {
	if exc.p == 0 {
		return &Exception{Type: "SystemError", Message: "a C call failed without setting an exception"}
	}
	g.api().ErrRestore(exc.p)
	return g.fetch("")
}

func isPyKind(err error, k *errkind.Kind) bool {
	e, ok := err.(*Exception) //nolint:errorlint // err itself, not what it wraps
	return ok && e.kind == k
}
