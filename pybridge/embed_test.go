package pybridge

import (
	"errors"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

func TestEmbedEvalAndConvert(t *testing.T) {
	py := embedded(t)
	if py.runMode() != modeEmbedded || py.Version() == "" {
		t.Fatalf("mode %v version %q", py.runMode(), py.Version())
	}
	if got := evalGo(t, py, "(1, -2, 2**63, 'x', None, True, [1.5], {'a': 1})"); !equalAny(got, []any{int64(1), int64(-2), uint64(1 << 63), "x", nil, true, []any{1.5}, map[string]any{"a": int64(1)}}) {
		t.Fatalf("got %#v", got)
	}
	// The venv's site-packages are on sys.path: numpy comes from there.
	if f := evalGo(t, py, "__import__('numpy').__file__").(string); !contains(f, "site-packages") {
		t.Fatalf("numpy from %s", f)
	}
}

func TestExceptionsBecomeTypedErrors(t *testing.T) {
	py := embedded(t)
	cases := []struct {
		code, typ string
		kind      error
	}{
		{"int('x')", "ValueError", usm.ErrValue},
		{"1 + 'a'", "TypeError", usm.ErrType},
		{"memoryview(b'a').__dlpack__()", "AttributeError", usm.ErrAttribute},
		{"__import__('no_such_module_xyz')", "ModuleNotFoundError", nil},
		{"(_ for _ in ()).throw(BufferError('b'))", "BufferError", usm.ErrBuffer},
	}
	for _, c := range cases {
		err := py.Do(func(g *GIL) error { o, err := g.Eval(c.code); g.DecRef(o); return err })
		var pe *Exception
		if !errors.As(err, &pe) || pe.Type != c.typ {
			t.Errorf("%s: got %v, want %s", c.code, err, c.typ)
			continue
		}
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%s: %v does not match %v", c.code, err, c.kind)
		}
		if c.kind == nil && errors.Is(err, usm.ErrValue) {
			t.Errorf("%s: %v should match no kind", c.code, err)
		}
	}
}

func TestGoErrorsRaiseTheRightException(t *testing.T) {
	py := embedded(t)
	for _, c := range []struct {
		err       error
		want, msg string // the message leaves the Go op out (errkind.Message)
	}{
		{errkind.New(errkind.Buffer, "op", "x"), "BufferError", "x"},
		{errkind.New(errkind.Value, "op", "x"), "ValueError", "x"},
		{errkind.New(errkind.Type, "op", "x"), "TypeError", "x"},
		{errkind.New(errkind.Attribute, "op", "x"), "AttributeError", "x"},
		{errors.New("plain"), "RuntimeError", "plain"},
	} {
		err := py.Do(func(g *GIL) error {
			g.raise(c.err)
			return g.fetch("")
		})
		var pe *Exception
		if !errors.As(err, &pe) || pe.Type != c.want || pe.Message != c.msg {
			t.Errorf("%v: raised %v, want %s: %s", c.err, err, c.want, c.msg)
		}
	}
}

// Many goroutines enter the interpreter at once; each entry locks its OS
// thread and takes the GIL.
func TestConcurrentEntries(t *testing.T) {
	py := embedded(t)
	run(t, py, `
class Obj:
    def __init__(self, n): self.n = n
    @property
    def __sycl_usm_array_interface__(self):
        return {"data": (4096 * (self.n + 1), False), "shape": (self.n, 2), "strides": None,
                "typestr": "|f4", "version": 1, "syclobj": "opencl:cpu", "offset": 0}
objs = [Obj(n) for n in range(16)]
`)
	inParallel(t, 16, func(n int) error {
		for range 200 {
			err := py.Do(func(g *GIL) error {
				o, err := g.Eval("objs[" + itoa(n) + "]")
				if err != nil {
					return err
				}
				defer g.DecRef(o)
				s, err := g.readSUAI(o)
				if err != nil {
					return err
				}
				defer s.Release(g)
				in, err := usm.ParseFields(s)
				if err != nil {
					return err
				}
				if in.Shape[0] != int64(n) || in.Data != uintptr(4096*(n+1)) {
					return errors.New("wrong SUAI")
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func TestReadSUAIErrors(t *testing.T) {
	py := embedded(t)
	run(t, py, `
class NoSUAI: pass
class NotDict:
    __sycl_usm_array_interface__ = [1]
class Raises:
    @property
    def __sycl_usm_array_interface__(self): raise KeyError("boom")
class BadVersion:
    __sycl_usm_array_interface__ = {"data": (8, False), "shape": (1,), "typestr": "|u1", "version": 0, "syclobj": "cpu"}
class FloatOffset:
    __sycl_usm_array_interface__ = {"data": (8, False), "shape": (1,), "typestr": "|u1", "version": 1, "offset": 1.5, "syclobj": "cpu"}
class NegPtr:
    __sycl_usm_array_interface__ = {"data": (-8, False), "shape": (1,), "typestr": "|u1", "version": 1, "syclobj": "cpu"}
class HugePtr:
    __sycl_usm_array_interface__ = {"data": (2**70, False), "shape": (1,), "typestr": "|u1", "version": 1, "syclobj": "cpu"}
class NoSyclobj:
    __sycl_usm_array_interface__ = {"data": (8, False), "shape": (1,), "typestr": "|u1", "version": 1}
class NpShape:
    __sycl_usm_array_interface__ = {"data": (8, False), "shape": (__import__("numpy").int64(3),), "typestr": "|u1", "version": 1, "syclobj": "cpu"}
`)
	for _, c := range []struct {
		cls  string
		kind error
	}{
		{"NoSUAI", usm.ErrValue}, {"NotDict", usm.ErrValue}, {"Raises", nil},
		{"BadVersion", usm.ErrValue}, {"FloatOffset", usm.ErrType}, {"NegPtr", usm.ErrOverflow},
		{"HugePtr", usm.ErrOverflow}, {"NoSyclobj", usm.ErrValue}, {"NpShape", nil},
	} {
		err := py.Do(func(g *GIL) error {
			o, err := g.Eval(c.cls + "()")
			if err != nil {
				return err
			}
			defer g.DecRef(o)
			s, err := g.readSUAI(o)
			if err != nil {
				return err
			}
			defer s.Release(g)
			_, err = usm.ParseFields(s)
			return err
		})
		switch {
		case c.cls == "Raises":
			var pe *Exception
			if !errors.As(err, &pe) || pe.Type != "KeyError" {
				t.Errorf("%s: %v, want the getter's KeyError", c.cls, err)
			}
		case c.kind == nil:
			if err != nil {
				t.Errorf("%s: %v", c.cls, err)
			}
		case !errors.Is(err, c.kind):
			t.Errorf("%s: %v, want %v (%s)", c.cls, err, c.kind, usm.PythonException(c.kind))
		}
	}
}

func equalAny(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalAny(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !equalAny(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
