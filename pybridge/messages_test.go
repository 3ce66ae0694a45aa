package pybridge

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// goName finds a Go package of this module qualified by an identifier, or a
// package's label leading a message or a cause (python/tests/test_messages.py
// has the same check for every message Python raises).
var goName = regexp.MustCompile(`\b(?:pybridge|dlpack|usm|pyext|errkind|typestr|dtype|cpu|opencl|levelzero|syclobj)\.\w` +
	`|\bdpctl\.(?:Open|BindRef|Alloc|Queue|DLPackDevice)\b|(?:^|: )(?:pybridge|dlpack|usm|pyext|syclobj|dpctl|levelzero)(?: [a-z]+)?: |<nil>`)

// Errors keep their Go types and their Go text (the op first, as Go's
// convention has it), and the message Python reads of the same error, the
// one pybridge raises, names no Go operation (RATIONALE.md, "Error
// messages: Go's text and Python's").
func TestErrorsKeepTypesAndSpeakPythonWhenRaised(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, `
import ctypes
x = dpt.arange(16, dtype='f4', sycl_queue=q, usm_type='shared')
q.wait()
class View:
    def __init__(self, **kw):
        self.d = dict(x.__sycl_usm_array_interface__, syclobj=q)
        self.d.update(kw)
    @property
    def __sycl_usm_array_interface__(self): return self.d
class Duck:
    def __init__(self, get): self._get_capsule = get
class Nope(Exception): pass
def nope(): raise Nope("no capsule today")
host = np.arange(8.0)
class OnCUDA:
    def __dlpack_device__(self): return (1, 0)
    def __dlpack__(self, **kw):
        cap = host.__dlpack__(**kw)
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        # DLManagedTensorVersioned: version (8), manager_ctx, deleter, flags, then data, device_type
        ctypes.c_int32.from_address(get(cap, b"dltensor_versioned") + 40).value = 2
        return cap
`)
	for _, c := range []struct {
		name   string
		expr   string
		dlpack bool   // from_dlpack (else asarray)
		goOp   string // an op Error() keeps
		check  func(t *testing.T, err error)
	}{
		{"a pointer outside the queue's context", "View(data=(np.arange(4.0).ctypes.data, False))", false,
			"dpctl.BindRef: ", func(t *testing.T, err error) {
				var be *usm.BindingError
				if !errors.As(err, &be) || !errors.Is(err, usm.ErrValue) || errors.Is(err, usm.ErrType) {
					t.Errorf("%v: want a *usm.BindingError that is ErrValue only", err)
				}
			}},
		{"a _get_capsule that raises", "View(syclobj=Duck(nope))", false,
			"pybridge.SUAI: ", func(t *testing.T, err error) {
				var be *usm.BindingError
				var pe *Exception
				if !errors.As(err, &be) || !errors.Is(err, usm.ErrValue) || errors.Is(err, usm.ErrType) {
					t.Errorf("%v: want a *usm.BindingError that is ErrValue only", err)
				}
				if !errors.As(err, &pe) || !strings.HasSuffix(pe.Type, "Nope") || pe.Message != "no capsule today" {
					t.Errorf("%v: the exception _get_capsule raised is not reachable", err)
				}
			}},
		{"an extent past the allocation", "View(shape=(17,))", false,
			"", func(t *testing.T, err error) {
				var ee *usm.ExtentError
				if !errors.As(err, &ee) || !errors.Is(err, usm.ErrValue) {
					t.Errorf("%v: want a *usm.ExtentError", err)
				}
			}},
		{"a tensor on kDLCUDA", "OnCUDA()", true,
			"dlpack.Import: ", func(t *testing.T, err error) {
				var de *dlpack.Error
				if !errors.As(err, &de) || de.Op != "dlpack.Import" || !errors.Is(err, usm.ErrBuffer) || errors.Is(err, usm.ErrValue) {
					t.Errorf("%v: want a *dlpack.Error of dlpack.Import that is ErrBuffer only", err)
				}
			}},
		{"no __dlpack__", "object()", true,
			"pybridge.FromDLPack: ", func(t *testing.T, err error) {
				if !errors.Is(err, usm.ErrAttribute) {
					t.Errorf("%v: want ErrAttribute", err)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := py.Do(func(g *GIL) error {
				o, err := g.Eval(c.expr)
				if err != nil {
					t.Fatalf("%s: %v", c.expr, err)
				}
				defer g.DecRef(o)
				if c.dlpack {
					tns, err := g.FromDLPack(o, FromDLPackOptions{Copy: dlpack.CopyNever})
					if err == nil {
						tns.Release()
					}
					return err
				}
				arr, err := g.AsArray(o, nil)
				if err == nil {
					arr.Owner.Release()
				}
				return err
			})
			if err == nil {
				t.Fatal("no error")
			}
			c.check(t, err)
			if c.goOp != "" && !strings.Contains(err.Error(), c.goOp) {
				t.Errorf("Go's text %q lost the op %q", err, c.goOp)
			}
			msg := errkind.Message(err)
			if names := goName.FindAllString(msg, -1); len(names) != 0 {
				t.Errorf("Python's text %q names %q", msg, names)
			}
			var raised *Exception
			if e := py.Do(func(g *GIL) error { g.raise(err); return g.fetch("") }); !errors.As(e, &raised) ||
				raised.Type != usm.PythonException(err) || raised.Message != msg {
				t.Errorf("raised %v, want %s: %s", e, usm.PythonException(err), msg)
			}
		})
	}
}
