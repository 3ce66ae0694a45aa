package usm_test

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/usm"
)

// FuzzParse feeds Parse hostile SUAI dicts two ways: as JSON text (through
// ParseJSON) and as a dict built from the scalar inputs, the way Go and
// Python callers hand one over. Parse must never panic; a success must have
// a computable window and survive Map→Parse; a failure must carry exactly
// one of dpctl's error kinds.
func FuzzParse(f *testing.F) {
	f.Add(`{"data":[4096,false],"shape":[10],"strides":[2],"offset":8,"typestr":"|u1","version":1,"syclobj":"host"}`,
		int64(4096), true, int64(10), int64(1), int64(2), int64(0), int64(8), "|u1", "host", uint8(0))
	f.Add(`{"data":[4096,true],"shape":[2,2],"strides":[10,-2],"offset":9,"typestr":"|u1","version":1,"syclobj":"0"}`,
		int64(4096), false, int64(2), int64(2), int64(10), int64(-2), int64(9), "|u1", "0", uint8(1))
	f.Add(`{"offset":null,"version":"1"}`, int64(-1), false, int64(-1), int64(3), int64(0), int64(0), int64(0), "f3", "", uint8(2))
	f.Add(`{"data":[1,2,3],"version":true}`, int64(1)<<62, false, int64(1)<<62, int64(4), int64(1)<<62, int64(1), int64(-1), "<f8", "opencl:gpu", uint8(3))
	f.Fuzz(func(t *testing.T, js string, ptr int64, ro bool, d0, d1, s0, s1, offset int64, ts, so string, mode uint8) {
		in, err := usm.ParseJSON([]byte(js))
		checkParse(t, in, err)
		// The JSON reader and the Go-map reader agree on the same dict.
		if jm := decodeObject(js); jm != nil {
			in2, err2 := usm.Parse(jm)
			if !sameOutcome(err, err2) || (err == nil && !reflect.DeepEqual(in, in2)) {
				t.Fatalf("ParseJSON and Parse disagree on %s:\n%+v, %v\n%+v, %v", js, in, err, in2, err2)
			}
		}

		m := map[string]any{
			"data":    []any{ptr, ro},
			"shape":   []any{d0, d1},
			"strides": []int64{s0, s1},
			"offset":  offset,
			"typestr": ts,
			"version": 1,
			"syclobj": so,
		}
		// The mode bits take keys away or swap in other representations.
		if mode&1 != 0 {
			m["strides"] = nil
		}
		if mode&2 != 0 {
			m["shape"] = []int64{d0}
			m["strides"] = []any{s0}
		}
		if mode&4 != 0 {
			m["data"] = [2]any{json.Number(js), ro}
		}
		if mode&8 != 0 {
			m["shape"] = []any{}
			m["strides"] = []int64{}
		}
		if mode&16 != 0 {
			m["offset"] = json.Number(ts)
		}
		if mode&32 != 0 {
			m["version"] = ro
		}
		if mode&64 != 0 {
			m["data"] = []uint64{uint64(ptr), uint64(d0)}
		}
		if mode&128 != 0 {
			delete(m, strings.TrimSpace(so))
		}
		in, err = usm.Parse(m)
		checkParse(t, in, err)
	})
}

func checkParse(t *testing.T, in usm.Interface, err error) {
	t.Helper()
	if err != nil {
		n := 0
		for _, k := range kinds {
			if errors.Is(err, k) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("error matches %d of ErrType/ErrValue/ErrOverflow: %v", n, err)
		}
		if usm.PythonException(err) == "RuntimeError" {
			t.Fatalf("error maps to RuntimeError: %v", err)
		}
		return
	}
	w, err := in.Window()
	if err != nil {
		t.Fatalf("parsed, but Window failed: %v (%+v)", err, in)
	}
	if w.Len() < 0 || (w.Empty() && w.Lo != in.Offset*int64(in.DType.Size())) {
		t.Fatalf("bad window %v for %+v", w, in)
	}
	m, err := in.Map()
	if err != nil {
		t.Fatalf("parsed, but Map failed: %v (%+v)", err, in)
	}
	again, err := usm.Parse(m)
	if err != nil {
		t.Fatalf("Map() does not re-parse: %v (%+v)", err, in)
	}
	want := in
	if usm.IsCContiguous(in.Shape, in.Strides) {
		want.Strides = nil
	}
	if !reflect.DeepEqual(want, again) {
		t.Fatalf("round trip changed the interface:\n got %+v\nwant %+v", again, want)
	}
	w2, err := again.Window()
	if err != nil || w2 != w {
		t.Fatalf("round trip changed the window: %v → %v (%v)", w, w2, err)
	}
}

// sameOutcome reports whether two parse errors are both nil, or match the
// same kinds and name the same field.
func sameOutcome(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	for _, k := range kinds {
		if errors.Is(a, k) != errors.Is(b, k) {
			return false
		}
	}
	var ma, mb *usm.MalformedError
	return errors.As(a, &ma) == errors.As(b, &mb) && (ma == nil || ma.Field == mb.Field)
}

// decodeObject decodes a JSON object as ParseJSON frames it (nothing after
// it), with numbers as json.Number; nil if js is not one.
func decodeObject(js string) map[string]any {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(js))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return nil
	}
	if _, err := d.Token(); err != io.EOF {
		return nil
	}
	return m
}
