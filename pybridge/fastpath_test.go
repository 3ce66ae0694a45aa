package pybridge

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// eval returns a new reference to the value of expr, failing the test on
// error.
func eval(t testing.TB, g *GIL, expr string) Object {
	t.Helper()
	o, err := g.Eval(expr)
	require.NoError(t, err, expr)
	return o
}

// On 3.10/3.11 reference counts move in memory; they must move exactly as
// Py_IncRef/Py_DecRef move them, and the last reference must deallocate.
func TestFastRefCountsAgreeWithCAPI(t *testing.T) {
	py := embedded(t)
	require.NoError(t, py.Do(func(g *GIL) error {
		a := g.api()
		minor := a.Minor()
		require.Positive(t, minor, "Py_GetVersion not parsed (%s)", py.Version())
		assert.Equal(t, a.FastLayout() && minor <= 11, a.FastRefs(), "CPython 3.%d", minor)
		require.NoError(t, g.Exec("class _RC:\n    def __del__(self): _rc_freed.append(1)\n_rc_freed = []\n_rc = _RC()"))
		o := eval(t, g, "_rc")
		base := g.refCount(o)
		a.IncRef(o.p)
		assert.Equal(t, base+1, g.refCount(o))
		a.IncRefCall(o.p)
		assert.Equal(t, base+2, g.refCount(o))
		a.DecRef(o.p)
		assert.Equal(t, base+1, g.refCount(o))
		a.DecRefCall(o.p)
		assert.Equal(t, base, g.refCount(o))
		a.IncRef(0) // NULL is ignored, as by Py_IncRef
		a.DecRef(0)
		require.NoError(t, g.Exec("del _rc"))
		require.Equal(t, 1, g.refCount(o), "only the test's reference is left")
		a.DecRef(o.p) // the last one: deallocates
		freed := eval(t, g, "len(_rc_freed)")
		n, _ := g.toInt(freed)
		g.DecRef(freed)
		assert.EqualValues(t, 1, n, "the object outlived its last reference")
		return nil
	}))
}

// LongValue reads exactly what PyLong_AsLongLong reads, for the exact
// ints of at most two digits, and declines everything else.
func TestFastLongsAgreeWithCAPI(t *testing.T) {
	py := embedded(t)
	require.NoError(t, py.Do(func(g *GIL) error {
		a := g.api()
		assert.Equal(t, a.FastLayout() && a.Minor() <= 11, a.FastLongs(), "CPython 3.%d", a.Minor())
		for _, c := range []struct {
			expr string
			fast bool
		}{
			{"0", true}, {"1", true}, {"-1", true}, {"255", true}, {"2**30-1", true}, {"2**30", true},
			{"-2**30", true}, {"2**40+12345", true}, {"-(2**40)", true}, {"2**60-1", true}, {"-(2**60-1)", true},
			{"0x7f12345678", true}, {"2**60", false}, {"-(2**60)", false}, {"2**63-1", false}, {"-(2**63)", false},
			{"True", false}, {"False", false}, {"type('I', (int,), {})(5)", false},
			{"__import__('enum').IntEnum('E', 'A B').B", false},
		} {
			o := eval(t, g, c.expr)
			v, ok := a.LongValue(o.p)
			want := a.LongAsInt64(o.p)
			require.Zero(t, a.ErrOccurred(), c.expr)
			assert.Equal(t, c.fast && a.FastLongs(), ok, c.expr)
			if ok {
				assert.Equal(t, want, v, c.expr)
			}
			g.DecRef(o)
		}
		return nil
	}))
	// What ToGo makes of ints is unchanged around the fast path's limits.
	assert.True(t, equalAny(evalGo(t, py, "(2**60-1, -(2**60-1), 2**60, 2**63, -(2**63), 7, True)"),
		[]any{int64(1<<60 - 1), -int64(1<<60 - 1), int64(1 << 60), uint64(1 << 63), int64(-1 << 63), int64(7), true}))
}

// DictLen and ASCII agree with PyObject_Size and PyUnicode_AsUTF8.
func TestFastDictLenAndASCIIAgreeWithCAPI(t *testing.T) {
	py := embedded(t)
	require.NoError(t, py.Do(func(g *GIL) error {
		a := g.api()
		assert.Equal(t, a.FastLayout() && a.Minor() <= 11, a.FastASCII(), "CPython 3.%d", a.Minor())
		assert.Equal(t, a.FastLayout(), a.FastDicts())
		for _, expr := range []string{"{}", "{'a': 1}", "dict.fromkeys(range(100))", "(lambda d: (d.pop(3), d)[1])(dict.fromkeys(range(9)))"} {
			d := eval(t, g, expr)
			assert.Equal(t, a.Length(d.p), a.DictLen(d.p), expr)
			g.DecRef(d)
		}
		for _, c := range []struct {
			expr  string
			ascii bool
		}{
			{"''", true}, {"'<f4'", true}, {"'opencl:cpu:0'", true}, {"'a' * 1000", true}, {"'x\\x00y'", true},
			{"'h\\u00e9'", false}, {"'\\U0001F600'", false}, {"type('S', (str,), {})('<f4')", false},
		} {
			o := eval(t, g, c.expr)
			p, n, ok := a.ASCII(o.p)
			assert.Equal(t, c.ascii && a.FastASCII(), ok, c.expr)
			if ok {
				assert.Equal(t, a.UnicodeUTF8(o.p), p, c.expr)
				assert.Equal(t, a.Length(o.p), n, c.expr)
			}
			s, ok := a.UnicodeAsString(o.p)
			assert.True(t, ok, c.expr)
			assert.Zero(t, a.ErrOccurred(), c.expr)
			// Every character, NULs included: a str cut at a NUL is another value.
			want := map[string]string{"'x\\x00y'": "x\x00y", "'h\\u00e9'": "h\u00e9", "'<f4'": "<f4"}
			if w, ok := want[c.expr]; ok {
				assert.Equal(t, w, s, c.expr)
			}
			g.DecRef(o)
		}
		return nil
	}))
}

func TestRefReleaseHeld(t *testing.T) {
	py := embedded(t)
	require.NoError(t, py.Do(func(g *GIL) error {
		o := eval(t, g, "object()")
		defer g.DecRef(o)
		base := g.refCount(o)
		r := g.newRef(o)
		require.True(t, r.Retain())
		assert.Equal(t, base+1, g.refCount(o))
		r.ReleaseHeld(g)
		assert.Equal(t, base+1, g.refCount(o), "not the last Go reference")
		r.ReleaseHeld(g)
		assert.Equal(t, base, g.refCount(o))
		r.ReleaseHeld(g)
		r.Release()
		assert.Equal(t, base, g.refCount(o), "extra releases are ignored")
		assert.False(t, r.Retain())
		return nil
	}))
}

// readSUAI reads the SUAI of the object expr evaluates to.
func readSUAI(t *testing.T, g *GIL, expr string) *suaiDict {
	t.Helper()
	o := eval(t, g, expr)
	defer g.DecRef(o)
	s, err := g.readSUAI(o)
	require.NoError(t, err, expr)
	return s
}

// One itemgetter call reads the dicts of the usual shapes; the others, and
// the dicts where it raises, are read key by key; the result is the same
// as ParseJSON's of the same dict.
func TestReadSUAIGetterAndFallback(t *testing.T) {
	py := embedded(t)
	run(t, py, `
import json
class D:
    def __init__(self, d): self.d = d
    @property
    def __sycl_usm_array_interface__(self): return self.d
class LoudDict(dict):
    def __getitem__(self, k): raise RuntimeError("PyDict_GetItemWithError never calls this")
full = {"data": (8, False), "shape": (3, 2), "strides": (2, 1), "typestr": "<f4", "offset": 1, "version": 1, "syclobj": "opencl:cpu"}
noff = {k: v for k, v in full.items() if k != "offset"}
cases = {
    "full": D(full),
    "no_offset": D(noff),
    "no_strides": D({k: v for k, v in full.items() if k != "strides"}),
    "extra": D(dict(full, extra=1)),
    "swapped": D(dict({k: v for k, v in full.items() if k != "syclobj"}, other=1)),
    "few": D({"data": (8, False), "shape": [4], "version": 1}),
    "subclass": D(LoudDict(full)),
    "strs": D(dict(full, typestr="h\u00e9llo", syclobj="level_zero:gpu")),
    "long_typestr": D(dict(noff, typestr="<M8[ns]")),
    "nul_typestr": D(dict(noff, typestr="<f4\x00junk")),
}
as_json = {n: json.dumps(dict(c.d)) for n, c in cases.items()}
`)
	require.NoError(t, py.Do(func(g *GIL) error {
		for name, viaGetter := range map[string]bool{
			"full": true, "no_offset": true, "no_strides": false, "extra": true, "swapped": false,
			"few": false, "subclass": false, "strs": true, "long_typestr": true, "nul_typestr": true,
		} {
			s := readSUAI(t, g, "cases['"+name+"']")
			assert.Zero(t, g.api().ErrOccurred(), name)
			assert.Equal(t, viaGetter, s.got != 0, "%s: read with one itemgetter call", name)
			in, err := usm.ParseFields(s)
			s.Release(g)
			js := evalGo(t, g.py, "as_json['"+name+"']").(string)
			want, wantErr := usm.ParseJSON([]byte(js))
			assert.Equal(t, exceptionName(wantErr), exceptionName(err), "%s: %v", name, err)
			assert.Equal(t, malformedField(wantErr), malformedField(err), "%s: %v", name, err)
			assert.Equal(t, want, in, name)
		}
		return nil
	}))
}

// malformedField is the Field of a *usm.MalformedError, or "".
func malformedField(err error) string {
	var me *usm.MalformedError
	if errors.As(err, &me) {
		return me.Field
	}
	return ""
}

// cachedQueue returns the ref pinned for the SyclQueue obj if the queue
// cache holds obj.
func cachedQueue(py *Python, obj Object) (ref uintptr, ok bool) {
	o, ok := py.dpQueues.lookupObj(obj.p)
	if !ok {
		return 0, false
	}
	return o.(syclobj.QueueRef).Pointer(), true
}

func queueCacheLen(py *Python) int {
	py.dpQueues.mu.Lock()
	defer py.dpQueues.mu.Unlock()
	return len(py.dpQueues.e)
}

// dropQueueCache empties the queue cache: every entry is unpinned and its
// reference given back. The caller holds the GIL.
func (py *Python) dropQueueCache(g *GIL) {
	c := &py.dpQueues
	c.mu.Lock()
	e := c.e
	c.e = nil
	c.mu.Unlock()
	for _, f := range e {
		dropEntry(g, f)
	}
}

// A cached queue binds as the uncached path does, for every USM kind (that
// a pinned ref binds as an unpinned one is dpctl's TestPinnedQueueBindsAsUnpinned).
func TestQueueCacheHitMatchesMiss(t *testing.T) {
	py, d := withDpctl(t)
	run(t, py, `
xs = {k: dpt.arange(16, dtype='f4', sycl_queue=q, usm_type=k) for k in ('device', 'shared', 'host')}
class ViaCapsule:
    def __init__(self, x): self.x = x
    @property
    def __sycl_usm_array_interface__(self):
        return dict(self.x.__sycl_usm_array_interface__, syclobj=q._get_capsule())
`)
	require.NoError(t, py.Do(func(g *GIL) error {
		py.dropQueueCache(g)
		qo := eval(t, g, "q")
		defer g.DecRef(qo)
		ref := syclobj.UnsafeQueueRef(uintptr(evalInt(t, g, "q.addressof_ref()")))
		for _, kind := range []string{"device", "shared", "host"} {
			x := eval(t, g, "xs['"+kind+"']")
			ptr := uintptr(evalInt(t, g, "xs['"+kind+"'].__sycl_usm_array_interface__['data'][0]"))

			py.dropQueueCache(g)
			base := g.refCount(qo)
			missInfo, missQ, ok, err := d.BindRef(ref, ptr)
			require.True(t, ok)
			require.NoError(t, err, kind)
			assert.Zero(t, queueCacheLen(py), "BindRef alone never caches")

			arr1, err := g.AsArray(x, nil) // caches q
			require.NoError(t, err, kind)
			cref, cached := cachedQueue(py, qo)
			require.True(t, cached, "%s: q not cached", kind)
			assert.Equal(t, ref.Pointer(), cref)
			assert.Equal(t, base+1, g.refCount(qo), "the entry holds one reference")

			hitInfo, hitQ, ok, err := d.BindRef(ref, ptr)
			require.True(t, ok)
			require.NoError(t, err, kind)
			assert.Equal(t, missInfo, hitInfo, kind)
			assert.Equal(t, map[string]usm.Kind{"device": usm.KindDevice, "shared": usm.KindShared, "host": usm.KindHost}[kind], hitInfo.Kind)
			assert.Same(t, arr1.Queue, hitQ, "a BindRef of the cached queue's ref goes through its pin")
			assert.Equal(t, missQ.(*dpctl.Queue).IsDefaultContext(), hitQ.(*dpctl.Queue).IsDefaultContext(), kind)

			arr2, err := g.AsArray(x, nil)
			require.NoError(t, err, kind)
			assert.Same(t, arr1.Queue, arr2.Queue, "arrays on a cached queue share its copy")
			cap := eval(t, g, "ViaCapsule(xs['"+kind+"'])")
			arr3, err := g.AsArray(cap, nil) // a capsule: the uncached path
			g.DecRef(cap)
			require.NoError(t, err, kind)
			for _, arr := range []*usm.Array{arr2, arr3} {
				assert.Equal(t, arr1.Memory, arr.Memory, kind)
				assert.Equal(t, arr1.Device, arr.Device, kind)
				assert.Equal(t, arr1.DLDevice, arr.DLDevice, kind)
				require.NoError(t, arr.Wait())
			}
			// A pointer of no USM in the cached queue's context is refused.
			_, _, _, err = d.BindRef(ref, addr(make([]float64, 4)))
			assert.ErrorIs(t, err, usm.ErrValue, "%s: a Go pointer", kind)
			assert.Contains(t, err.Error(), "not a USM pointer")
			for _, arr := range []*usm.Array{arr1, arr2, arr3} {
				arr.Owner.Release()
			}
			g.DecRef(x)
		}
		py.dropQueueCache(g)
		return nil
	}))
}

func evalInt(t *testing.T, g *GIL, expr string) int64 {
	t.Helper()
	o := eval(t, g, expr)
	defer g.DecRef(o)
	v, err := g.toInt(o)
	require.NoError(t, err)
	return v
}

// The cache holds at most queueCacheSize queues; an evicted or dropped
// entry gives its reference back, and arrays keep their queue copies.
func TestQueueCacheEvictionReleasesReference(t *testing.T) {
	py, _ := withDpctl(t)
	n := queueCacheSize + 2
	run(t, py, "qs = [dpctl.SyclQueue('opencl:cpu') for _ in range("+strconv.Itoa(n)+")]\nqxs = [dpt.ones(4, sycl_queue=qq) for qq in qs]")
	require.NoError(t, py.Do(func(g *GIL) error {
		py.dropQueueCache(g)
		qs := make([]Object, n)
		base := make([]int, n)
		for i := range qs {
			qs[i] = eval(t, g, "qs["+strconv.Itoa(i)+"]")
			defer g.DecRef(qs[i])
			base[i] = g.refCount(qs[i])
		}
		var arrs []*usm.Array
		for i := range n {
			x := eval(t, g, "qxs["+strconv.Itoa(i)+"]")
			arr, err := g.AsArray(x, nil)
			g.DecRef(x)
			require.NoError(t, err)
			arrs = append(arrs, arr)
			assert.LessOrEqual(t, queueCacheLen(py), queueCacheSize)
			for j := 0; j <= i; j++ {
				_, cached := cachedQueue(py, qs[j])
				want := base[j]
				if cached {
					want++
				}
				assert.Equal(t, want, g.refCount(qs[j]), "queue %d after %d arrays", j, i+1)
				assert.Equal(t, j > i-queueCacheSize, cached, "queue %d after %d arrays (oldest first out)", j, i+1)
			}
		}
		for _, arr := range arrs {
			require.NoError(t, arr.Wait(), "an evicted entry's queue copy lives on with its arrays")
		}
		py.dropQueueCache(g)
		assert.Zero(t, queueCacheLen(py))
		for i := range qs {
			assert.Equal(t, base[i], g.refCount(qs[i]), "queue %d after dropQueueCache", i)
		}
		for _, arr := range arrs {
			arr.Owner.Release()
		}
		return nil
	}))
}

// Cached and uncached, a queue whose device has no USM is refused (the
// cache never classifies pointers in its context).
func TestQueueCacheRefusesQueueWithoutUSM(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, `
no_usm = [dv for dv in dpctl.get_devices() if not dv.has_aspect_usm_device_allocations
          and not dv.has_aspect_usm_host_allocations and not dv.has_aspect_usm_shared_allocations]
`)
	if n, _ := evalGo(t, py, "len(no_usm)").(int64); n == 0 {
		t.Skip("no device without USM") // TestDeviceWithoutUSMIsRefusedNotCrashed requires one under PoCL
	}
	run(t, py, `
q_no_usm = dpctl.SyclQueue(no_usm[0])
class NoUSMQ:
    __sycl_usm_array_interface__ = dict(data=(dpt.arange(4, sycl_queue=q).__sycl_usm_array_interface__['data'][0], False),
                                        shape=(4,), typestr='<i8', version=1, syclobj=q_no_usm)
`)
	require.NoError(t, py.Do(func(g *GIL) error {
		py.dropQueueCache(g)
		o := eval(t, g, "NoUSMQ()")
		defer g.DecRef(o)
		qo := eval(t, g, "q_no_usm")
		defer g.DecRef(qo)
		for i := range 2 {
			_, err := g.AsArray(o, nil)
			require.ErrorIs(t, err, usm.ErrValue, "attempt %d", i)
			assert.Contains(t, err.Error(), "USM", "attempt %d", i)
			_, cached := cachedQueue(py, qo)
			require.True(t, cached, "attempt %d: a queue without USM is cached (and refused without asking SYCL again)", i)
		}
		py.dropQueueCache(g)
		return nil
	}))
}

// Many goroutines bind arrays on more queues than the cache holds, and
// bind refs from Go without the GIL, while entries come and go.
func TestQueueCacheConcurrent(t *testing.T) {
	py, d := withDpctl(t)
	n := queueCacheSize + 3
	run(t, py, "cqs = [dpctl.SyclQueue('opencl:cpu') for _ in range("+strconv.Itoa(n)+")]\ncqxs = [dpt.ones(4, sycl_queue=qq) for qq in cqs]")
	refs := make([]syclobj.QueueRef, n)
	ptrs := make([]uintptr, n)
	require.NoError(t, py.Do(func(g *GIL) error {
		for i := range n {
			refs[i] = syclobj.UnsafeQueueRef(uintptr(evalInt(t, g, "cqs["+strconv.Itoa(i)+"].addressof_ref()"))) // cqs keeps the queues alive
			ptrs[i] = uintptr(evalInt(t, g, "cqxs["+strconv.Itoa(i)+"].__sycl_usm_array_interface__['data'][0]"))
		}
		return nil
	}))
	inParallel(t, 6, func(w int) error {
		for it := range 60 {
			i := (w*7 + it) % n
			if w%2 == 0 { // from Go, without the GIL
				info, _, _, err := d.BindRef(refs[i], ptrs[i])
				if err == nil && info.Kind != usm.KindDevice {
					err = fmt.Errorf("queue %d: pointer kind %v, want device", i, info.Kind)
				}
				if err != nil {
					return err
				}
				continue
			}
			err := py.Do(func(g *GIL) error {
				if it%25 == 0 {
					py.dropQueueCache(g)
				}
				x, err := g.Eval("cqxs[" + strconv.Itoa(i) + "]")
				if err != nil {
					return err
				}
				defer g.DecRef(x)
				arr, err := g.AsArray(x, nil)
				if err != nil {
					return err
				}
				arr.Owner.Release()
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, py.Do(func(g *GIL) error { py.dropQueueCache(g); return nil }))
}

// Which dicts count as dpctl.memory's (whose read-only flag means
// "writable" and is ignored): those of dpctl.memory objects and Python
// subclasses, which come from _Memory's own property. A class that claims
// to be dpctl.memory through __class__, or a dict of exactly the shape
// dpctl.memory makes, keeps its flag. Before, the shape alone inverted the
// flag: a read-only dict of that shape became writable.
func TestDpctlMemoryDetection(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, `
from dpctl.memory._memory import _Memory
mem = dpctl.memory.MemoryUSMShared(64, queue=q)
arr = dpt.ones(4, sycl_queue=q)
ro = dict(arr.__sycl_usm_array_interface__, data=(arr.__sycl_usm_array_interface__["data"][0], True))
class PySub(dpctl.memory.MemoryUSMShared): pass
class Claims:  # a mutable class claiming to be dpctl.memory
    __class__ = property(lambda self: _Memory)
    __sycl_usm_array_interface__ = ro
class Plain:
    __sycl_usm_array_interface__ = ro
class Shaped:  # the exact MemoryUSM* shape, not an instance
    __sycl_usm_array_interface__ = dict(mem.__sycl_usm_array_interface__)
objs = {"mem": mem, "arr": arr, "pysub": PySub(64, queue=q), "claims": Claims(), "plain": Plain(), "shaped": Shaped()}
`)
	reg := func(g *GIL) *usm.Registry { d, err := g.dpctlUnderGIL(); require.NoError(t, err); return d.Registry() }
	require.NoError(t, py.Do(func(g *GIL) error {
		ty := g.dpctlTypes()
		require.NotZero(t, ty.memoryAttr)
		for round := range 2 {
			for name, inverted := range map[string]bool{"mem": true, "arr": false, "pysub": true, "claims": false, "plain": false, "shaped": false} {
				o := eval(t, g, "objs['"+name+"']")
				s, err := g.readSUAI(o)
				require.NoError(t, err, name)
				arr, err := reg(g).ParseFields(s)
				require.NoError(t, err, name)
				assert.Equal(t, inverted, s.Inverted, "%s, round %d", name, round)
				flag := evalGo(t, g.py, "bool(objs['"+name+"'].__sycl_usm_array_interface__['data'][1])").(bool)
				assert.Equal(t, flag && !inverted, arr.ReadOnly, "%s, round %d: read-only", name, round)
				s.Release(g)
				g.DecRef(o)
			}
		}
		return nil
	}))
}
