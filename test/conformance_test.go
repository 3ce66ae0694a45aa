package test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
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

// Every typestr of the SUAI subset goes SUAI → DLPack → SUAI with the
// DLPack dtype the standard and dpctl use (DLDataType codes of dlpack.h).
func TestEveryDtypeRoundTrips(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	for ts, want := range map[string]dlabi.DataType{
		"|b1": {Code: 6, Bits: 8, Lanes: 1}, "|i1": {Code: 0, Bits: 8, Lanes: 1}, "<i2": {Code: 0, Bits: 16, Lanes: 1},
		"<i4": {Code: 0, Bits: 32, Lanes: 1}, "<i8": {Code: 0, Bits: 64, Lanes: 1}, "|u1": {Code: 1, Bits: 8, Lanes: 1},
		"<u2": {Code: 1, Bits: 16, Lanes: 1}, "=u4": {Code: 1, Bits: 32, Lanes: 1}, "|u8": {Code: 1, Bits: 64, Lanes: 1},
		"<f2": {Code: 2, Bits: 16, Lanes: 1}, "<f4": {Code: 2, Bits: 32, Lanes: 1}, "<f8": {Code: 2, Bits: 64, Lanes: 1},
		"<c8": {Code: 5, Bits: 64, Lanes: 1}, "<c16": {Code: 5, Bits: 128, Lanes: 1},
	} {
		t.Run(ts, func(t *testing.T) {
			typ := typestr.MustParse(ts)
			alloc, err := host.AllocHost(uintptr(typ.Size * 6))
			require.NoError(t, err)
			defer alloc.Free()
			a, err := reg.NewArray(alloc, typ, []int64{2, 3})
			require.NoError(t, err)
			for _, max := range []*dlpack.Version{nil, {Major: 1}} {
				m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: max})
				require.NoError(t, err)
				tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
				require.NoError(t, err)
				got, err := tn.Typestr.DataType()
				require.NoError(t, err)
				assert.Equal(t, want, got)
				assert.Equal(t, typ.Canonical(), tn.Typestr)
				suai := tn.Map()
				assert.Equal(t, typ.Canonical().String(), suai["typestr"])
				assert.Nil(t, suai["strides"], "C-contiguous exports as strides None")
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
	a, err := reg.NewArray(alloc, typestr.Float32, []int64{4})
	require.NoError(t, err)
	cases := map[string]error{}
	_, cases["BufferError: unsupported dl_device"] = dlpack.Export(a, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}, Device: &dlpack.Device{Type: 2}})
	be := *a
	be.Typestr = typestr.MustParse(">f4")
	_, cases["BufferError: non-native byte order"] = dlpack.Export(&be, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	_, cases["TypeError: non-integer offset"] = usm.Parse(map[string]any{"offset": "1"})
	_, cases["ValueError: bad version"] = usm.Parse(map[string]any{"version": 2})
	_, cases["OverflowError: negative pointer"] = usm.Parse(map[string]any{"version": 1, "data": []any{-1, false}})
	for name, err := range cases {
		want := name[:strings.Index(name, ":")]
		assert.Equal(t, want, usm.PythonException(err), "%s: %v", name, err)
	}
}
