package levelzero

import (
	"errors"
	"slices"
	"testing"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// TestTypedCopies moves int32 data between Go slices and Level Zero memory
// of every kind with usm's typed access; device memory goes through the
// backend's Copier (an immediate command list), strided arrays one
// contiguous run at a time.
func TestTypedCopies(t *testing.T) {
	b := newBackend(t)
	reg := usm.NewRegistry(b)
	for _, kind := range []usm.Kind{usm.KindShared, usm.KindHost, usm.KindDevice} {
		t.Run(kind.String(), func(t *testing.T) {
			const rows, cols = 3, 4
			alloc, err := b.Alloc(0, kind, rows*cols*4)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { must(t, alloc.Free()) }()
			arr, err := reg.NewArray(alloc, dtype.Int32, []int64{rows, cols})
			if err != nil {
				t.Fatal(err)
			}
			all := make([]int32, rows*cols)
			for i := range all {
				all[i] = int32(i * 3)
			}
			must(t, usm.CopyFromSlice(arr, all))

			// The transpose: every element is its own run.
			tr := *arr
			tr.Shape, tr.Strides = []int64{cols, rows}, []int64{1, cols}
			got := make([]int32, rows*cols)
			must(t, usm.CopyToSlice(got, &tr))
			for i := range cols {
				for j := range rows {
					if got[i*rows+j] != all[j*cols+i] {
						t.Fatalf("transpose[%d,%d] = %d, want %d", i, j, got[i*rows+j], all[j*cols+i])
					}
				}
			}

			// Column 2 written from Go; the rest stays.
			col := *arr
			col.Shape, col.Strides, col.Offset = []int64{rows}, []int64{cols}, 2
			must(t, usm.CopyFromSlice(&col, []int32{-1, -2, -3}))
			back := make([]int32, rows*cols)
			must(t, usm.CopyToSlice(back, arr))
			want := slices.Clone(all)
			want[2], want[6], want[10] = -1, -2, -3
			if !slices.Equal(back, want) {
				t.Fatalf("after writing column 2: %v, want %v", back, want)
			}

			_, err = usm.View[int32](arr)
			if host := kind != usm.KindDevice; host != (err == nil) || (!host && !errors.Is(err, usm.ErrBuffer)) {
				t.Fatalf("View of %s memory: %v", kind, err)
			}
		})
	}
}
