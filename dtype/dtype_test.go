package dtype_test

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

// element is one accepted DLPack dtype with everything the model says of
// it: the element type, its name, item size, and SUAI typestring ("" when
// SUAI has none).
type element struct {
	dt      dlabi.DataType
	et      dtype.Type
	name    string
	size    int
	typestr string
}

func dl(code dlabi.TypeCode, bits uint8) dlabi.DataType {
	return dlabi.DataType{Code: code, Bits: bits, Lanes: 1}
}

// elements is every DLPack dtype the model accepts, written out from
// dlpack.h's codes (not derived from the package's own tables).
var elements = []element{
	{dl(0, 8), dtype.Int8, "int8", 1, "|i1"},
	{dl(0, 16), dtype.Int16, "int16", 2, "|i2"},
	{dl(0, 32), dtype.Int32, "int32", 4, "|i4"},
	{dl(0, 64), dtype.Int64, "int64", 8, "|i8"},
	{dl(1, 8), dtype.Uint8, "uint8", 1, "|u1"},
	{dl(1, 16), dtype.Uint16, "uint16", 2, "|u2"},
	{dl(1, 32), dtype.Uint32, "uint32", 4, "|u4"},
	{dl(1, 64), dtype.Uint64, "uint64", 8, "|u8"},
	{dl(2, 16), dtype.Float16, "float16", 2, "|f2"},
	{dl(2, 32), dtype.Float32, "float32", 4, "|f4"},
	{dl(2, 64), dtype.Float64, "float64", 8, "|f8"},
	{dl(4, 16), dtype.Bfloat16, "bfloat16", 2, ""},
	{dl(5, 32), dtype.Complex32, "complex32", 4, ""},
	{dl(5, 64), dtype.Complex64, "complex64", 8, "|c8"},
	{dl(5, 128), dtype.Complex128, "complex128", 16, "|c16"},
	{dl(6, 8), dtype.Bool, "bool", 1, "|b1"},
	{dl(7, 8), dtype.Float8E3M4, "float8_e3m4", 1, ""},
	{dl(8, 8), dtype.Float8E4M3, "float8_e4m3", 1, ""},
	{dl(9, 8), dtype.Float8E4M3B11FNUZ, "float8_e4m3b11fnuz", 1, ""},
	{dl(10, 8), dtype.Float8E4M3FN, "float8_e4m3fn", 1, ""},
	{dl(11, 8), dtype.Float8E4M3FNUZ, "float8_e4m3fnuz", 1, ""},
	{dl(12, 8), dtype.Float8E5M2, "float8_e5m2", 1, ""},
	{dl(13, 8), dtype.Float8E5M2FNUZ, "float8_e5m2fnuz", 1, ""},
	{dl(14, 8), dtype.Float8E8M0FNU, "float8_e8m0fnu", 1, ""},
}

func TestCodesMatchHeader(t *testing.T) {
	// dlpack.h 1.3's DLDataTypeCode; the tables above are written in it.
	for want, c := range []dlabi.TypeCode{dlabi.Int, dlabi.UInt, dlabi.Float, dlabi.OpaqueHandle, dlabi.Bfloat,
		dlabi.Complex, dlabi.Bool, dlabi.Float8E3M4, dlabi.Float8E4M3, dlabi.Float8E4M3B11FNUZ, dlabi.Float8E4M3FN,
		dlabi.Float8E4M3FNUZ, dlabi.Float8E5M2, dlabi.Float8E5M2FNUZ, dlabi.Float8E8M0FNU, dlabi.Float6E2M3FN,
		dlabi.Float6E3M2FN, dlabi.Float4E2M1FN} {
		assert.EqualValues(t, want, c, c.String())
	}
	assert.Equal(t, "kDLFloat8_e4m3fn", dlabi.Float8E4M3FN.String())
	assert.Equal(t, "DLDataTypeCode(18)", dlabi.TypeCode(18).String())
}

// TestEveryAcceptedDtype: each accepted DLPack dtype maps to its element
// type and back, with its name, item size and typestring, or the
// BufferError naming the dtype where SUAI has no typestring.
func TestEveryAcceptedDtype(t *testing.T) {
	for _, e := range elements {
		t.Run(e.name, func(t *testing.T) {
			got, err := dtype.FromDataType(e.dt)
			require.NoError(t, err)
			assert.Equal(t, e.et, got)
			assert.True(t, got.Valid())
			assert.True(t, got.IsNative())
			assert.Equal(t, got, got.Native())
			assert.Equal(t, e.name, got.String())
			assert.Equal(t, e.size, got.Size())
			back, err := got.DataType()
			require.NoError(t, err)
			assert.Equal(t, e.dt, back)

			ts, err := got.Typestr()
			if e.typestr == "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, usm.ErrBuffer)
				assert.Equal(t, "BufferError", usm.PythonException(err))
				assert.Equal(t, "DLPack dtype "+e.name+" (code "+strconv.Itoa(int(e.dt.Code))+", "+strconv.Itoa(int(e.dt.Bits))+" bits) has no __sycl_usm_array_interface__ typestr", err.Error())
				assert.Equal(t, typestr.Type{}, ts)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, e.typestr, ts.String())
			parsed, err := dtype.FromTypestr(typestr.MustParse(e.typestr))
			require.NoError(t, err)
			assert.Equal(t, e.et, parsed)
		})
	}
}

// The exact message the issue asks for, for the dtype jax exports.
func TestBfloat16HasNoTypestr(t *testing.T) {
	_, err := dtype.Bfloat16.Typestr()
	require.EqualError(t, err, "DLPack dtype bfloat16 (code 4, 16 bits) has no __sycl_usm_array_interface__ typestr")
	assert.NotContains(t, err.Error(), "typestr \"", "the problem is the dtype, not a typestring")
}

// TestEveryRefusedDtype: the DLPack dtypes no array can hold are
// BufferErrors whose message names the dtype as (code, bits, lanes) and
// says why.
func TestEveryRefusedDtype(t *testing.T) {
	dt := func(code dlabi.TypeCode, bits uint8, lanes uint16) dlabi.DataType {
		return dlabi.DataType{Code: code, Bits: bits, Lanes: lanes}
	}
	tests := []struct {
		dt  dlabi.DataType
		why string
	}{
		{dt(3, 64, 1), "kDLOpaqueHandle is not an element type"},
		{dt(3, 8, 1), "kDLOpaqueHandle is not an element type"},
		{dt(15, 6, 1), "kDLFloat6_e2m3fn is a sub-byte type"},
		{dt(16, 6, 1), "kDLFloat6_e3m2fn is a sub-byte type"},
		{dt(17, 4, 1), "kDLFloat4_e2m1fn is a sub-byte type"},
		{dt(17, 4, 2), "kDLFloat4_e2m1fn is a sub-byte type"}, // PyTorch's float4_e2m1fn_x2
		{dt(15, 8, 1), "kDLFloat6_e2m3fn is a sub-byte type"},
		{dt(18, 8, 1), "type code 18 is not defined by DLPack 1.3"},
		{dt(200, 32, 1), "type code 200 is not defined by DLPack 1.3"},
		{dt(255, 8, 1), "type code 255 is not defined by DLPack 1.3"},
		{dt(2, 32, 4), "lanes 4: vector types are not supported"},
		{dt(0, 8, 2), "lanes 2: vector types are not supported"},
		{dt(2, 32, 0), "lanes 0: vector types are not supported"},
		{dt(6, 8, 65535), "lanes 65535: vector types are not supported"},
		{dt(0, 0, 1), "kDLInt comes in 8, 16, 32, 64 bits"},
		{dt(0, 24, 1), "kDLInt comes in 8, 16, 32, 64 bits"},
		{dt(0, 128, 1), "kDLInt comes in 8, 16, 32, 64 bits"},
		{dt(1, 4, 1), "kDLUInt comes in 8, 16, 32, 64 bits"},
		{dt(2, 8, 1), "kDLFloat comes in 16, 32, 64 bits"},
		{dt(2, 12, 1), "kDLFloat comes in 16, 32, 64 bits"},
		{dt(2, 128, 1), "kDLFloat comes in 16, 32, 64 bits"},
		{dt(4, 32, 1), "kDLBfloat comes in 16 bits"},
		{dt(4, 8, 1), "kDLBfloat comes in 16 bits"},
		{dt(5, 16, 1), "kDLComplex comes in 32, 64, 128 bits"},
		{dt(5, 248, 1), "kDLComplex comes in 32, 64, 128 bits"},
		{dt(6, 1, 1), "kDLBool comes in 8 bits"},
		{dt(6, 16, 1), "kDLBool comes in 8 bits"},
	}
	// Every float8 code at any width but 8.
	for c := dlabi.Float8E3M4; c <= dlabi.Float8E8M0FNU; c++ {
		for _, bits := range []uint8{0, 4, 16} {
			tests = append(tests, struct {
				dt  dlabi.DataType
				why string
			}{dt(c, bits, 1), c.String() + " comes in 8 bits"})
		}
	}
	for _, tt := range tests {
		t.Run(tt.dt.String(), func(t *testing.T) {
			var (
				got dtype.Type
				err error
			)
			require.NotPanics(t, func() { got, err = dtype.FromDataType(tt.dt) })
			require.Error(t, err)
			assert.Equal(t, dtype.Type{}, got)
			assert.ErrorIs(t, err, usm.ErrBuffer)
			assert.NotErrorIs(t, err, usm.ErrValue)
			prefix := "DLPack dtype (code " + strconv.Itoa(int(tt.dt.Code)) + ", bits " + strconv.Itoa(int(tt.dt.Bits)) + ", lanes " + strconv.Itoa(int(tt.dt.Lanes)) + ") is not supported: "
			assert.True(t, strings.HasPrefix(err.Error(), prefix+tt.why), "%q, want %q", err, prefix+tt.why)
			assert.NotContains(t, err.Error(), "typestr")
		})
	}
}

// TestFromDataTypeExhaustive checks every (code, bits) pair with one lane:
// exactly the dtypes of elements are accepted.
func TestFromDataTypeExhaustive(t *testing.T) {
	want := map[dlabi.DataType]dtype.Type{}
	for _, e := range elements {
		want[e.dt] = e.et
	}
	accepted := 0
	for code := 0; code < 256; code++ {
		for bits := 0; bits < 256; bits++ {
			dt := dl(dlabi.TypeCode(code), uint8(bits))
			got, err := dtype.FromDataType(dt)
			et, ok := want[dt]
			if !ok {
				if !errors.Is(err, usm.ErrBuffer) {
					t.Fatalf("FromDataType(%v) = %v, %v; want a BufferError", dt, got, err)
				}
				continue
			}
			accepted++
			require.NoError(t, err, dt.String())
			assert.Equal(t, et, got)
		}
	}
	assert.Equal(t, len(elements), accepted)
}

// swappedOrder is the typestring byte order opposite to the host's.
var swappedOrder = func() typestr.ByteOrder {
	var x [2]byte
	binary.NativeEndian.PutUint16(x[:], 1)
	if x[0] == 1 {
		return typestr.Big
	}
	return typestr.Little
}()

// Every typestring of the SUAI subset in every byte order: its element
// type, which gives back the canonical typestring; a byte-swapped one has
// no DLPack dtype (BufferError, as NumPy refuses the export).
func TestFromTypestrEveryOrder(t *testing.T) {
	for _, e := range elements {
		if e.typestr == "" {
			continue
		}
		for _, o := range []string{"<", ">", "|", "=", ""} {
			s := o + e.typestr[1:]
			ts := typestr.MustParse(s)
			got, err := dtype.FromTypestr(ts)
			require.NoError(t, err, s)
			assert.Equal(t, e.size, got.Size(), s)
			assert.Equal(t, e.et, got.Native(), s)
			back, err := got.Typestr()
			require.NoError(t, err, s)
			assert.Equal(t, typestr.MustParse(ts.String()), back, s) // the canonical form
			swapped := e.size > 1 && ts.Order == swappedOrder
			assert.Equal(t, !swapped, got.IsNative(), s)
			dt, err := got.DataType()
			if !swapped {
				require.NoError(t, err, s)
				assert.Equal(t, e.dt, dt, s)
				assert.Equal(t, e.et, got, s)
				continue
			}
			assert.NotEqual(t, e.et, got, s)
			assert.Equal(t, e.name+", byte-swapped", got.String())
			require.Error(t, err, s)
			assert.ErrorIs(t, err, usm.ErrBuffer)
			assert.Contains(t, err.Error(), "DLPack only supports native byte order")
			assert.Contains(t, err.Error(), `"`+back.String()+`"`)
		}
	}
}

func TestInvalidType(t *testing.T) {
	var zero dtype.Type
	assert.False(t, zero.Valid())
	assert.Equal(t, 0, zero.Size())
	assert.Equal(t, "invalid dtype", zero.String())
	_, err := zero.DataType()
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = zero.Typestr()
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = dtype.FromTypestr(typestr.Type{})
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = dtype.FromTypestr(typestr.Type{Kind: typestr.Float, Size: 3, Order: typestr.Little})
	assert.ErrorIs(t, err, usm.ErrValue)
}

// FuzzFromDataType: FromDataType never panics; what it accepts is a
// single-lane, whole-byte dtype that maps back to itself, with a name and
// either a typestring that names it again or a BufferError naming it;
// everything else is a BufferError naming the dtype. Seeds live in
// testdata/fuzz/FuzzFromDataType.
func FuzzFromDataType(f *testing.F) {
	for _, e := range elements {
		f.Add(uint8(e.dt.Code), e.dt.Bits, e.dt.Lanes)
	}
	f.Fuzz(func(t *testing.T, code, bits uint8, lanes uint16) {
		dt := dlabi.DataType{Code: dlabi.TypeCode(code), Bits: bits, Lanes: lanes}
		got, err := dtype.FromDataType(dt)
		if err != nil {
			if !errors.Is(err, usm.ErrBuffer) || !strings.HasPrefix(err.Error(), "DLPack dtype "+dt.String()+" is not supported: ") {
				t.Fatalf("FromDataType(%v): %v, want a BufferError naming the dtype", dt, err)
			}
			return
		}
		if lanes != 1 || bits == 0 || bits%8 != 0 || !got.Valid() || got.Size() != int(bits/8) || !got.IsNative() {
			t.Fatalf("FromDataType(%v) accepted %#v", dt, got)
		}
		if back, err := got.DataType(); err != nil || back != dt {
			t.Fatalf("FromDataType(%v) = %v; DataType() = %v, %v", dt, got, back, err)
		}
		ts, err := got.Typestr()
		if err != nil {
			if !errors.Is(err, usm.ErrBuffer) || !strings.Contains(err.Error(), got.String()) {
				t.Fatalf("%v.Typestr(): %v", got, err)
			}
			return
		}
		if again, err := dtype.FromTypestr(typestr.MustParse(ts.String())); err != nil || again != got {
			t.Fatalf("%v has typestr %v, which names %v, %v", got, ts, again, err)
		}
	})
}
