package dlpack_test

import (
	"testing"

	"github.com/usmbridge/usmbridge/dlpack"
)

// The success paths allocate a bounded, size-independent number of times:
// an export nothing (its structs are C memory), an import one Tensor
// (shape and strides of up to 8 dimensions live inside it; nothing is
// formatted), whatever the array's size. A message built on the success
// path, or a shape slice of its own, shows up here as an extra allocation.
func TestAllocationsPerExchange(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			reg, a := benchArray(t, sz.n)
			opts := dlpack.ExportOptions{MaxVersion: v(1, 0)}
			export := testing.AllocsPerRun(100, func() {
				m, err := dlpack.Export(a, opts)
				if err != nil {
					t.Fatal(err)
				}
				m.Delete()
			})
			roundTrip := testing.AllocsPerRun(100, func() {
				m, err := dlpack.Export(a, opts)
				if err != nil {
					t.Fatal(err)
				}
				tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
				if err != nil {
					t.Fatal(err)
				}
				tn.Release()
			})
			if export != 0 || roundTrip != 1 {
				t.Errorf("allocations: export %v (want 0), export+import+release %v (want 1)", export, roundTrip)
			}
		})
	}
}
