package levelzero

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
// driver had given back (the fake driver's, to the C heap) or into the
// allocation made after it at the same address.
func TestStaleArray(t *testing.T) {
	for _, kind := range []usm.Kind{usm.KindShared, usm.KindHost, usm.KindDevice} {
		t.Run(kind.String(), func(t *testing.T) {
			if testutil.InChild("stale") {
				b := newBackend(t)
				const n = 1 << 14
				reg := usm.NewRegistry(b)
				alloc, err := b.Alloc(0, kind, 4*n)
				require.NoError(t, err)
				freed, err := reg.NewArray(alloc, dtype.Float32, []int64{n})
				require.NoError(t, err)
				require.NoError(t, alloc.Free())
				again, err := b.Alloc(0, kind, 4*n)
				require.NoError(t, err)
				defer again.Free()
				fresh, err := reg.NewArray(again, dtype.Float32, []int64{n})
				require.NoError(t, err)
				ones := make([]float32, n)
				for i := range ones {
					ones[i] = 1
				}
				require.NoError(t, usm.CopyFromSlice(fresh, ones))
				q, err := b.Queue(0)
				require.NoError(t, err)
				prog, k := testutil.BuildKernel(t, q, usm.ProgramSource{SPIRV: testutil.SPIRV(t)}, "fill")
				defer prog.Close()
				stale.Access(t, freed, fresh, k, q)
				return
			}
			needDriver(t)
			testutil.RunChild(t, "stale", 2*time.Minute).Expect(t, 0, "stale array refused")
		})
	}
}
