package typestr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

// FuzzParse: Parse never panics; a parsed type formats to a typestring that
// re-parses to its canonical form, and names an element type that gives it
// back (native ones have a DLPack dtype); every error is a *typestr.Error quoting the input and matching
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
			if !strings.Contains(err.Error(), errkind.Quote(s)) || len(err.Error()) > 2000 {
				t.Fatalf("Parse(%q): message %q does not quote the input, at most 200 bytes of it", s, err)
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
		if back != typestr.Canonical(ty) {
			t.Fatalf("Parse(%q) = %#v; String %q re-parses to %#v, want %#v", s, ty, str, back, typestr.Canonical(ty))
		}
		if back.String() != str {
			t.Fatalf("String is not stable: %q then %q", str, back.String())
		}
		// Every typestring names an element type, whose typestring is
		// this one's canonical form; native ones have a DLPack dtype.
		et, err := dtype.FromTypestr(ty)
		if err != nil {
			t.Fatalf("dtype.FromTypestr(%q): %v", s, err)
		}
		if rt, err := et.Typestr(); err != nil || rt != typestr.Canonical(ty) {
			t.Fatalf("dtype.FromTypestr(%q).Typestr() = %#v, %v; want %#v", s, rt, err, typestr.Canonical(ty))
		}
		if _, err := et.DataType(); (err == nil) != ty.IsNative() {
			t.Fatalf("%q (native %v): DataType error %v", s, ty.IsNative(), err)
		}
	})
}
