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
