package pybridge

import (
	"errors"
	"strings"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// Exception is a Python exception seen from Go.
type Exception struct {
	Type    string // qualified type name: "ValueError", "dpctl._sycl_queue.SyclQueueCreationError"
	Message string // str(exception)
	Op      string // what Go was doing, if known
	kind    *errkind.Kind
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
// (subclasses included); other exceptions match no kind.
func (e *Exception) Is(target error) bool { return e.kind != nil && target == error(e.kind) }

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
// it into an *Exception. If none is pending it returns a SystemError-like
// error: a C API call failed without saying why.
func (g *GIL) fetch(op string) error {
	a := g.api()
	t, v := a.ErrTake()
	if t == 0 {
		return &Exception{Type: "SystemError", Message: "a C API call failed without setting an exception", Op: op}
	}
	defer a.DecRef(t)
	defer a.DecRef(v)
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
	return e
}

// typeName returns module.qualname of a type object, without "builtins.".
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
	return name
}

// Raise sets the Python exception for a Go error, so that a function
// called from Python can return NULL: an *Exception keeps its class if it
// is a built-in one; any other error becomes the class
// usm.PythonException names for it (BufferError, ValueError, TypeError,
// AttributeError, OverflowError, MemoryError, NotImplementedError,
// RuntimeError).
func (g *GIL) Raise(err error) {
	if err == nil {
		return
	}
	a := g.api()
	name := usm.PythonException(err)
	var pe *Exception
	if errors.As(err, &pe) {
		if _, ok := a.Exc[pe.Type]; ok {
			name = pe.Type
		}
	}
	exc, ok := a.Exc[name]
	if !ok {
		exc = a.Exc["RuntimeError"]
	}
	a.ErrSetString(exc, err.Error())
}
