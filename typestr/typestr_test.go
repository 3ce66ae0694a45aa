package typestr_test

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
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

			c := typestr.Canonical(got)
			assert.Equal(t, got.Kind, c.Kind)
			assert.Equal(t, got.Size, c.Size)
			if swapped {
				assert.Equal(t, swappedOrder, c.Order)
			} else {
				assert.Equal(t, typestr.NotApplicable, c.Order)
			}
			assert.Equal(t, c, typestr.Canonical(c), "canonical is idempotent")

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
			// The input, quoted at most 200 bytes of it (errkind.Quote):
			// a typestr of 10 kB made a message of 20 kB.
			assert.True(t, strings.HasPrefix(msg, "typestr "+errkind.Quote(tt.in)+": "), "message %q must quote the input", msg)
			assert.Less(t, len(msg), 1000)
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
	}
}
