package typestr_test

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

// hostOrder is '<' on a little-endian machine and '>' on a big-endian one;
// swappedOrder is the other one.
var hostOrder, swappedOrder = func() (typestr.ByteOrder, typestr.ByteOrder) {
	var x [2]byte
	binary.NativeEndian.PutUint16(x[:], 1)
	if x[0] == 1 {
		return typestr.Little, typestr.Big
	}
	return typestr.Big, typestr.Little
}()

// kindSize is one element type of the SUAI subset.
type kindSize struct {
	kind typestr.Kind
	size int
}

// subset lists every kind/size pair the package must accept.
var subset = []kindSize{
	{typestr.Bool, 1},
	{typestr.Int, 1}, {typestr.Int, 2}, {typestr.Int, 4}, {typestr.Int, 8},
	{typestr.Uint, 1}, {typestr.Uint, 2}, {typestr.Uint, 4}, {typestr.Uint, 8},
	{typestr.Float, 2}, {typestr.Float, 4}, {typestr.Float, 8},
	{typestr.Complex, 8}, {typestr.Complex, 16},
}

// orders lists every accepted byte-order prefix; "" is the bare form.
var orders = []string{"<", ">", "|", "=", ""}

func body(ks kindSize) string { return string(rune(ks.kind)) + strconv.Itoa(ks.size) }

// allValid returns every valid typestring with its expected parse.
func allValid() map[string]typestr.Type {
	m := make(map[string]typestr.Type)
	for _, ks := range subset {
		for _, o := range orders {
			order := typestr.Native
			if o != "" {
				order = typestr.ByteOrder(o[0])
			}
			m[o+body(ks)] = typestr.Type{Kind: ks.kind, Size: ks.size, Order: order}
		}
	}
	return m
}

func TestParseAllValid(t *testing.T) {
	valid := allValid()
	require.Len(t, valid, len(subset)*len(orders))
	for s, want := range valid {
		t.Run(s, func(t *testing.T) {
			got, err := typestr.Parse(s)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.True(t, got.Valid())

			// Canonical form: '|' unless the type is multi-byte and stored
			// in the non-host order, which keeps its explicit '<' or '>'.
			wantStr := "|" + s[len(s)-len(body(kindSize{got.Kind, got.Size})):]
			swapped := got.Size > 1 && got.Order == swappedOrder
			if swapped {
				wantStr = string(rune(swappedOrder)) + wantStr[1:]
			}
			assert.Equal(t, wantStr, got.String())
			assert.Equal(t, !swapped, got.IsNative())

			c := got.Canonical()
			assert.Equal(t, got.Kind, c.Kind)
			assert.Equal(t, got.Size, c.Size)
			if swapped {
				assert.Equal(t, swappedOrder, c.Order)
			} else {
				assert.Equal(t, typestr.NotApplicable, c.Order)
			}
			assert.Equal(t, c, c.Canonical(), "Canonical is idempotent")

			// String re-parses to the canonical type.
			back, err := typestr.Parse(got.String())
			require.NoError(t, err)
			assert.Equal(t, c, back)
			assert.Equal(t, typestr.MustParse(s), got)
		})
	}
}

// TestParseExplicit spells out the rules on a few representative inputs
// (on a little-endian host, which is where the '>' expectations hold).
func TestParseExplicit(t *testing.T) {
	if hostOrder != typestr.Little {
		t.Skip("expectations written for a little-endian host")
	}
	tests := []struct {
		in    string
		kind  typestr.Kind
		size  int
		order typestr.ByteOrder
		str   string
	}{
		{"<f4", typestr.Float, 4, typestr.Little, "|f4"},
		{">f4", typestr.Float, 4, typestr.Big, ">f4"},
		{"|f4", typestr.Float, 4, typestr.NotApplicable, "|f4"},
		{"=f4", typestr.Float, 4, typestr.Native, "|f4"},
		{"f4", typestr.Float, 4, typestr.Native, "|f4"},
		{"|b1", typestr.Bool, 1, typestr.NotApplicable, "|b1"},
		{">b1", typestr.Bool, 1, typestr.Big, "|b1"},
		{">i1", typestr.Int, 1, typestr.Big, "|i1"},
		{">u1", typestr.Uint, 1, typestr.Big, "|u1"},
		{"<i8", typestr.Int, 8, typestr.Little, "|i8"},
		{">i8", typestr.Int, 8, typestr.Big, ">i8"},
		{">u2", typestr.Uint, 2, typestr.Big, ">u2"},
		{"u8", typestr.Uint, 8, typestr.Native, "|u8"},
		{"<f2", typestr.Float, 2, typestr.Little, "|f2"},
		{"f8", typestr.Float, 8, typestr.Native, "|f8"},
		{"<c8", typestr.Complex, 8, typestr.Little, "|c8"},
		{">c16", typestr.Complex, 16, typestr.Big, ">c16"},
		{"c16", typestr.Complex, 16, typestr.Native, "|c16"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := typestr.Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.kind, got.Kind)
			assert.Equal(t, tt.size, got.Size)
			assert.Equal(t, tt.order, got.Order)
			assert.Equal(t, tt.str, got.String())
		})
	}
}

func TestPredeclaredTypes(t *testing.T) {
	tests := map[string]typestr.Type{
		"|b1": typestr.Bool8,
		"|i1": typestr.Int8, "|i2": typestr.Int16, "|i4": typestr.Int32, "|i8": typestr.Int64,
		"|u1": typestr.Uint8, "|u2": typestr.Uint16, "|u4": typestr.Uint32, "|u8": typestr.Uint64,
		"|f2": typestr.Float16, "|f4": typestr.Float32, "|f8": typestr.Float64,
		"|c8": typestr.Complex64, "|c16": typestr.Complex128,
	}
	for s, want := range tests {
		got, err := typestr.Parse(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
		assert.Equal(t, s, want.String(), s)
		assert.Equal(t, want, want.Canonical(), s)
	}
}

func TestParseMalformed(t *testing.T) {
	tests := []struct {
		in     string
		reason string // substring of the error message
	}{
		{"", "want [byte order]<kind><size>"},
		{"f", "want [byte order]<kind><size>"},
		{"<", "want [byte order]<kind><size>"},
		{"|", "want [byte order]<kind><size>"},
		{"<f", "want [byte order]<kind><size>"},
		{"4", "want [byte order]<kind><size>"},
		{"?", "want [byte order]<kind><size>"},
		{"<x4", `kind "x" is not one of b, i, u, f, c`},
		{"O", "want [byte order]<kind><size>"},
		{"|O8", `kind "O"`},
		{"U8", `kind "U"`},
		{"<U8", `kind "U"`},
		{"S4", `kind "S"`},
		{"V8", `kind "V"`},
		{"M8", `kind "M"`},
		{"<M8", `kind "M"`},
		{"m8", `kind "m"`},
		{"<m8", `kind "m"`},
		{"F4", `kind "F"`},
		{"<<f4", `kind "<"`},
		{"||b1", `kind "|"`},
		{"4f", `kind "4"`},
		{"f3", "item size 3 is not supported for kind 'f'"},
		{"<f1", "item size 1 is not supported for kind 'f'"},
		{"f16", "item size 16 is not supported for kind 'f'"},
		{"i16", "item size 16 is not supported for kind 'i'"},
		{"u16", "item size 16 is not supported for kind 'u'"},
		{"i3", "item size 3 is not supported for kind 'i'"},
		{"b2", "item size 2 is not supported for kind 'b'"},
		{"|b8", "item size 8 is not supported for kind 'b'"},
		{"c4", "item size 4 is not supported for kind 'c'"},
		{"c32", "item size 32 is not supported for kind 'c'"},
		{"<f999", "item size 999 is not supported"},
		{"<f04", `item size "04" is not a decimal byte count`},
		{"<f0", `item size "0" is not a decimal byte count`},
		{"ff4", `item size "f4" is not a decimal byte count`},
		{"<f4 ", `item size "4 " is not a decimal byte count`},
		{" <f4", `kind " "`},
		{"<f4\x00", `item size "4\x00" is not a decimal byte count`},
		{"<f+4", `item size "+4"`},
		{"<f-4", `item size "-4"`},
		{"<f4.0", `item size "4.0"`},
		{"<f1000", `item size "1000" is not a decimal byte count`},
		{"<f" + strings.Repeat("4", 1000), "is not a decimal byte count"},
		{strings.Repeat("f", 10000), "is not a decimal byte count"},
		{strings.Repeat("<", 10000), `kind "<"`},
		{"é4", `kind "é"`},
		{"<é4", `kind "é"`},
		{"\xff4", `kind "\xff"`},
		{"<f４", "is not a decimal byte count"}, // fullwidth digit four
		{"float32", "is not a decimal byte count"},
		{"invalid", `item size "nvalid" is not a decimal byte count`},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 20 {
			name = name[:20] + "..."
		}
		t.Run(strconv.Quote(name), func(t *testing.T) {
			var (
				got typestr.Type
				err error
			)
			require.NotPanics(t, func() { got, err = typestr.Parse(tt.in) })
			require.Error(t, err)
			assert.Equal(t, typestr.Type{}, got, "a failed Parse returns the zero Type")
			assert.False(t, got.Valid())

			var te *typestr.Error
			require.ErrorAs(t, err, &te)
			assert.Equal(t, tt.in, te.Input)
			assert.True(t, errors.Is(err, usm.ErrValue), "must match usm.ErrValue")
			assert.False(t, errors.Is(err, usm.ErrBuffer), "must not match usm.ErrBuffer")
			assert.False(t, errors.Is(err, usm.ErrType))
			assert.Equal(t, "ValueError", usm.PythonException(err))

			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "typestr "+strconv.Quote(tt.in)+": "), "message %q must quote the input", msg)
			if tt.reason != "" {
				assert.Contains(t, msg, tt.reason)
			}
			assert.Panics(t, func() { typestr.MustParse(tt.in) })
		})
	}
}

func TestInvalidTypeValue(t *testing.T) {
	bad := []typestr.Type{
		{},
		{Kind: typestr.Float, Size: 4}, // no order
		{Kind: typestr.Float, Size: 3, Order: typestr.Little},       // bad size
		{Kind: 'x', Size: 4, Order: typestr.Little},                 // bad kind
		{Kind: typestr.Bool, Size: 2, Order: typestr.NotApplicable}, // bad bool size
		{Kind: typestr.Int, Size: -4, Order: typestr.Native},
		{Kind: typestr.Float, Size: 4, Order: '!'},
	}
	for _, ty := range bad {
		assert.False(t, ty.Valid(), "%#v", ty)
		assert.Equal(t, "invalid typestr", ty.String(), "%#v", ty)
		dt, err := ty.DataType()
		require.Error(t, err, "%#v", ty)
		assert.Equal(t, dlabi.DataType{}, dt)
		assert.True(t, errors.Is(err, usm.ErrValue), "%#v: %v", ty, err)
		var te *typestr.Error
		assert.ErrorAs(t, err, &te)
	}
}

// dlTable is the expected DLPack encoding of every native type.
var dlTable = []struct {
	ts string
	dt dlabi.DataType
}{
	{"|b1", dlabi.DataType{Code: dlabi.Bool, Bits: 8, Lanes: 1}},
	{"|i1", dlabi.DataType{Code: dlabi.Int, Bits: 8, Lanes: 1}},
	{"|i2", dlabi.DataType{Code: dlabi.Int, Bits: 16, Lanes: 1}},
	{"|i4", dlabi.DataType{Code: dlabi.Int, Bits: 32, Lanes: 1}},
	{"|i8", dlabi.DataType{Code: dlabi.Int, Bits: 64, Lanes: 1}},
	{"|u1", dlabi.DataType{Code: dlabi.UInt, Bits: 8, Lanes: 1}},
	{"|u2", dlabi.DataType{Code: dlabi.UInt, Bits: 16, Lanes: 1}},
	{"|u4", dlabi.DataType{Code: dlabi.UInt, Bits: 32, Lanes: 1}},
	{"|u8", dlabi.DataType{Code: dlabi.UInt, Bits: 64, Lanes: 1}},
	{"|f2", dlabi.DataType{Code: dlabi.Float, Bits: 16, Lanes: 1}},
	{"|f4", dlabi.DataType{Code: dlabi.Float, Bits: 32, Lanes: 1}},
	{"|f8", dlabi.DataType{Code: dlabi.Float, Bits: 64, Lanes: 1}},
	{"|c8", dlabi.DataType{Code: dlabi.Complex, Bits: 64, Lanes: 1}},
	{"|c16", dlabi.DataType{Code: dlabi.Complex, Bits: 128, Lanes: 1}},
}

func TestDLPackCodesMatchHeader(t *testing.T) {
	// dlpack.h values; the mapping below relies on them.
	assert.EqualValues(t, 0, dlabi.Int)
	assert.EqualValues(t, 1, dlabi.UInt)
	assert.EqualValues(t, 2, dlabi.Float)
	assert.EqualValues(t, 3, dlabi.OpaqueHandle)
	assert.EqualValues(t, 4, dlabi.Bfloat)
	assert.EqualValues(t, 5, dlabi.Complex)
	assert.EqualValues(t, 6, dlabi.Bool)
}

func TestDataTypeMapping(t *testing.T) {
	require.Len(t, dlTable, len(subset))
	for _, tt := range dlTable {
		t.Run(tt.ts, func(t *testing.T) {
			ty := typestr.MustParse(tt.ts)
			dt, err := ty.DataType()
			require.NoError(t, err)
			assert.Equal(t, tt.dt, dt)

			back, err := typestr.FromDataType(tt.dt)
			require.NoError(t, err)
			assert.Equal(t, ty, back)
			assert.Equal(t, tt.ts, back.String())
		})
	}
	// Every natively ordered spelling maps to the same dtype.
	for _, tt := range dlTable {
		for _, o := range []string{"=", "", string(rune(hostOrder))} {
			s := o + tt.ts[1:]
			dt, err := typestr.MustParse(s).DataType()
			require.NoError(t, err, s)
			assert.Equal(t, tt.dt, dt, s)
		}
	}
}

func TestDataTypeRefusesByteSwapped(t *testing.T) {
	sw := string(rune(swappedOrder))
	for _, ks := range subset {
		s := sw + body(ks)
		ty := typestr.MustParse(s)
		dt, err := ty.DataType()
		if ks.size == 1 {
			// One-byte types have no byte order.
			require.NoError(t, err, s)
			assert.NotEqual(t, dlabi.DataType{}, dt)
			continue
		}
		require.Error(t, err, s)
		assert.Equal(t, dlabi.DataType{}, dt)
		assert.True(t, errors.Is(err, usm.ErrBuffer), "%s: %v", s, err)
		assert.False(t, errors.Is(err, usm.ErrValue), "%s: %v", s, err)
		assert.Equal(t, "BufferError", usm.PythonException(err))
		var te *typestr.Error
		require.ErrorAs(t, err, &te)
		assert.Equal(t, s, te.Input)
		assert.Contains(t, err.Error(), strconv.Quote(s))
		assert.Contains(t, err.Error(), "native byte order")
	}
}

func TestDataTypeBigEndianFloat32(t *testing.T) {
	if hostOrder != typestr.Little {
		t.Skip("little-endian host only")
	}
	_, err := typestr.MustParse(">f4").DataType()
	require.Error(t, err)
	assert.ErrorIs(t, err, usm.ErrBuffer)
	assert.Equal(t, `typestr ">f4": DLPack only supports native byte order`, err.Error())
}

func TestFromDataTypeRefused(t *testing.T) {
	dt := func(code dlabi.TypeCode, bits uint8, lanes uint16) dlabi.DataType {
		return dlabi.DataType{Code: code, Bits: bits, Lanes: lanes}
	}
	tests := []struct {
		name   string
		dt     dlabi.DataType
		reason string
	}{
		{"bfloat16", dt(dlabi.Bfloat, 16, 1), "kDLBfloat has no typestr"},
		{"opaque", dt(dlabi.OpaqueHandle, 64, 1), "kDLOpaqueHandle has no typestr"},
		{"unknown code 18", dt(18, 32, 1), "DLDataTypeCode(18) has no typestr"},
		{"unknown code 200", dt(200, 32, 1), "DLDataTypeCode(200) has no typestr"},
		{"unknown code 255", dt(255, 8, 1), "DLDataTypeCode(255) has no typestr"},
		{"lanes 4", dt(dlabi.Float, 32, 4), "lanes 4 != 1"},
		{"lanes 2", dt(dlabi.Int, 8, 2), "lanes 2 != 1"},
		{"lanes 0", dt(dlabi.Float, 32, 0), "lanes 0 != 1"},
		{"lanes 65535", dt(dlabi.Bool, 8, 65535), "lanes 65535 != 1"},
		{"bits 0", dt(dlabi.Int, 0, 1), "bit width 0"},
		{"bits 1", dt(dlabi.Bool, 1, 1), "bit width 1"},
		{"bits 4", dt(dlabi.UInt, 4, 1), "bit width 4"},
		{"bits 12", dt(dlabi.Float, 12, 1), "bit width 12"},
		{"bits 31", dt(dlabi.Int, 31, 1), "bit width 31"},
		{"int24", dt(dlabi.Int, 24, 1), "24-bit kDLInt has no typestr"},
		{"uint24", dt(dlabi.UInt, 24, 1), "24-bit kDLUInt has no typestr"},
		{"int128", dt(dlabi.Int, 128, 1), "128-bit kDLInt has no typestr"},
		{"float8", dt(dlabi.Float, 8, 1), "8-bit kDLFloat has no typestr"},
		{"float128", dt(dlabi.Float, 128, 1), "128-bit kDLFloat has no typestr"},
		{"bool16", dt(dlabi.Bool, 16, 1), "16-bit kDLBool has no typestr"},
		{"complex32", dt(dlabi.Complex, 32, 1), "32-bit kDLComplex has no typestr"},
		{"complex256", dt(dlabi.Complex, 248, 1), "248-bit kDLComplex has no typestr"},
		{"fp6", dt(15, 6, 1), "bit width 6"},
		{"fp4", dt(dlabi.Float4E2M1FN, 4, 1), "bit width 4"},
		{"fp4x2", dt(dlabi.Float4E2M1FN, 4, 2), "lanes 2 != 1"},
	}
	// Every FP8/FP6/FP4 code, at a byte-sized width.
	for code := dlabi.Float8E3M4; code <= dlabi.Float4E2M1FN; code++ {
		tests = append(tests, struct {
			name   string
			dt     dlabi.DataType
			reason string
		}{"fp code " + strconv.Itoa(int(code)), dt(code, 8, 1), code.String() + " has no typestr"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				got typestr.Type
				err error
			)
			require.NotPanics(t, func() { got, err = typestr.FromDataType(tt.dt) })
			require.Error(t, err)
			assert.Equal(t, typestr.Type{}, got)
			assert.True(t, errors.Is(err, usm.ErrBuffer), "must match usm.ErrBuffer: %v", err)
			assert.False(t, errors.Is(err, usm.ErrValue))
			var te *typestr.Error
			require.ErrorAs(t, err, &te)
			assert.Equal(t, tt.dt.String(), te.Input)
			assert.Contains(t, err.Error(), strconv.Quote(tt.dt.String()), "message names the dtype")
			assert.Contains(t, err.Error(), tt.reason)
		})
	}
}

func TestFromDataTypeExplicitEncodings(t *testing.T) {
	got, err := typestr.FromDataType(dlabi.DataType{Code: 6, Bits: 8, Lanes: 1})
	require.NoError(t, err)
	assert.Equal(t, typestr.Bool8, got)

	// (kDLUInt, 8) is uint8, never bool.
	got, err = typestr.FromDataType(dlabi.DataType{Code: 1, Bits: 8, Lanes: 1})
	require.NoError(t, err)
	assert.Equal(t, typestr.Uint8, got)

	got, err = typestr.FromDataType(dlabi.DataType{Code: 2, Bits: 16, Lanes: 1})
	require.NoError(t, err)
	assert.Equal(t, typestr.Float16, got)

	got, err = typestr.FromDataType(dlabi.DataType{Code: 5, Bits: 64, Lanes: 1})
	require.NoError(t, err)
	assert.Equal(t, typestr.Complex64, got)

	got, err = typestr.FromDataType(dlabi.DataType{Code: 5, Bits: 128, Lanes: 1})
	require.NoError(t, err)
	assert.Equal(t, typestr.Complex128, got)
}

// TestRoundTripAllValid: FromDataType(DataType(t)) == t.Canonical() for every
// natively ordered valid type.
func TestRoundTripAllValid(t *testing.T) {
	native := 0
	for s, ty := range allValid() {
		dt, err := ty.DataType()
		if !ty.IsNative() {
			assert.ErrorIs(t, err, usm.ErrBuffer, s)
			continue
		}
		native++
		require.NoError(t, err, s)
		back, err := typestr.FromDataType(dt)
		require.NoError(t, err, s)
		assert.Equal(t, ty.Canonical(), back, s)
	}
	// 14 types × {'|', '=', "", host order}, plus the 3 one-byte types
	// (b1, i1, u1) in the swapped order.
	assert.Equal(t, len(subset)*4+3, native)
}

// TestFromDataTypeExhaustive checks every (code, bits) pair with one lane:
// exactly the 14 dtypes of dlTable are accepted, and each maps back to
// itself.
func TestFromDataTypeExhaustive(t *testing.T) {
	want := make(map[dlabi.DataType]string, len(dlTable))
	for _, tt := range dlTable {
		want[tt.dt] = tt.ts
	}
	accepted := 0
	for code := 0; code < 256; code++ {
		for bits := 0; bits < 256; bits++ {
			dt := dlabi.DataType{Code: dlabi.TypeCode(code), Bits: uint8(bits), Lanes: 1}
			ty, err := typestr.FromDataType(dt)
			ts, ok := want[dt]
			if !ok {
				if err == nil || !errors.Is(err, usm.ErrBuffer) {
					t.Fatalf("FromDataType(%v) = %v, %v; want an ErrBuffer error", dt, ty, err)
				}
				continue
			}
			accepted++
			require.NoError(t, err, dt.String())
			assert.Equal(t, ts, ty.String())
			back, err := ty.DataType()
			require.NoError(t, err)
			assert.Equal(t, dt, back)
		}
	}
	assert.Equal(t, len(dlTable), accepted)
}
