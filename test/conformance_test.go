package test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

// dpctl's test_suai_non_contig_1D and _2D (dpctl/tests/test_sycl_usm.py in dpctl):
// the bytes an interface touches, checked against the allocation.
func TestDpctlWindowPins(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	for _, tc := range []struct {
		name        string
		shape, strd []any
		offset      int
		lo, hi      int64
		allocEnough uintptr
		allocTooFew uintptr
	}{
		{"1D", []any{10}, []any{2}, 8, 8, 27, 27, 26},
		{"2D", []any{2, 2}, []any{10, -2}, 9, 7, 20, 20, 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []uintptr{tc.allocEnough, tc.allocTooFew} {
				alloc, err := host.AllocHost(size)
				require.NoError(t, err)
				a, err := reg.Parse(map[string]any{
					"data": []any{uint64(alloc.Pointer()), false}, "shape": tc.shape, "strides": tc.strd,
					"offset": tc.offset, "typestr": "|u1", "version": 1, "syclobj": "host",
				})
				if size == tc.allocEnough {
					require.NoError(t, err)
					w, _ := a.Window()
					assert.Equal(t, usm.Window{Lo: tc.lo, Hi: tc.hi}, w)
				} else {
					var ee *usm.ExtentError
					require.True(t, errors.As(err, &ee), "%v", err)
					assert.ErrorIs(t, err, usm.ErrValue)
				}
				require.NoError(t, alloc.Free())
			}
		})
	}
}

// The dict dpctl.memory.MemoryUSM* produces (its
// __sycl_usm_array_interface__ property): no "offset", strides None,
// "|u1", data[1] True.
func TestDpctlMemoryDictParses(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, err := host.AllocHost(64)
	require.NoError(t, err)
	defer alloc.Free()
	a, err := reg.Parse(map[string]any{"data": []any{uint64(alloc.Pointer()), true}, "shape": []any{64},
		"strides": nil, "typestr": "|u1", "version": 1, "syclobj": "host:host:0"})
	require.NoError(t, err)
	assert.Zero(t, a.Offset)
	assert.True(t, a.ReadOnly, "usm parses data[1] as the spec says; pybridge special-cases dpctl.memory")
}

// Every element type goes SUAI → DLPack → SUAI (or, without a typestr,
// DLPack → DLPack) with the DLPack dtype the standard, dpctl, PyTorch and
// jax use (DLDataType codes of dlpack.h), through both layouts; SUAI
// refuses the types dpctl has no typestr for with a BufferError naming the
// DLPack dtype.
func TestEveryDtypeRoundTrips(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	for _, c := range []struct {
		ts   string // the SUAI typestring parsed, or "" for a type SUAI lacks
		dt   dtype.Type
		want dlabi.DataType
	}{
		{"|b1", dtype.Bool, dlabi.DataType{Code: 6, Bits: 8, Lanes: 1}},
		{"|i1", dtype.Int8, dlabi.DataType{Code: 0, Bits: 8, Lanes: 1}},
		{"<i2", dtype.Int16, dlabi.DataType{Code: 0, Bits: 16, Lanes: 1}},
		{"<i4", dtype.Int32, dlabi.DataType{Code: 0, Bits: 32, Lanes: 1}},
		{"<i8", dtype.Int64, dlabi.DataType{Code: 0, Bits: 64, Lanes: 1}},
		{"|u1", dtype.Uint8, dlabi.DataType{Code: 1, Bits: 8, Lanes: 1}},
		{"<u2", dtype.Uint16, dlabi.DataType{Code: 1, Bits: 16, Lanes: 1}},
		{"=u4", dtype.Uint32, dlabi.DataType{Code: 1, Bits: 32, Lanes: 1}},
		{"|u8", dtype.Uint64, dlabi.DataType{Code: 1, Bits: 64, Lanes: 1}},
		{"<f2", dtype.Float16, dlabi.DataType{Code: 2, Bits: 16, Lanes: 1}},
		{"<f4", dtype.Float32, dlabi.DataType{Code: 2, Bits: 32, Lanes: 1}},
		{"<f8", dtype.Float64, dlabi.DataType{Code: 2, Bits: 64, Lanes: 1}},
		{"<c8", dtype.Complex64, dlabi.DataType{Code: 5, Bits: 64, Lanes: 1}},
		{"<c16", dtype.Complex128, dlabi.DataType{Code: 5, Bits: 128, Lanes: 1}},
		{"", dtype.Bfloat16, dlabi.DataType{Code: 4, Bits: 16, Lanes: 1}},
		{"", dtype.Complex32, dlabi.DataType{Code: 5, Bits: 32, Lanes: 1}},
		{"", dtype.Float8E3M4, dlabi.DataType{Code: 7, Bits: 8, Lanes: 1}},
		{"", dtype.Float8E4M3, dlabi.DataType{Code: 8, Bits: 8, Lanes: 1}},
		{"", dtype.Float8E4M3B11FNUZ, dlabi.DataType{Code: 9, Bits: 8, Lanes: 1}},
		{"", dtype.Float8E4M3FN, dlabi.DataType{Code: 10, Bits: 8, Lanes: 1}},
		{"", dtype.Float8E4M3FNUZ, dlabi.DataType{Code: 11, Bits: 8, Lanes: 1}},
		{"", dtype.Float8E5M2, dlabi.DataType{Code: 12, Bits: 8, Lanes: 1}},
		{"", dtype.Float8E5M2FNUZ, dlabi.DataType{Code: 13, Bits: 8, Lanes: 1}},
		{"", dtype.Float8E8M0FNU, dlabi.DataType{Code: 14, Bits: 8, Lanes: 1}},
	} {
		t.Run(c.dt.String(), func(t *testing.T) {
			alloc, err := host.AllocHost(uintptr(c.dt.Size() * 6))
			require.NoError(t, err)
			defer alloc.Free()
			a, err := reg.NewArray(alloc, c.dt, []int64{2, 3})
			require.NoError(t, err)
			if c.ts != "" {
				suai, err := a.Map()
				require.NoError(t, err)
				suai["typestr"] = c.ts
				a, err = reg.Parse(suai)
				require.NoError(t, err)
				a.Owner = alloc
				assert.Equal(t, c.dt, a.DType, "typestr %s", c.ts)
			}
			for _, max := range []*dlpack.Version{nil, {Major: 1}} {
				m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: max})
				require.NoError(t, err)
				tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
				require.NoError(t, err)
				d, err := tn.DType.DataType()
				require.NoError(t, err)
				assert.Equal(t, c.want, d)
				assert.Equal(t, c.dt, tn.DType)
				suai, err := tn.Map()
				if c.ts == "" {
					assert.ErrorIs(t, err, usm.ErrBuffer)
					assert.Contains(t, err.Error(), "DLPack dtype "+c.dt.String()+" (code ")
					assert.Contains(t, err.Error(), "has no __sycl_usm_array_interface__ typestr")
				} else {
					require.NoError(t, err)
					assert.Equal(t, "|"+c.ts[1:], suai["typestr"])
					assert.Nil(t, suai["strides"], "C-contiguous exports as strides None")
				}
				tn.Release()
			}
		})
	}
}

// The exception each refusal maps to, as the array API standard requires
// of from_dlpack and __dlpack__.
func TestErrorKindsMapToPythonExceptions(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, err := host.AllocHost(16)
	require.NoError(t, err)
	defer alloc.Free()
	a, err := reg.NewArray(alloc, dtype.Float32, []int64{4})
	require.NoError(t, err)
	cases := map[string]error{}
	_, cases["BufferError: unsupported dl_device"] = dlpack.Export(a, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}, Device: &dlpack.Device{Type: 2}})
	be := *a
	be.DType, err = dtype.FromTypestr(typestr.MustParse(">f4"))
	require.NoError(t, err)
	_, cases["BufferError: non-native byte order"] = dlpack.Export(&be, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	_, cases["TypeError: non-integer offset"] = usm.Parse(map[string]any{"offset": "1"})
	_, cases["ValueError: bad version"] = usm.Parse(map[string]any{"version": 2})
	_, cases["OverflowError: negative pointer"] = usm.Parse(map[string]any{"version": 1, "data": []any{-1, false}})
	for name, err := range cases {
		want := name[:strings.Index(name, ":")]
		assert.Equal(t, want, usm.PythonException(err), "%s: %v", name, err)
	}
}
