package dpctl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/internal/testutil/stale"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// An array whose allocation was freed reads and writes nothing, and is no
// kernel's argument. Before, a write through it went into memory the SYCL
// runtime had given back, or into the allocation made after it.
func TestStaleArray(t *testing.T) {
	for _, kind := range []usm.Kind{usm.KindShared, usm.KindHost, usm.KindDevice} {
		t.Run(kind.String(), func(t *testing.T) {
			if testutil.InChild("stale") {
				_, b := loaded(t)
				reg := b.Registry()
				sel, err := syclobj.ParseSelector("opencl:cpu")
				require.NoError(t, err)
				_, dev, err := reg.Select(sel)
				require.NoError(t, err)
				const n = 1 << 14
				alloc, err := b.Alloc(dev, kind, 4*n)
				require.NoError(t, err)
				freed, err := reg.NewArray(alloc, dtype.Float32, []int64{n})
				require.NoError(t, err)
				require.NoError(t, alloc.Free())
				again, err := b.Alloc(dev, kind, 4*n)
				require.NoError(t, err)
				defer again.Free()
				fresh, err := reg.NewArray(again, dtype.Float32, []int64{n})
				require.NoError(t, err)
				ones := make([]float32, n)
				for i := range ones {
					ones[i] = 1
				}
				require.NoError(t, usm.CopyFromSlice(fresh, ones))
				q, err := b.Queue(dev)
				require.NoError(t, err)
				prog, k := testutil.BuildKernel(t, q, usm.ProgramSource{OpenCLC: testutil.KernelSource()}, "fill")
				defer prog.Close()
				stale.Access(t, freed, fresh, k, q)
				return
			}
			loaded(t)
			testutil.RunChild(t, "stale", 2*time.Minute).Expect(t, 0, "stale array refused")
		})
	}
}
