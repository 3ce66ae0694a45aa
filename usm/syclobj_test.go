package usm

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// The syclobj field's values, moved here from package syclobj with
// FromValue and Resolve (syclobjFromValue, resolveSyclobj).

func TestSyclobjFromValue(t *testing.T) {
	ctx := syclobj.UnsafeContextRef(0x1000)
	q := syclobj.UnsafeQueueRef(0x2000)
	sel := syclobj.MustParseSelector("gpu")

	t.Run("string", func(t *testing.T) {
		o, err := syclobjFromValue("opencl:cpu:0")
		require.NoError(t, err)
		sel, ok := o.(syclobj.Selector)
		require.True(t, ok, "got %T", o)
		assert.Equal(t, "opencl:cpu:0", sel.String())
		assert.Equal(t, []syclobj.Filter{{Backend: syclobj.OpenCL, Type: syclobj.CPU, Number: 0}}, sel.Filters())
	})
	t.Run("malformed string", func(t *testing.T) {
		o, err := syclobjFromValue("gpu:opencl")
		require.Error(t, err)
		assert.Nil(t, o)
		var se *syclobj.SelectorError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "gpu:opencl", se.Selector)
		assert.ErrorIs(t, err, ErrValue)
	})
	t.Run("empty string", func(t *testing.T) {
		o, err := syclobjFromValue("")
		require.Error(t, err)
		assert.Nil(t, o)
		var se *syclobj.SelectorError
		require.ErrorAs(t, err, &se)
		assert.ErrorIs(t, err, ErrValue)
	})
	t.Run("ContextRef", func(t *testing.T) {
		o, err := syclobjFromValue(ctx)
		require.NoError(t, err)
		assert.Equal(t, syclobj.Obj(ctx), o)
	})
	t.Run("QueueRef", func(t *testing.T) {
		o, err := syclobjFromValue(q)
		require.NoError(t, err)
		assert.Equal(t, syclobj.Obj(q), o)
	})
	t.Run("Selector", func(t *testing.T) {
		sel := syclobj.MustParseSelector("gpu")
		o, err := syclobjFromValue(sel)
		require.NoError(t, err)
		assert.Equal(t, syclobj.Obj(sel), o)
	})
	t.Run("CapsuleSource", func(t *testing.T) {
		calls := 0
		cs := syclobj.FromCapsule(func() (syclobj.Obj, error) { calls++; return q, nil })
		o, err := syclobjFromValue(cs)
		require.NoError(t, err)
		_, ok := o.(capsuleSource)
		assert.True(t, ok, "got %T", o)
		assert.Equal(t, 0, calls, "FromValue must not call _get_capsule")
	})

	refused := []struct {
		name string
		v    any
		msg  string
	}{
		{"nil", nil, "syclobj is required (a filter string, SyclContext, SyclQueue or their capsules)"},
		{"int", 3, "syclobj 3: unsupported type int (want a filter string, SyclContext, SyclQueue or their capsules)"},
		{"uintptr", uintptr(0x1000), "unsupported type uintptr"},
		{"bytes", []byte("gpu"), "unsupported type []uint8"},
		{"named string", namedString("gpu"), "unsupported type usm.namedString"},
		{"pointer to context ref", &ctx, "unsupported type *syclobj.ContextRef"},
		{"pointer to queue ref", &q, "unsupported type *syclobj.QueueRef"},
		{"pointer to selector", &sel, "unsupported type *syclobj.Selector"},
		{"bool", true, "unsupported type bool"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			o, err := syclobjFromValue(tt.v)
			require.Error(t, err)
			assert.Nil(t, o)
			var e *syclobjError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.v, e.Value)
			assert.True(t, errors.Is(err, ErrValue))
			assert.False(t, errors.Is(err, ErrType))
			assert.Equal(t, "ValueError", PythonException(err))
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

// namedString is a string type that is not string, like a str subclass
// (which dpctl also refuses).
type namedString string

func TestResolveSyclobj(t *testing.T) {
	ctx := syclobj.UnsafeContextRef(0x1000)
	q := syclobj.UnsafeQueueRef(0x2000)

	t.Run("non-capsule values are unchanged", func(t *testing.T) {
		for _, o := range []syclobj.Obj{ctx, q, syclobj.MustParseSelector("opencl:cpu")} {
			got, err := resolveSyclobj(o)
			require.NoError(t, err)
			assert.Equal(t, o, got)
		}
	})
	t.Run("QueueRef", func(t *testing.T) {
		calls := 0
		cs := syclobj.FromCapsule(func() (syclobj.Obj, error) { calls++; return q, nil })
		for i := 1; i <= 2; i++ {
			got, err := resolveSyclobj(cs)
			require.NoError(t, err)
			require.IsType(t, syclobj.QueueRef{}, got)
			assert.Equal(t, uintptr(0x2000), got.(syclobj.QueueRef).Pointer())
			assert.Equal(t, i, calls, "a fresh capsule is requested on every Resolve")
		}
	})
	t.Run("ContextRef", func(t *testing.T) {
		cs := syclobj.FromCapsule(func() (syclobj.Obj, error) { return ctx, nil })
		got, err := resolveSyclobj(cs)
		require.NoError(t, err)
		assert.Equal(t, syclobj.Obj(ctx), got)
	})

	refused := []struct {
		name string
		get  func() (syclobj.Obj, error)
		msg  string
	}{
		{"Selector", func() (syclobj.Obj, error) { return syclobj.MustParseSelector("gpu"), nil },
			"_get_capsule returned syclobj.Selector, want a SyclContextRef or SyclQueueRef capsule"},
		{"nil", func() (syclobj.Obj, error) { return nil, nil },
			"_get_capsule returned <nil>, want a SyclContextRef or SyclQueueRef capsule"},
		{"nested CapsuleSource", func() (syclobj.Obj, error) {
			return syclobj.FromCapsule(func() (syclobj.Obj, error) { return q, nil }), nil
		}, "want a SyclContextRef or SyclQueueRef capsule"},
		{"ReadError", func() (syclobj.Obj, error) {
			return nil, &ReadError{Kind: ErrValue, Found: "_get_capsule()", Err: errors.New("capsule already used")}
		}, "it gives no SYCL context or queue: _get_capsule(): capsule already used"},
		{"ReadError with a value", func() (syclobj.Obj, error) {
			return q, &ReadError{Kind: ErrValue, Found: "_get_capsule() returned int, not a capsule"}
		}, "it gives no SYCL context or queue: _get_capsule() returned int, not a capsule"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			cs := syclobj.FromCapsule(tt.get)
			got, err := resolveSyclobj(cs)
			require.Error(t, err)
			assert.Nil(t, got)
			var e *syclobjError
			require.ErrorAs(t, err, &e)
			assert.True(t, errors.Is(err, ErrValue))
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	// A ReadError's cause stays reachable and lends no second kind.
	cause := errkind.New(errkind.Type, "pybridge.SUAI", "its capsule is named \"x\"")
	_, err := resolveSyclobj(syclobj.FromCapsule(func() (syclobj.Obj, error) {
		return nil, &ReadError{Kind: ErrValue, Found: "_get_capsule()", Err: cause}
	}))
	var e *errkind.Error
	require.ErrorAs(t, err, &e)
	assert.Same(t, cause, e)
	assert.True(t, errors.Is(err, ErrValue))
	assert.False(t, errors.Is(err, ErrType), "the cause's kind leaks through")
	assert.Equal(t, "it gives no SYCL context or queue: _get_capsule(): its capsule is named \"x\"", errkind.Message(err))
	// Any other error is the source's own (an exception _get_capsule
	// raised): it is returned as it is, as dpctl lets it through.
	own := errors.New("KeyError: 'none'")
	_, err = resolveSyclobj(syclobj.FromCapsule(func() (syclobj.Obj, error) { return nil, own }))
	assert.Same(t, own, err)
}

// childEnv selects the case a child process of a crash-class test runs.
const childEnv = "USMBRIDGE_USM_SYCLOBJ_CHILD"

// A *syclobjError's message names a slice or map by its type: fmt followed a
// value that contains itself until the stack overflowed. Run in a child
// process, so that a regression fails the test instead of the binary.
func TestSyclobjErrorOfValueThatContainsItself(t *testing.T) {
	if os.Getenv(childEnv) == "cyclic" {
		s := []any{nil}
		s[0] = s
		m := map[string]any{}
		m["m"] = m
		for _, v := range []any{s, m, &s} {
			_, err := syclobjFromValue(v)
			fmt.Println(err.Error())
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSyclobjErrorOfValueThatContainsItself$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=cyclic")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child failed:\n%.3000s", out)
	for _, want := range []string{"syclobj of type []interface {}: unsupported type []interface {}",
		"syclobj of type map[string]interface {}: unsupported type", "syclobj of type *[]interface {}: unsupported type"} {
		assert.Contains(t, string(out), want)
	}
}
