package opencl

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/internal/testutil/stale"
	"github.com/usmbridge/usmbridge/usm"
)

// An array whose allocation was freed reads and writes nothing, and is no
// kernel's argument. Before, a write through it went into memory the
// runtime had given back (Intel's runtime to the C heap, whose next free
// aborted: "corrupted unsorted chunks") or into the allocation made
// after it at the same address.
func TestStaleArray(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		kinds := []usm.Kind{usm.KindShared}
		if r.mem == usmMemory {
			kinds = append(kinds, usm.KindHost, usm.KindDevice)
		}
		for _, kind := range kinds {
			t.Run(kind.String(), func(t *testing.T) {
				if testutil.InChild("stale") {
					const n = 1 << 14
					reg := usm.NewRegistry(r.b)
					alloc, err := r.b.Alloc(r.local, kind, 4*n)
					require.NoError(t, err)
					freed, err := reg.NewArray(alloc, dtype.Float32, []int64{n})
					require.NoError(t, err)
					require.NoError(t, alloc.Free())
					again, err := r.b.Alloc(r.local, kind, 4*n)
					require.NoError(t, err)
					defer again.Free()
					fresh, err := reg.NewArray(again, dtype.Float32, []int64{n})
					require.NoError(t, err)
					ones := make([]float32, n)
					for i := range ones {
						ones[i] = 1
					}
					require.NoError(t, usm.CopyFromSlice(fresh, ones))
					prog, k := testutil.BuildKernel(t, r.q, usm.ProgramSource{OpenCLC: testutil.KernelSource()}, "fill")
					defer prog.Close()
					stale.Access(t, freed, fresh, k, r.q)
					return
				}
				testutil.RunChild(t, "stale", 2*time.Minute).Expect(t, 0, "stale array refused")
			})
		}
	})
}
