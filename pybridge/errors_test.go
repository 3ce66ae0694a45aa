package pybridge

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// raiseAndCatch gives err back to Python with Raise, catches what Python
// then has pending, and stores it in __main__ as name.
func raiseAndCatch(t *testing.T, g *GIL, err error, name string) *Exception {
	t.Helper()
	g.raise(err)
	var got *Exception
	if !errors.As(g.fetch(""), &got) {
		t.Fatalf("Raise(%v) set no exception", err)
	}
	o := got.object(g)
	defer g.DecRef(o)
	if err := g.SetMain(name, o); err != nil {
		t.Fatal(err)
	}
	return got
}

func truth(t *testing.T, g *GIL, expr string) bool {
	t.Helper()
	o, err := g.Eval(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	defer g.DecRef(o)
	return o.p == g.api().True
}

// A producer's exceptions come back to Python as the very same objects,
// with their class, message and traceback, while Go callers still see
// their kinds.
func TestExceptionsPropagateAsTheSameObject(t *testing.T) {
	py := embedded(t)
	run(t, py, `
import traceback
class MyBufferError(BufferError): pass
class Custom(Exception): pass
class Producer:
    def __init__(self, exc): self.exc = exc
    def __dlpack_device__(self): return (1, 0)
    def __dlpack__(self, **kw):
        global raised
        raised = self.exc
        raise raised
def frames(e): return [f.name for f in traceback.extract_tb(e.__traceback__)]
`)
	for _, c := range []struct {
		exc, typ, msg string
		kind          error
	}{
		{"MyBufferError('no export')", "__main__.MyBufferError", "no export", usm.ErrBuffer},
		{"Custom('mine')", "__main__.Custom", "mine", nil},
		{"TypeError('bad')", "TypeError", "bad", usm.ErrType},
	} {
		err := py.Do(func(g *GIL) error {
			x, err := g.Eval("Producer(" + c.exc + ")")
			if err != nil {
				return err
			}
			defer g.DecRef(x)
			_, err = g.FromDLPack(x, FromDLPackOptions{})
			var pe *Exception
			if !errors.As(err, &pe) || pe.Type != c.typ || pe.Message != c.msg {
				t.Errorf("%s: Go sees %v", c.exc, err)
				return nil
			}
			if c.kind != nil && !errors.Is(err, c.kind) || c.kind == nil && usm.PythonException(err) != "RuntimeError" {
				t.Errorf("%s: %v does not match %v", c.exc, err, c.kind)
			}
			for _, e := range []error{err, fmt.Errorf("context only: %w", err)} {
				got := raiseAndCatch(t, g, e, "got")
				if !truth(t, g, "got is raised") {
					t.Errorf("%s: Python got a different object (%v)", c.exc, got)
				}
				if !truth(t, g, "'__dlpack__' in frames(got)") {
					t.Errorf("%s: the producer's frame left the traceback", c.exc)
				}
				if !truth(t, g, "str(got) == "+quote(c.msg)) {
					t.Errorf("%s: message changed: %v", c.exc, got)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A Go error that gives a Python exception another meaning raises its own
// class and chains the original as __cause__.
func TestGoErrorChainsThePythonCause(t *testing.T) {
	py := embedded(t)
	run(t, py, "def lookup(): raise KeyError('k')")
	err := py.Do(func(g *GIL) error {
		f, err := g.Eval("lookup")
		if err != nil {
			return err
		}
		defer g.DecRef(f)
		_, perr := g.call(f, nil, nil)
		o := perr.(*Exception).object(g) //nolint:errorlint // call returns the *Exception itself
		defer g.DecRef(o)
		if err := g.SetMain("orig", o); err != nil {
			return err
		}
		wrapped := errkind.Wrap(errkind.Buffer, "op", "the producer failed", perr)
		got := raiseAndCatch(t, g, wrapped, "got")
		if got.Type != "BufferError" || got.Message != "the producer failed: KeyError: 'k'" {
			t.Errorf("raised %v", got)
		}
		if !truth(t, g, "got.__cause__ is orig and got.__suppress_context__") {
			t.Error("the Python exception is not the cause")
		}
		if !errors.Is(wrapped, usm.ErrBuffer) {
			t.Error("Go kind lost")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// raisedAsItself tells the exception Raise raises as that same object (an
// *Exception, behind context-only wrappers) from one a Go error gives
// another meaning (wrapped with a kind of its own), as raise decides.
func TestRaisedAsItself(t *testing.T) {
	py := embedded(t)
	require.NoError(t, py.Do(func(g *GIL) error {
		_, perr := g.Eval("{}['k']")
		require.Error(t, perr)
		defer g.ReleaseError(perr)
		pe := perr.(*Exception) //nolint:errorlint // Eval returns the *Exception itself
		for _, c := range []struct {
			name string
			err  error
			same bool
		}{
			{"the exception", perr, true},
			{"behind %w", fmt.Errorf("reading x: %w", perr), true},
			{"wrapped with a kind", errkind.Wrap(errkind.Value, "op", "the producer failed", perr), false},
			{"a Go error", errors.New("no exception"), false},
			{"nil", nil, false},
		} {
			got, same := raisedAsItself(c.err)
			assert.Equal(t, c.same, same, c.name)
			if c.same {
				assert.Same(t, pe, got, c.name)
			} else {
				assert.Nil(t, got, c.name)
			}
		}
		return nil
	}))
}

// An exception Go made up (a C call failed without setting one) is raised
// with its own message, not prefixed with its type.
func TestMadeUpExceptionMessage(t *testing.T) {
	py := embedded(t)
	err := py.Do(func(g *GIL) error {
		e := g.fetch("op") // nothing pending
		got := raiseAndCatch(t, g, e, "got")
		if got.Type != "SystemError" || !truth(t, g, "str(got) == 'a C API call failed without setting an exception'") {
			t.Errorf("raised %v", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The reference an *Exception holds goes once Go drops the error: the
// collector queues it (no GIL needed) and the next entry into the
// interpreter releases it.
func TestExceptionReferenceIsReleased(t *testing.T) {
	py := embedded(t)
	run(t, py, `
import weakref
class Big(Exception): pass
def boom(): raise Big()
`)
	before := heldExceptions.Load()
	err := py.Do(func(g *GIL) error {
		f, err := g.Eval("boom")
		if err != nil {
			return err
		}
		defer g.DecRef(f)
		for range 100 {
			_, perr := g.call(f, nil, nil)
			if perr == nil {
				return errors.New("boom did not raise")
			}
			_ = perr // dropped here
		}
		_, perr := g.call(f, nil, nil)
		o := perr.(*Exception).object(g) //nolint:errorlint // call returns the *Exception itself
		defer g.DecRef(o)
		wr, err := g.Eval("weakref.ref")
		if err != nil {
			return err
		}
		defer g.DecRef(wr)
		w, err := g.call(wr, []any{o}, nil)
		if err != nil {
			return err
		}
		defer g.DecRef(w)
		return g.SetMain("w", w)
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for heldExceptions.Load() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := heldExceptions.Load(); n > before {
		t.Fatalf("%d exception references still held after GC", n-before)
	}
	_ = py.Do(func(g *GIL) error {
		if !truth(t, g, "w() is None") {
			t.Error("the exception object is still alive after the next entry")
		}
		return nil
	})
	if nReleased.Load() != 0 {
		t.Errorf("%d references still queued", nReleased.Load())
	}
}

// An exception Go handled (the from_dlpack retry after a producer's
// TypeError) or is done with (ReleaseError) is let go at once: its
// traceback keeps the producer's frames alive, so waiting for Go's
// collector would keep arrays alive for as long as Go does not allocate.
func TestHandledExceptionsAreReleasedAtOnce(t *testing.T) {
	py := embedded(t)
	run(t, py, `
import numpy, weakref
class Legacy:
    """A pre-2023.12 producer: __dlpack__ takes no max_version."""
    def __init__(self): self.a = numpy.arange(4.0)
    def __dlpack_device__(self): return (1, 0)
    def __dlpack__(self, stream=None): return self.a.__dlpack__()
`)
	require.NoError(t, py.Do(func(g *GIL) error {
		before := heldExceptions.Load()
		x := eval(t, g, "Legacy()")
		defer g.DecRef(x)
		tensor, err := g.FromDLPack(x, FromDLPackOptions{})
		require.NoError(t, err)
		tensor.Release()
		assert.Equal(t, before, heldExceptions.Load(), "the TypeError that led to the retry is still held")

		_, err = g.Eval("[1][2]")
		require.Error(t, err)
		assert.Equal(t, before+1, heldExceptions.Load())
		got := raiseAndCatch(t, g, err, "first")
		assert.True(t, truth(t, g, "isinstance(first, IndexError)"), "%v", got)
		held := heldExceptions.Load() // raiseAndCatch holds what it caught
		g.ReleaseError(err)
		assert.Equal(t, held-1, heldExceptions.Load(), "ReleaseError let the exception go")
		assert.Equal(t, "list index out of range", err.(*Exception).Message, "the Go error still reads the same") //nolint:errorlint // Eval returns the *Exception itself
		raiseAndCatch(t, g, err, "second")
		assert.True(t, truth(t, g, "isinstance(second, IndexError) and second is not first and str(second) == str(first)"),
			"a released exception raises anew with its class and message")
		return nil
	}))
}
