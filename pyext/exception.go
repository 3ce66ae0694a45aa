package pyext

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
)

// NewException adds an exception class of the module's own, as nanobind's
// nb::exception and PyO3's create_exception! do: Python code catches it as
// mymod.Name (and as base, which it derives from), and a Go function's
// error of type E is raised as it, with the error's message. base is a
// built-in exception's name ("ValueError", "KeyError", ...; "" is
// Exception) or the name of an exception the module added before (an
// error hierarchy of its own). E is a concrete error type, or an interface
// that error types implement (not error itself, which every error is).
//
// An error is raised as the module's exception when a link of its chain
// (errors.Unwrap, outermost first) has type E, before any link that states
// an error kind of its own (pyext.ValueError, usm.ErrValue, ...) or is a
// Python exception, which keep their meaning; of several exceptions whose
// types a link has, the one added first. ExampleNewException shows one.
func NewException[E error](m *Module, name, doc, base string) {
	t := reflect.TypeFor[E]()
	var errs []string
	if err := nameError("exception", name); err != nil {
		m.errs = append(m.errs, err)
		return
	}
	if p := docProblem(doc); p != "" {
		errs = append(errs, "its doc "+p)
	}
	if t == reflect.TypeFor[error]() {
		errs = append(errs, "its Go type is error, which every error is: name an error type of the module's own")
	}
	e := &exception{name: name, doc: doc, typ: t, base: base, baseExc: -1}
	if e.base == "" {
		e.base = "Exception"
	}
	for i, o := range m.excs {
		if o.name == e.base {
			e.baseExc = i
		}
		if o.typ == t {
			errs = append(errs, "Go type "+t.String()+" is exception "+o.name+" already")
		}
	}
	if e.baseExc < 0 && !slices.Contains(builtinExceptions, e.base) {
		errs = append(errs, "base "+e.base+" is no built-in exception (Exception, ValueError, ...) and no exception the module added before")
	}
	if len(errs) > 0 {
		m.errs = append(m.errs, fmt.Errorf("exception %s: %s", name, strings.Join(errs, "; ")))
		return
	}
	m.excs = append(m.excs, e)
}

// exception is an exception class of the module (NewException).
type exception struct {
	name, doc string
	base      string       // a built-in exception's name, or the module's exception baseExc
	baseExc   int          // the index of the module's exception it derives from; -1 for a built-in
	typ       reflect.Type // E
}

// matches reports whether err itself (not what it wraps) has e's type.
func (e *exception) matches(err error) bool {
	t := reflect.TypeOf(err)
	if e.typ.Kind() == reflect.Interface {
		return t.Implements(e.typ)
	}
	return t == e.typ
}

// exceptionFor is the module's exception err is raised as (its index in
// m.excs), or -1: the first link of err's chain of a type NewException
// named, before any link that states an error kind or is a Python
// exception.
func (m *Module) exceptionFor(err error) int {
	if m == nil || len(m.excs) == 0 {
		return -1
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		for i, x := range m.excs {
			if x.matches(e) {
				return i
			}
		}
		if _, ok := e.(*pybridge.Exception); ok || errkind.OwnKind(e) != nil { //nolint:errorlint // this link of the chain
			return -1
		}
	}
	return -1
}

// builtinExceptions are the built-in exceptions a module's exception may
// derive from: Exception and its subclasses that CPython 3.10 to 3.15 all
// have (the warnings aside).
var builtinExceptions = []string{
	"Exception", "ArithmeticError", "AssertionError", "AttributeError", "BufferError", "EOFError",
	"FloatingPointError", "ImportError", "IndexError", "KeyError", "LookupError", "MemoryError",
	"ModuleNotFoundError", "NameError", "NotImplementedError", "OSError", "OverflowError",
	"RecursionError", "ReferenceError", "RuntimeError", "StopIteration", "TimeoutError", "TypeError",
	"UnicodeError", "ValueError", "ZeroDivisionError", "ConnectionError", "FileExistsError",
	"FileNotFoundError", "PermissionError", "BlockingIOError", "InterruptedError", "IsADirectoryError",
	"NotADirectoryError", "ProcessLookupError", "ChildProcessError", "BrokenPipeError",
	"ConnectionAbortedError", "ConnectionRefusedError", "ConnectionResetError", "UnboundLocalError",
	"UnicodeDecodeError", "UnicodeEncodeError", "UnicodeTranslateError",
}

// IndexError is an error raised in Python as IndexError: a __getitem__'s
// index out of range (which also ends a for loop over the object, Python's
// sequence protocol). A mapping's KeyError, or an IndexError of the
// module's own, is NewException's with that base.
func IndexError(format string, args ...any) error {
	return &pybridge.Exception{Type: "IndexError", Message: fmt.Sprintf(format, args...)}
}
