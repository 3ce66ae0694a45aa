package opencl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// TestTypedCopies moves float32 data between Go slices and OpenCL memory
// with usm's typed access: device USM through the backend's Copier
// (clEnqueueMemcpyINTEL), host, shared and SVM memory directly, contiguous
// and strided.
func TestTypedCopies(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		reg := usm.NewRegistry(r.b)
		kinds := []usm.Kind{usm.KindShared}
		if r.mem == usmMemory {
			kinds = append(kinds, usm.KindHost, usm.KindDevice)
		}
		for _, kind := range kinds {
			t.Run(kind.String(), func(t *testing.T) {
				const rows, cols = 4, 6
				alloc, err := r.b.Alloc(r.local, kind, rows*cols*4)
				require.NoError(t, err)
				defer alloc.Free()
				arr, err := reg.NewArray(alloc, dtype.Float32, []int64{rows, cols})
				require.NoError(t, err)
				require.Equal(t, alloc.Kind(), arr.Memory.Kind)

				all := make([]float32, rows*cols)
				for i := range all {
					all[i] = float32(i)
				}
				require.NoError(t, usm.CopyFromSlice(arr, all))
				back := make([]float32, rows*cols)
				require.NoError(t, usm.CopyToSlice(back, arr))
				assert.Equal(t, all, back)

				// x[::-2, 1::2]: rows 3 and 1 backwards, odd columns.
				sub := *arr
				sub.Shape, sub.Strides, sub.Offset = []int64{2, 3}, []int64{-2 * cols, 2}, 3*cols+1
				got := make([]float32, 6)
				require.NoError(t, usm.CopyToSlice(got, &sub))
				assert.Equal(t, []float32{19, 21, 23, 7, 9, 11}, got)

				require.NoError(t, usm.CopyFromSlice(&sub, []float32{-1, -2, -3, -4, -5, -6}))
				require.NoError(t, usm.CopyToSlice(back, arr))
				want := append([]float32(nil), all...)
				for i, at := range []int{19, 21, 23, 7, 9, 11} {
					want[at] = -float32(i + 1)
				}
				assert.Equal(t, want, back, "only the strided elements changed")

				view, err := usm.View[float32](arr)
				if kind == usm.KindDevice {
					require.ErrorIs(t, err, usm.ErrBuffer)
					_, err = usm.At[float32](arr, 0, 0)
					require.ErrorIs(t, err, usm.ErrBuffer)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, want, append([]float32(nil), view...))
				v, err := usm.At[float32](&sub, 1, 2)
				require.NoError(t, err)
				assert.Equal(t, float32(-6), v)
			})
		}
	})
}
