package pybridge

import (
	"testing"

	"github.com/usmbridge/usmbridge/usm"
)

// SUAI ingest of a dpnp array from Go (the "Go embed" half of row b of
// python/bench/bench.py), beside dpctl's own dpctl.memory.as_usm_memory
// in the same run.
func BenchmarkSUAIIngest(b *testing.B) {
	py, _ := withDpctl(b)
	run(b, py, "x_bench = dpt.arange(1024, dtype='f4', sycl_queue=q)\nfrom dpctl.memory import as_usm_memory")
	var x, peer Object
	if err := py.Do(func(g *GIL) error {
		var err error
		if x, err = g.Eval("x_bench"); err != nil {
			return err
		}
		peer, err = g.Eval("as_usm_memory")
		return err
	}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = py.Do(func(g *GIL) error { g.DecRef(x); g.DecRef(peer); return nil }) })

	b.Run("dpctl.memory.as_usm_memory", func(b *testing.B) {
		for b.Loop() {
			if err := py.Do(func(g *GIL) error {
				m, err := g.call(peer, []any{x}, nil)
				if err != nil {
					return err
				}
				g.DecRef(m)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("usmbridge.AsArray", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := py.Do(func(g *GIL) error {
				arr, err := g.AsArray(x, nil)
				if err != nil {
					return err
				}
				arr.Owner.Release()
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// An import of a dpnp array's SUAI allocates a bounded number of times:
// the Array (its shape and strides in the same block), its Owner and the
// SUAI reader; the syclobj of a queue seen before is boxed once, and the
// extent's query takes its block from a pool. A native call that takes a
// variadic slice (one allocation each: ffi.Fn.Call) or a name built per
// read shows up here as an extra allocation (BenchmarkSUAIIngest times
// the same import).
func TestSUAIImportAllocations(t *testing.T) {
	n, _ := importAllocs(t, "dpt.arange(1024, dtype='f4', sycl_queue=q)", func(g *GIL, x Object) (*usm.Array, error) {
		return g.AsArray(x, nil)
	})
	if n > 3 {
		t.Errorf("an import of a dpnp array's SUAI: %v allocations, want <= 3", n)
	}
}

// importAllocs evaluates expr (a dpnp array; dpt and q are there) and
// returns the allocations of one import by read (its Owner released
// after each, with the GIL) and the Array of the last, on the machines
// where Go's allocations can be counted.
func importAllocs(t *testing.T, expr string, read func(g *GIL, x Object) (*usm.Array, error)) (float64, *usm.Array) {
	t.Helper()
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	if !cgoEnabled {
		t.Skip("without cgo, purego allocates the arguments of every C call")
	}
	py, _ := withDpctl(t)
	var n float64
	var last *usm.Array
	if err := py.Do(func(g *GIL) error {
		x, err := g.Eval(expr)
		if err != nil {
			return err
		}
		defer g.DecRef(x)
		var readErr error
		n = testing.AllocsPerRun(100, func() {
			arr, err := read(g, x)
			if err != nil {
				readErr = err
				return
			}
			arr.Owner.Release()
			last = arr
		})
		return readErr
	}); err != nil {
		t.Fatal(err)
	}
	return n, last
}

type countingOwner struct{ released int }

func (o *countingOwner) Retain() bool { return true }
func (o *countingOwner) Release()     { o.released++ }

// ReleaseOwner drops an import's reference to the object at once (the
// object's count is back where it was), leaves nil alone and releases any
// other Owner as usual, once each.
func TestReleaseOwner(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, "x_owner = dpt.arange(8, dtype='f4', sycl_queue=q)")
	if err := py.Do(func(g *GIL) error {
		x, err := g.Eval("x_owner")
		if err != nil {
			return err
		}
		defer g.DecRef(x)
		before := g.refCount(x)
		arr, err := g.AsArray(x, nil)
		if err != nil {
			return err
		}
		if g.refCount(x) != before+1 {
			t.Errorf("the import holds %d references more, want 1", g.refCount(x)-before)
		}
		g.ReleaseOwner(arr.Owner)
		if g.refCount(x) != before {
			t.Errorf("after ReleaseOwner the object has %d references, want %d", g.refCount(x), before)
		}
		g.ReleaseOwner(nil)
		other := &countingOwner{}
		g.ReleaseOwner(other)
		if other.released != 1 {
			t.Errorf("another Owner was released %d times, want 1", other.released)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// lookSUAI reads obj's __sycl_usm_array_interface__ into d as pyext's C
// half does: the attribute, and an exact dict's values at the keys (internal/suaikeys). C
// takes a reference to each value, since reading one may run Python code;
// here they are borrowed from the dict, which the caller holds (and
// DecRefs when done) and no Python code reaches: a dpnp array's values
// are ints, tuples and a SyclQueue, read without running any.
func lookSUAI(t testing.TB, g *GIL, obj Object, d *SUAIDict) {
	t.Helper()
	a := g.api()
	name, err := g.suaiAttrName()
	if err != nil {
		t.Fatal(err)
	}
	dict := a.GetAttr(obj.p, name)
	if dict == 0 || a.Type(dict) != a.DictType {
		t.Fatal("no exact SUAI dict")
	}
	keys, err := g.suaiKeyObjects()
	if err != nil {
		t.Fatal(err)
	}
	d.Dict, d.Looked = Object{dict}, true
	for i, k := range keys {
		d.Values[i] = Object{a.DictGetItemWithError(dict, k)}
	}
}

// A caller that reads SUAI arguments into storage of its own and keeps
// its SUAIDict (an extension call, call after call) allocates only the
// Owner: neither the reader nor the Array and its dimensions.
func TestReadSUAIArrayIntoAllocations(t *testing.T) {
	var (
		d    SUAIDict
		arr  usm.Array
		dims [8]int64
	)
	n, last := importAllocs(t, "dpt.reshape(dpt.arange(1024, dtype='f4', sycl_queue=q), (32, 32))[::2, 1:]", func(g *GIL, x Object) (*usm.Array, error) {
		lookSUAI(t, g, x, &d)
		defer g.DecRef(d.Dict)
		return &arr, g.ReadSUAIArrayInto(x, &d, nil, &arr, dims[:])
	})
	if n > 1 {
		t.Errorf("a dpnp array's SUAI read into kept storage: %v allocations, want <= 1 (the Owner)", n)
	}
	if last != &arr || len(arr.Shape) != 2 || arr.Shape[0] != 16 || arr.Shape[1] != 31 || len(arr.Strides) != 2 || arr.Strides[0] != 64 || arr.Strides[1] != 1 {
		t.Errorf("read shape %v strides %v, want [16 31] and [64 1]", arr.Shape, arr.Strides)
	}
	if &arr.Shape[0] != &dims[0] {
		t.Error("the shape is not in the caller's dims")
	}
}
