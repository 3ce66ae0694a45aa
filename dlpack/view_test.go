package dlpack_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

// ViewOf is the tensor Export hands out without a copy or a wait, refused
// with Export's error: held equal over random layouts of one allocation
// (negative, zero and oversized strides, offsets, 0-d, size 0, layouts
// that leave the allocation), read-only arrays, and Export's other
// refusals. ViewOf takes nothing: no export is left alive.
func TestViewOfIsExportsTensor(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, err := host.AllocHost(4 * 24)
	require.NoError(t, err)
	defer alloc.Free()
	bigEndian, err := dtype.FromTypestr(typestr.MustParse(">f4"))
	require.NoError(t, err)
	same := func(t *testing.T, a *usm.Array) {
		t.Helper()
		before := exportledger.Read().LiveExports
		view, verr := dlpack.ViewOf(a)
		assert.Equal(t, before, exportledger.Read().LiveExports, "ViewOf exports nothing")
		m, eerr := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0), NoSync: true})
		if eerr != nil {
			require.Error(t, verr, "Export refuses (%v), ViewOf does not", eerr)
			assert.Equal(t, eerr.Error(), verr.Error())
			return
		}
		defer m.Delete()
		require.NoError(t, verr)
		mt := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
		tn := mt.DLTensor
		assert.Equal(t, tn.Data, view.Data, "data")
		assert.Equal(t, tn.ByteOffset, view.ByteOffset, "byte_offset")
		assert.Equal(t, tn.Device, view.Device, "device")
		assert.Equal(t, tn.DType, view.DType, "dtype")
		assert.Equal(t, mt.Flags&dlabi.FlagReadOnly != 0, view.ReadOnly, "read-only")
		n := int(tn.Ndim)
		require.Len(t, view.Shape, n)
		require.Len(t, view.Strides, n)
		if n > 0 {
			assert.Equal(t, unsafe.Slice((*int64)(cmem.Ptr(tn.Shape)), n), view.Shape, "shape")
			assert.Equal(t, unsafe.Slice((*int64)(cmem.Ptr(tn.Strides)), n), view.Strides, "strides")
		}
	}
	rng := rand.New(rand.NewPCG(7, 31))
	for i := range 2000 {
		ndim := rng.IntN(4)
		shape := make([]int64, ndim)
		var strides []int64
		if rng.IntN(3) > 0 {
			strides = make([]int64, ndim)
		}
		for d := range ndim {
			shape[d] = int64(rng.IntN(5))
			if strides != nil {
				strides[d] = int64(rng.IntN(15) - 7)
			}
		}
		in := usm.Interface{Shape: shape, Strides: strides, Offset: int64(rng.IntN(30) - 3), DType: dtype.Float32,
			Data: alloc.Pointer(), Syclobj: syclobj.MustParseSelector("host"), Version: 1, ReadOnly: rng.IntN(2) == 0}
		a, err := reg.Bind(in)
		if err != nil {
			// Bind refuses layouts that leave the allocation: an array
			// whose layout changed after it was bound is what Export and
			// ViewOf must refuse alike.
			good, berr := reg.Bind(usm.Interface{Shape: []int64{1}, DType: dtype.Float32, Data: alloc.Pointer(),
				Syclobj: syclobj.MustParseSelector("host"), Version: 1})
			require.NoError(t, berr)
			good.Shape, good.Strides, good.Offset, good.ReadOnly = shape, strides, in.Offset, in.ReadOnly
			a = good
		}
		t.Run(fmt.Sprint(i, shape, strides, in.Offset), func(t *testing.T) { same(t, a) })
	}
	a, err := reg.NewArray(alloc, dtype.Float32, []int64{4, 6})
	require.NoError(t, err)
	for name, change := range map[string]func(*usm.Array){
		"big endian": func(b *usm.Array) { b.DType = bigEndian },
		"ndim 65": func(b *usm.Array) {
			b.Shape = slices.Repeat([]int64{1}, 65)
			b.Strides = nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			b := *a
			change(&b)
			same(t, &b)
		})
	}
	_, err = dlpack.ViewOf(nil)
	assert.ErrorIs(t, err, usm.ErrValue)
}
