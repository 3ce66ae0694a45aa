package pybridge

import (
	"testing"
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
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	if !cgoEnabled {
		t.Skip("without cgo, purego allocates the arguments of every C call")
	}
	py, _ := withDpctl(t)
	run(t, py, "x_allocs = dpt.arange(1024, dtype='f4', sycl_queue=q)")
	if err := py.Do(func(g *GIL) error {
		x, err := g.Eval("x_allocs")
		if err != nil {
			return err
		}
		defer g.DecRef(x)
		var importErr error
		n := testing.AllocsPerRun(100, func() {
			arr, err := g.AsArray(x, nil)
			if err != nil {
				importErr = err
				return
			}
			arr.Owner.Release()
		})
		if importErr != nil {
			return importErr
		}
		if n > 3 {
			t.Errorf("an import of a dpnp array's SUAI: %v allocations, want <= 3", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
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
