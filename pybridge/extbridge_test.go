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

// AsArrayKeepSyclobj's Ref is an interface: an array whose syclobj is not
// a dpctl object gives a nil interface (not a typed nil *pyRef, which the
// extension's "syclobj != nil" would take for a reference), and a
// SyclQueue gives that very queue.
func TestExtbridgeKeepSyclobj(t *testing.T) {
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
		require.NoError(t, py.Do(func(g *GIL) error {
			o, err := g.Eval(c.expr)
			if err != nil {
				return err
			}
			defer g.DecRef(o)
			arr, so, err := ops.AsArrayKeepSyclobj(g, o)
			if err != nil {
				return err
			}
			defer arr.Owner.Release()
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
