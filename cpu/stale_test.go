package cpu_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/internal/testutil/stale"
	"github.com/usmbridge/usmbridge/usm"
)

// An array whose allocation was freed reads and writes nothing: the next
// AllocHost of the same size gets the same pages back, and a write
// through the stale array used to land in the new one.
func TestStaleArray(t *testing.T) {
	if testutil.InChild("stale") {
		b := new(cpu.Backend)
		reg := usm.NewRegistry(b)
		freed := staleFloats(t, b, reg)
		alloc, err := b.AllocHost(4 * 1024)
		require.NoError(t, err)
		defer alloc.Free()
		fresh, err := reg.NewArray(alloc, dtype.Float32, []int64{1024})
		require.NoError(t, err)
		require.NoError(t, usm.CopyFromSlice(fresh, ones(1024)))
		if alloc.Pointer() != freed.Data {
			t.Logf("the allocator gave other pages: %#x, not %#x", alloc.Pointer(), freed.Data)
		}
		stale.Access(t, freed, fresh, nil, nil)
		return
	}
	testutil.RunChild(t, "stale", time.Minute).Expect(t, 0, "stale array refused")
}

// staleFloats is a 1024-float32 array over host memory that has been
// freed.
func staleFloats(t *testing.T, b *cpu.Backend, reg *usm.Registry) *usm.Array {
	alloc, err := b.AllocHost(4 * 1024)
	require.NoError(t, err)
	arr, err := reg.NewArray(alloc, dtype.Float32, []int64{1024})
	require.NoError(t, err)
	require.NoError(t, alloc.Free())
	return arr
}

func ones(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}
