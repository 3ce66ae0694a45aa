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

// An exception a syclobj's _get_capsule raises is the import's error as
// it is, not wrapped in one of usmbridge's: dpctl lets it through, and
// raised again it is the same object (python/tests/test_hostile.py holds
// the identity from Python).
func TestGetCapsuleExceptionIsTheError(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, `
x_gc = dpt.arange(16, dtype='f4', sycl_queue=q)
class Nope(Exception): pass
class Duck:
    def _get_capsule(self): raise Nope("no capsule today")
class ViewGC:
    @property
    def __sycl_usm_array_interface__(self): return dict(x_gc.__sycl_usm_array_interface__, syclobj=Duck())
`)
	err := py.Do(func(g *GIL) error {
		o, err := g.Eval("ViewGC()")
		if err != nil {
			t.Fatal(err)
		}
		defer g.DecRef(o)
		arr, err := g.AsArray(o, nil)
		if err == nil {
			arr.Owner.Release()
		}
		return err
	})
	pe, ok := err.(*Exception) //nolint:errorlint // the error itself, not one it wraps
	if !ok || !strings.HasSuffix(pe.Type, "Nope") || pe.Message != "no capsule today" {
		t.Fatalf("%v (%T): want the Nope _get_capsule raised, as it is", err, err)
	}
}

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
		{"a _get_capsule that returns no capsule", "View(syclobj=Duck(lambda: 5))", false,
			"", func(t *testing.T, err error) {
				var be *usm.BindingError
				if !errors.As(err, &be) || !errors.Is(err, usm.ErrValue) || errors.Is(err, usm.ErrType) {
					t.Errorf("%v: want a *usm.BindingError that is ErrValue only", err)
				}
				if !strings.Contains(err.Error(), "_get_capsule() returned int, not a capsule") {
					t.Errorf("%v: does not say what _get_capsule returned", err)
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
