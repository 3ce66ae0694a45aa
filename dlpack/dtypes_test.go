package dlpack_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/usm"
)

// everyDtype is every DLPack dtype an array holds (dlpack.h 1.3 codes):
// bool, the integers, the floats, bfloat16, the complex types and the
// eight float8 codes.
var everyDtype = []dlabi.DataType{
	{Code: 6, Bits: 8, Lanes: 1},
	{Code: 0, Bits: 8, Lanes: 1}, {Code: 0, Bits: 16, Lanes: 1}, {Code: 0, Bits: 32, Lanes: 1}, {Code: 0, Bits: 64, Lanes: 1},
	{Code: 1, Bits: 8, Lanes: 1}, {Code: 1, Bits: 16, Lanes: 1}, {Code: 1, Bits: 32, Lanes: 1}, {Code: 1, Bits: 64, Lanes: 1},
	{Code: 2, Bits: 16, Lanes: 1}, {Code: 2, Bits: 32, Lanes: 1}, {Code: 2, Bits: 64, Lanes: 1},
	{Code: 4, Bits: 16, Lanes: 1},
	{Code: 5, Bits: 32, Lanes: 1}, {Code: 5, Bits: 64, Lanes: 1}, {Code: 5, Bits: 128, Lanes: 1},
	{Code: 7, Bits: 8, Lanes: 1}, {Code: 8, Bits: 8, Lanes: 1}, {Code: 9, Bits: 8, Lanes: 1}, {Code: 10, Bits: 8, Lanes: 1},
	{Code: 11, Bits: 8, Lanes: 1}, {Code: 12, Bits: 8, Lanes: 1}, {Code: 13, Bits: 8, Lanes: 1}, {Code: 14, Bits: 8, Lanes: 1},
}

// Every dtype comes in from a foreign producer, in both layouts, and goes
// out again with the producer's (code, bits, lanes) and bytes, through
// both layouts where the flags allow: a legacy import is read-only, and a
// read-only array is refused as a legacy tensor.
func TestEveryDtypeImportsAndExports(t *testing.T) {
	for _, dt := range everyDtype {
		t.Run(dt.String(), func(t *testing.T) {
			size := int(dt.Bits / 8)
			buf := cmem.Alloc(uintptr(6 * size))
			defer cmem.Free(buf, uintptr(6*size))
			want := cmem.Bytes(buf, uintptr(6*size))
			for i := range want {
				want[i] = byte(i*7 + 1)
			}
			for _, versioned := range []bool{true, false} {
				f := foreign{versioned: versioned, major: 1, data: buf, device: cpuDev(), ndim: 2, dtype: dt,
					shape: []int64{2, 3}, strides: []int64{3, 1}}
				m, id := f.build(t)
				tn, err := dlpack.Import(m, dlpack.ImportOptions{})
				require.NoError(t, err)
				got, err := tn.DType.DataType()
				require.NoError(t, err)
				assert.Equal(t, dt, got)
				assert.Equal(t, size, tn.DType.Size())
				assert.Equal(t, !versioned, tn.ReadOnly, "versioned %v: only a legacy tensor is read-only", versioned)
				b, err := tn.Bytes()
				require.NoError(t, err)
				assert.Equal(t, want, b)

				for _, max := range []*dlpack.Version{nil, v(1, 0)} {
					out, err := dlpack.Export(&tn.Array, dlpack.ExportOptions{MaxVersion: max})
					if max == nil && tn.ReadOnly {
						require.ErrorIs(t, err, usm.ErrBuffer, "a legacy tensor cannot carry read-only")
						continue
					}
					require.NoError(t, err)
					var wrote dlabi.DataType
					if out.Versioned() {
						wrote = (*dlabi.ManagedTensorVersioned)(cmem.Ptr(out.Pointer())).DLTensor.DType
					} else {
						wrote = (*dlabi.ManagedTensor)(cmem.Ptr(out.Pointer())).DLTensor.DType
					}
					assert.Equal(t, dt, wrote)
					back, err := dlpack.Import(out, dlpack.ImportOptions{})
					require.NoError(t, err)
					assert.Equal(t, tn.DType, back.DType)
					bb, err := back.Bytes()
					require.NoError(t, err)
					assert.Equal(t, want, bb)
					back.Release()
				}
				tn.Release()
				assert.Equal(t, 1, deletesOf(id))
			}
		})
	}
}

// A legacy DLManagedTensor cannot say that its memory may be written:
// whoever hands one over (jax always does) gets a read-only array, as
// NumPy's from_dlpack makes it. A versioned tensor is read-only exactly
// when it says so.
func TestLegacyImportsAreReadOnly(t *testing.T) {
	buf := cmem.Alloc(64)
	defer cmem.Free(buf, 64)
	for _, c := range []struct {
		name      string
		versioned bool
		flags     uint64
		readOnly  bool
	}{
		{"legacy", false, 0, true},
		{"versioned", true, 0, false},
		{"versioned, READ_ONLY", true, dlabi.FlagReadOnly, true},
		{"versioned, IS_COPIED", true, dlabi.FlagIsCopied, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := foreign{versioned: c.versioned, major: 1, flags: c.flags, data: buf, device: cpuDev(), ndim: 1, dtype: f32, shape: []int64{4}}
			m, _ := f.build(t)
			tn, err := dlpack.Import(m, dlpack.ImportOptions{})
			require.NoError(t, err)
			defer tn.Release()
			assert.Equal(t, c.readOnly, tn.ReadOnly)
			_, err = usmView(&tn.Array)
			if c.readOnly {
				assert.ErrorIs(t, err, usm.ErrBuffer, "a read-only import cannot be written through usm.View")
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

func usmView(a *usm.Array) ([]float32, error) { return usm.View[float32](a) }
