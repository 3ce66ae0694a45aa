package syclobj_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// FuzzParseSelector: ParseSelector never panics; a parsed selector keeps its
// text, has one filter per comma-separated part, re-parses from its
// canonical filter strings, and resolves against a fixed device list to the
// index the reference rule gives (or a no-match SelectorError). Errors are
// *SelectorError values matching usm.ErrValue. Seeds live in
// testdata/fuzz/FuzzParseSelector.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"opencl:cpu:0", "gpu:1", "*:*:3", "2", "host", "opencl:cpu,level_zero:gpu", "", "gpu:opencl", "0:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := syclobj.ParseSelector(s)
		if err != nil {
			var se *syclobj.SelectorError
			if !errors.As(err, &se) || se.Selector != s || se.Reason == "" {
				t.Fatalf("ParseSelector(%q): error %#v is not a SelectorError for the input", s, err)
			}
			if !errors.Is(err, usm.ErrValue) {
				t.Fatalf("ParseSelector(%q): error %v does not match usm.ErrValue", s, err)
			}
			if sel != (syclobj.Selector{}) {
				t.Fatalf("ParseSelector(%q) failed but returned %v", s, sel)
			}
			return
		}
		if sel.String() != s || sel == (syclobj.Selector{}) {
			t.Fatalf("ParseSelector(%q) = %q (zero %v)", s, sel.String(), sel == (syclobj.Selector{}))
		}
		filters := sel.Filters()
		if len(filters) != strings.Count(s, ",")+1 {
			t.Fatalf("ParseSelector(%q): %d filters", s, len(filters))
		}
		parts := make([]string, len(filters))
		for i, fl := range filters {
			if fl.Number < -1 || fl.Number > 1<<31-1 {
				t.Fatalf("ParseSelector(%q): filter %d number %d out of range", s, i, fl.Number)
			}
			parts[i] = fl.String()
		}
		canon := strings.Join(parts, ",")
		again, err := syclobj.ParseSelector(canon)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canon, s, err)
		}
		if got := again.Filters(); len(got) != len(filters) {
			t.Fatalf("canonical form %q of %q: filters %v, want %v", canon, s, got, filters)
		} else {
			for i := range got {
				if got[i] != filters[i] {
					t.Fatalf("canonical form %q of %q: filters %v, want %v", canon, s, got, filters)
				}
			}
		}

		for _, devs := range [][]syclobj.Device{devices, nil} {
			idx, err := sel.Resolve(devs)
			want := refResolve(filters, devs)
			if err != nil {
				var se *syclobj.SelectorError
				if !errors.As(err, &se) || !errors.Is(err, usm.ErrValue) {
					t.Fatalf("Resolve(%q): error %#v is not a SelectorError", s, err)
				}
				if idx != -1 || want != -1 {
					t.Fatalf("Resolve(%q) = %d, %v; reference gives %d", s, idx, err, want)
				}
				continue
			}
			if idx < 0 || idx >= len(devs) || idx != want {
				t.Fatalf("Resolve(%q) = %d; reference gives %d (of %d devices)", s, idx, want, len(devs))
			}
		}
	})
}
