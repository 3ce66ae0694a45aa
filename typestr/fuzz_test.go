package typestr_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

// FuzzParse: Parse never panics; a parsed type formats to a typestring that
// re-parses to its canonical form, and native types round-trip through
// DLPack; every error is a *typestr.Error quoting the input and matching
// usm.ErrValue. Seeds live in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"<f4", "|b1", "c16", ">i8", "=u2", "", "<f04", "i16", "é4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ty, err := typestr.Parse(s)
		if err != nil {
			if !errors.Is(err, usm.ErrValue) {
				t.Fatalf("Parse(%q): error %v does not match usm.ErrValue", s, err)
			}
			var te *typestr.Error
			if !errors.As(err, &te) || te.Input != s {
				t.Fatalf("Parse(%q): error %#v is not a *typestr.Error with the input", s, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("Parse(%q): message %q does not quote the input", s, err)
			}
			if ty != (typestr.Type{}) {
				t.Fatalf("Parse(%q) failed but returned %#v", s, ty)
			}
			return
		}
		if !ty.Valid() {
			t.Fatalf("Parse(%q) = %#v, which is not Valid", s, ty)
		}
		if len(s) > 4 {
			t.Fatalf("Parse(%q) accepted a string longer than any valid typestr", s)
		}
		str := ty.String()
		back, err := typestr.Parse(str)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not re-parse: %v", s, str, err)
		}
		if back != ty.Canonical() {
			t.Fatalf("Parse(%q) = %#v; String %q re-parses to %#v, want %#v", s, ty, str, back, ty.Canonical())
		}
		if back.String() != str {
			t.Fatalf("String is not stable: %q then %q", str, back.String())
		}
		dt, err := ty.DataType()
		if !ty.IsNative() {
			if !errors.Is(err, usm.ErrBuffer) {
				t.Fatalf("%q.DataType() = %v, %v; want an ErrBuffer error", s, dt, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q.DataType(): %v", s, err)
		}
		rt, err := typestr.FromDataType(dt)
		if err != nil {
			t.Fatalf("FromDataType(%v) (from %q): %v", dt, s, err)
		}
		if rt != ty.Canonical() {
			t.Fatalf("FromDataType(DataType(%q)) = %#v, want %#v", s, rt, ty.Canonical())
		}
	})
}

// FuzzFromDataType: FromDataType never panics, accepts only single-lane
// whole-byte dtypes that map back to themselves, and refuses everything
// else with a usm.ErrBuffer error naming the dtype. Seeds live in
// testdata/fuzz/FuzzFromDataType.
func FuzzFromDataType(f *testing.F) {
	f.Add(uint8(dlabi.Float), uint8(32), uint16(1))
	f.Add(uint8(dlabi.Bool), uint8(8), uint16(1))
	f.Add(uint8(dlabi.Bfloat), uint8(16), uint16(1))
	f.Fuzz(func(t *testing.T, code, bits uint8, lanes uint16) {
		dt := dlabi.DataType{Code: dlabi.TypeCode(code), Bits: bits, Lanes: lanes}
		ty, err := typestr.FromDataType(dt)
		if err != nil {
			if !errors.Is(err, usm.ErrBuffer) {
				t.Fatalf("FromDataType(%v): error %v does not match usm.ErrBuffer", dt, err)
			}
			if !strings.Contains(err.Error(), dt.String()) {
				t.Fatalf("FromDataType(%v): message %q does not name the dtype", dt, err)
			}
			return
		}
		if lanes != 1 || bits == 0 || bits%8 != 0 {
			t.Fatalf("FromDataType(%v) accepted = %#v", dt, ty)
		}
		switch dt.Code {
		case dlabi.Int, dlabi.UInt, dlabi.Float, dlabi.Complex, dlabi.Bool:
		default:
			t.Fatalf("FromDataType(%v) accepted code %v", dt, dt.Code)
		}
		if !ty.Valid() || ty != ty.Canonical() || ty.Order != typestr.NotApplicable {
			t.Fatalf("FromDataType(%v) = %#v, not a valid canonical type", dt, ty)
		}
		back, err := ty.DataType()
		if err != nil || back != dt {
			t.Fatalf("FromDataType(%v) = %v; DataType() = %v, %v", dt, ty, back, err)
		}
		if p, err := typestr.Parse(ty.String()); err != nil || p != ty {
			t.Fatalf("FromDataType(%v) = %v does not re-parse: %v, %v", dt, ty, p, err)
		}
	})
}
