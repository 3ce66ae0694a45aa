package pybridge

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/pybridge/internal/extbridge"
)

// The extension module calls every operation without checking it: each
// must be set, for pybridge's own GIL and Object.
func TestExtbridgeOpsAllSet(t *testing.T) {
	ops, ok := extbridge.Get[GIL, Object]()
	require.True(t, ok, "pybridge did not publish extbridge.Ops[GIL, Object]")
	v := reflect.ValueOf(*ops)
	for i := range v.NumField() {
		assert.False(t, v.Field(i).IsNil(), "extbridge.Ops.%s is nil", v.Type().Field(i).Name)
	}
}

// AsArrayRead is AsArray for a caller that made the calls into Python
// itself (the extension's C half), with or without the itemgetter's tuple;
// its Ref is an interface: an array whose syclobj is not a dpctl object
// gives a nil interface (not a typed nil *pyRef, which the extension's
// "syclobj != nil" would take for a reference), and a SyclQueue gives that
// very queue. Reading the attribute having raised is AsArray's error.
func TestExtbridgeAsArrayRead(t *testing.T) {
	py, _ := withDpctl(t)
	ops, _ := extbridge.Get[GIL, Object]()
	run(t, py, "x = dpt.arange(4, dtype='f4', sycl_queue=q)\n"+
		"class Named:\n    def __init__(self, a): self.a = a\n"+
		"    @property\n    def __sycl_usm_array_interface__(self):\n"+
		"        d = dict(self.a.__sycl_usm_array_interface__); d['syclobj'] = 'opencl:cpu'; return d\n"+
		"class OnQueue(Named):\n    @property\n    def __sycl_usm_array_interface__(self):\n"+
		"        d = dict(self.a.__sycl_usm_array_interface__); d['syclobj'] = q; return d\n")
	for _, c := range []struct {
		expr    string
		wantRef bool
	}{{"Named(x)", false}, {"OnQueue(x)", true}} {
		for _, withTuple := range []bool{false, true} {
			require.NoError(t, py.Do(func(g *GIL) error {
				o, err := g.Eval(c.expr)
				if err != nil {
					return err
				}
				defer g.DecRef(o)
				want, err := g.AsArray(o, nil)
				if err != nil {
					return err
				}
				defer want.Owner.Release()
				a := g.api()
				d := a.GetAttrC(o.p, cSUAI)
				require.NotZero(t, d)
				defer a.DecRef(d)
				n, got := a.DictLen(d), uintptr(0)
				if withTuple {
					getters := ops.SUAIGetters(g)
					got = a.CallOneArg(getters[min(n, len(getters)-1)], d)
					require.NotZero(t, got)
					defer a.DecRef(got)
				}
				arr, so, err := ops.AsArrayRead(g, o, d, got, n)
				if err != nil {
					return err
				}
				defer arr.Owner.Release()
				assert.Equal(t, want.Shape, arr.Shape)
				assert.Equal(t, want.Data, arr.Data)
				assert.Equal(t, want.Memory, arr.Memory)
				if !c.wantRef {
					// so == nil, not assert.Nil, which also passes a typed nil.
					assert.True(t, so == nil, "%s: syclobj %#v, want a nil interface", c.expr, so)
					return nil
				}
				require.NotNil(t, so, "%s: syclobj", c.expr)
				defer so.ReleaseHeld(g)
				q, err := g.Eval("q")
				if err != nil {
					return err
				}
				defer g.DecRef(q)
				assert.Equal(t, q.p, ops.Ptr(so.Object()), "%s: the Ref is not the queue", c.expr)
				return nil
			}))
		}
	}
	require.NoError(t, py.Do(func(g *GIL) error {
		o, err := g.Eval("object()")
		if err != nil {
			return err
		}
		defer g.DecRef(o)
		_, wantErr := g.AsArray(o, nil)
		require.Zero(t, g.api().GetAttrC(o.p, cSUAI)) // raises AttributeError, left set
		_, _, err = ops.AsArrayRead(g, o, 0, 0, 0)
		require.Error(t, err)
		assert.Equal(t, wantErr.Error(), err.Error())
		assert.Zero(t, g.api().ErrOccurred(), "the exception is taken")
		return nil
	}))
}
