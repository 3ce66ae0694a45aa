package pybridge

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The memory reads pyapi uses instead of FFI calls must agree with the C
// API, and must be in use on the CPython the project supports.
func TestFastLayoutAgreesWithCAPI(t *testing.T) {
	py := embedded(t)
	require.NoError(t, py.Do(func(g *GIL) error {
		a := g.api()
		require.True(t, a.FastLayout(), "CPython %s: object layout check failed, every read is an FFI call", py.Version())
		tup, err := g.Eval("(1, 'a', None, (2, 3), [4])")
		require.NoError(t, err)
		defer g.DecRef(tup)
		lst, err := g.Eval("[10, 'b', (5,), 2**70]")
		require.NoError(t, err)
		defer g.DecRef(lst)
		empty, err := g.Eval("()")
		require.NoError(t, err)
		defer g.DecRef(empty)

		assert.Equal(t, a.Length(tup.p), a.SeqSize(tup.p))
		assert.Equal(t, a.Length(lst.p), a.SeqSize(lst.p))
		assert.Zero(t, a.SeqSize(empty.p))
		for i := range a.Length(tup.p) {
			assert.Equal(t, a.TupleGetItem(tup.p, i), a.TupleItem(tup.p, i), "tuple item %d", i)
		}
		for i := range a.Length(lst.p) {
			assert.Equal(t, a.ListGetItem(lst.p, i), a.ListItem(lst.p, i), "list item %d", i)
		}
		for _, o := range []uintptr{tup.p, lst.p, a.None, a.True, a.TupleItem(tup.p, 1)} {
			ty := a.Type(o)
			assert.Equal(t, a.TypeFlagsCall(ty), a.TypeFlags(ty), "tp_flags of %s", g.typeName(ty))
		}
		return nil
	}))
}

// dpctl's Cython C-API gives the same refs as addressof_ref(), in one C call.
func TestDpctlCAPIRefs(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, "ctx_capi = q.sycl_context")
	require.NoError(t, py.Do(func(g *GIL) error {
		ty := g.dpctlTypes()
		require.NotZero(t, ty.queueRef, "SyclQueue_GetQueueRef not found in dpctl._sycl_queue.__pyx_capi__")
		require.NotZero(t, ty.contextRef, "SyclContext_GetContextRef not found")
		for _, c := range []struct{ obj, want string }{{"q", "q.addressof_ref()"}, {"ctx_capi", "ctx_capi.addressof_ref()"}} {
			o, err := g.Eval(c.obj)
			require.NoError(t, err)
			want, err := g.Eval(c.want)
			require.NoError(t, err)
			w, err := g.goValue(want)
			require.NoError(t, err)
			s := &suaiDict{g: g}
			s.vals[keySyclobj] = o.p // borrowed: s is not released
			got, err := s.Syclobj()
			require.NoError(t, err)
			assert.EqualValues(t, w, got.(interface{ Pointer() uintptr }).Pointer(), c.obj)
			viaMethod, err := g.addressofRef(o.p)
			require.NoError(t, err)
			assert.EqualValues(t, w, viaMethod, c.obj)
			g.DecRef(o)
			g.DecRef(want)
		}
		return nil
	}))
}
