package usm_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

// kinds are the error kinds Parse may report; exactly one must match.
var kinds = []error{usm.ErrType, usm.ErrValue, usm.ErrOverflow}

// requireKind asserts that err matches want and no other Parse kind.
func requireKind(t testing.TB, err error, want error) {
	t.Helper()
	require.Error(t, err)
	for _, k := range kinds {
		if k == want { //nolint:errorlint // which sentinel of the list, not error matching
			require.ErrorIs(t, err, k, "%v", err)
		} else {
			require.NotErrorIs(t, err, k, "%v", err)
		}
	}
}

// validDict is a well-formed SUAI dict: a 2×3 float32 array.
func validDict() map[string]any {
	return map[string]any{
		"data":    []any{uint64(0x10000), false},
		"shape":   []any{2, 3},
		"strides": nil,
		"typestr": "|f4",
		"offset":  0,
		"version": 1,
		"syclobj": "host",
	}
}

func with(changes map[string]any, deletes ...string) map[string]any {
	m := validDict()
	for k, v := range changes {
		m[k] = v
	}
	for _, k := range deletes {
		delete(m, k)
	}
	return m
}

func TestParseValid(t *testing.T) {
	in, err := usm.Parse(validDict())
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, in.Shape)
	assert.Equal(t, dtype.Float32, in.DType)
	assert.Equal(t, uintptr(0x10000), in.Data)
	assert.False(t, in.ReadOnly)
	assert.Nil(t, in.Strides)
	assert.Equal(t, int64(0), in.Offset)
	assert.Equal(t, syclobj.MustParseSelector("host"), in.Syclobj)
	assert.Equal(t, 1, in.Version)
	w, err := in.Window()
	require.NoError(t, err)
	assert.Equal(t, usm.Window{Lo: 0, Hi: 24}, w)
}

// TestParseErrors follows dpctl's SUAI parser rule by rule, in its order
// (RATIONALE.md, "Strict SUAI parsing").
func TestParseErrors(t *testing.T) {
	const bigNeg = "-99999999999999999999"
	tests := []struct {
		name  string
		m     map[string]any
		kind  error
		field string // MalformedError.Field, "" to skip
	}{
		// 1: offset is converted first.
		{"offset None", with(map[string]any{"offset": nil}), usm.ErrType, "offset"},
		{"offset float", with(map[string]any{"offset": 1.5}), usm.ErrType, "offset"},
		{"offset string", with(map[string]any{"offset": "1"}), usm.ErrType, "offset"},
		{"offset json float", with(map[string]any{"offset": json.Number("1.5")}), usm.ErrType, "offset"},
		{"offset json too big", with(map[string]any{"offset": json.Number("9223372036854775808")}), usm.ErrOverflow, "offset"},
		{"offset uint64 too big", with(map[string]any{"offset": uint64(1) << 63}), usm.ErrOverflow, "offset"},
		// 2, 3: version.
		{"version missing", with(nil, "version"), usm.ErrValue, "version"},
		{"version string", with(map[string]any{"version": "1"}), usm.ErrType, "version"},
		{"version float", with(map[string]any{"version": 1.0}), usm.ErrType, "version"},
		{"version 2", with(map[string]any{"version": 2}), usm.ErrValue, "version"},
		{"version 0", with(map[string]any{"version": 0}), usm.ErrValue, "version"},
		{"version False", with(map[string]any{"version": false}), usm.ErrValue, "version"},
		{"version beyond C int", with(map[string]any{"version": int64(1)<<32 + 1}), usm.ErrOverflow, "version"},
		// Order: the offset's type error beats everything after it.
		{"bad offset and bad version", with(map[string]any{"offset": nil, "version": "x"}), usm.ErrType, "offset"},
		{"bad offset and wrong version", with(map[string]any{"offset": 1.5, "version": 7}), usm.ErrType, "offset"},
		{"bad offset and no data", with(map[string]any{"offset": "0"}, "data", "version"), usm.ErrType, "offset"},
		{"version string and no data", with(map[string]any{"version": "1"}, "data"), usm.ErrType, "version"},
		{"wrong version and bad data", with(map[string]any{"version": 2, "data": 5}), usm.ErrValue, "version"},
		// 4: data.
		{"data missing", with(nil, "data"), usm.ErrValue, "data"},
		{"data None", with(map[string]any{"data": nil}), usm.ErrValue, "data"},
		{"data empty tuple", with(map[string]any{"data": []any{}}), usm.ErrValue, "data"},
		{"data nil slice", with(map[string]any{"data": []int64(nil)}), usm.ErrValue, "data"},
		{"data one item", with(map[string]any{"data": []any{1}}), usm.ErrValue, "data"},
		{"data three items", with(map[string]any{"data": []any{1, 2, 3}}), usm.ErrValue, "data"},
		{"data three ints", with(map[string]any{"data": []int64{1, 2, 3}}), usm.ErrValue, "data"},
		{"data falsy int", with(map[string]any{"data": 0}), usm.ErrValue, "data"},
		{"data falsy json number", with(map[string]any{"data": json.Number("0.0")}), usm.ErrValue, "data"},
		{"data truthy int", with(map[string]any{"data": 5}), usm.ErrType, "data"},
		{"data truthy float", with(map[string]any{"data": 2.5}), usm.ErrType, "data"},
		// A dict has a length, as in Python: dpctl's len != 2 check refuses
		// one of another length; one of length 2 fails at data[0].
		{"data dict of one", with(map[string]any{"data": map[string]any{"a": 1}}), usm.ErrValue, "data"},
		{"data dict of two", with(map[string]any{"data": map[string]any{"a": 1, "b": 2}}), usm.ErrType, "data[0]"},
		// Python strings have a length: len != 2 is a ValueError, len == 2
		// fails converting data[0].
		{"data string len 3", with(map[string]any{"data": "abc"}), usm.ErrValue, "data"},
		{"data empty string", with(map[string]any{"data": ""}), usm.ErrValue, "data"},
		{"data string len 2", with(map[string]any{"data": "ab"}), usm.ErrType, "data[0]"},
		{"data bytes len 1", with(map[string]any{"data": []byte{1}}), usm.ErrValue, "data"},
		{"bad data and bad syclobj", with(map[string]any{"data": []any{1}, "syclobj": nil}), usm.ErrValue, "data"},
		// 5: data[0].
		{"pointer string", with(map[string]any{"data": []any{"x", false}}), usm.ErrType, "data[0]"},
		{"pointer None", with(map[string]any{"data": []any{nil, false}}), usm.ErrType, "data[0]"},
		{"pointer float", with(map[string]any{"data": []any{1.5, false}}), usm.ErrType, "data[0]"},
		{"pointer negative", with(map[string]any{"data": []any{-1, false}}), usm.ErrOverflow, "data[0]"},
		{"pointer negative int64", with(map[string]any{"data": []int64{-4096, 0}}), usm.ErrOverflow, "data[0]"},
		{"pointer negative int8", with(map[string]any{"data": []any{int8(-1), false}}), usm.ErrOverflow, "data[0]"},
		{"pointer json negative", with(map[string]any{"data": []any{json.Number("-1"), false}}), usm.ErrOverflow, "data[0]"},
		{"pointer json huge negative", with(map[string]any{"data": []any{json.Number(bigNeg), false}}), usm.ErrOverflow, "data[0]"},
		{"pointer json 2^64", with(map[string]any{"data": []any{json.Number("18446744073709551616"), false}}), usm.ErrOverflow, "data[0]"},
		{"pointer json float", with(map[string]any{"data": []any{json.Number("4096.5"), false}}), usm.ErrType, "data[0]"},
		{"pointer json exponent", with(map[string]any{"data": []any{json.Number("1e3"), false}}), usm.ErrType, "data[0]"},
		{"bad pointer and bad syclobj", with(map[string]any{"data": []any{"x", true}, "syclobj": nil}), usm.ErrType, "data[0]"},
		// 6: syclobj.
		{"syclobj missing", with(nil, "syclobj"), usm.ErrValue, "syclobj"},
		{"syclobj None", with(map[string]any{"syclobj": nil}), usm.ErrValue, "syclobj"},
		{"syclobj int", with(map[string]any{"syclobj": 42}), usm.ErrValue, "syclobj"},
		{"syclobj bad filter", with(map[string]any{"syclobj": "opencl:gpu:cpu"}), usm.ErrValue, "syclobj"},
		{"syclobj unknown backend", with(map[string]any{"syclobj": "vulkan"}), usm.ErrValue, "syclobj"},
		{"syclobj empty string", with(map[string]any{"syclobj": ""}), usm.ErrValue, "syclobj"},
		{"bad syclobj and no shape", with(map[string]any{"syclobj": nil}, "shape"), usm.ErrValue, "syclobj"},
		// 7: shape.
		{"shape missing", with(nil, "shape"), usm.ErrValue, "shape"},
		{"shape None", with(map[string]any{"shape": nil}), usm.ErrValue, "shape"},
		{"shape string", with(map[string]any{"shape": "abc"}), usm.ErrValue, "shape"},
		{"shape int", with(map[string]any{"shape": 5}), usm.ErrValue, "shape"},
		{"no shape and bad typestr", with(map[string]any{"typestr": "invalid"}, "shape"), usm.ErrValue, "shape"},
		// 8: typestr.
		{"typestr missing", with(nil, "typestr"), usm.ErrValue, "typestr"},
		{"typestr None", with(map[string]any{"typestr": nil}), usm.ErrValue, "typestr"},
		{"typestr int", with(map[string]any{"typestr": 4}), usm.ErrValue, "typestr"},
		{"typestr invalid", with(map[string]any{"typestr": "invalid"}), usm.ErrValue, "typestr"},
		{"typestr object", with(map[string]any{"typestr": "O"}), usm.ErrValue, "typestr"},
		{"typestr object with order", with(map[string]any{"typestr": "|O8"}), usm.ErrValue, "typestr"},
		{"typestr f3", with(map[string]any{"typestr": "f3"}), usm.ErrValue, "typestr"},
		{"typestr unicode", with(map[string]any{"typestr": "<U4"}), usm.ErrValue, "typestr"},
		{"typestr datetime", with(map[string]any{"typestr": "<M8"}), usm.ErrValue, "typestr"},
		{"typestr timedelta", with(map[string]any{"typestr": "<m8"}), usm.ErrValue, "typestr"},
		{"typestr empty", with(map[string]any{"typestr": ""}), usm.ErrValue, "typestr"},
		// dpctl converts shape elements only at step 10, after typestr.
		{"bad typestr and bad shape element", with(map[string]any{"typestr": "f3", "shape": []any{"x"}}), usm.ErrValue, "typestr"},
		{"bad typestr and bad strides", with(map[string]any{"typestr": "f3", "strides": 5}), usm.ErrValue, "typestr"},
		// 9: strides.
		{"strides too short", with(map[string]any{"strides": []any{1}}), usm.ErrValue, "strides"},
		{"strides too long", with(map[string]any{"strides": []int64{3, 1, 1}}), usm.ErrValue, "strides"},
		{"strides int", with(map[string]any{"strides": 5}), usm.ErrValue, "strides"},
		{"strides string", with(map[string]any{"strides": "ab"}), usm.ErrValue, "strides"},
		{"strides empty for 2-d", with(map[string]any{"strides": []any{}}), usm.ErrValue, "strides"},
		{"bad strides and negative extent", with(map[string]any{"strides": []any{1}, "shape": []any{-1, 2}}), usm.ErrValue, "strides"},
		{"bad strides and bad shape element", with(map[string]any{"strides": []any{1}, "shape": []any{"x", 2}}), usm.ErrValue, "strides"},
		// 10: elements, dimension by dimension.
		{"shape element string", with(map[string]any{"shape": []any{2, "x"}}), usm.ErrType, "shape[1]"},
		{"shape element None", with(map[string]any{"shape": []any{nil}}), usm.ErrType, "shape[0]"},
		{"shape element float", with(map[string]any{"shape": []any{1.5}}), usm.ErrType, "shape[0]"},
		{"shape element json overflow", with(map[string]any{"shape": []any{json.Number("99999999999999999999")}}), usm.ErrOverflow, "shape[0]"},
		{"stride element string", with(map[string]any{"strides": []any{"x", 1}}), usm.ErrType, "strides[0]"},
		{"stride element json overflow", with(map[string]any{"strides": []any{3, json.Number(bigNeg)}}), usm.ErrOverflow, "strides[1]"},
		{"negative extent", with(map[string]any{"shape": []any{2, -3}}), usm.ErrValue, "shape"},
		{"negative extent int64", with(map[string]any{"shape": []int64{-1}}), usm.ErrValue, "shape"},
		{"negative extent before bad element", with(map[string]any{"shape": []any{-1, "x"}}), usm.ErrValue, "shape"},
		{"bad element before negative extent", with(map[string]any{"shape": []any{"x", -1}}), usm.ErrType, "shape[0]"},
		{"stride checked before its extent", with(map[string]any{"shape": []any{-1, 2}, "strides": []any{nil, 1}}), usm.ErrType, "strides[0]"},
		// Layouts that do not fit int64.
		{"element count overflow", with(map[string]any{"shape": []any{int64(1) << 62, 4}}), usm.ErrOverflow, ""},
		{"element count overflow with zero extent", with(map[string]any{"shape": []any{0, int64(1) << 62, 4}}), usm.ErrOverflow, ""},
		{"bytes overflow", with(map[string]any{"shape": []any{int64(1) << 62}}), usm.ErrOverflow, ""},
		{"stride overflow", with(map[string]any{"shape": []any{3}, "strides": []any{int64(1) << 62}}), usm.ErrOverflow, ""},
		{"negative stride overflow", with(map[string]any{"shape": []any{3}, "strides": []any{int64(math.MinInt64)}}), usm.ErrOverflow, ""},
		{"offset bytes overflow", with(map[string]any{"offset": int64(math.MaxInt64 / 2)}), usm.ErrOverflow, ""},
		{"offset plus extent overflow", with(map[string]any{"offset": int64(math.MaxInt64/4 - 2)}), usm.ErrOverflow, ""},
		{"displacements overflow", with(map[string]any{"shape": []any{2, 2}, "strides": []any{int64(math.MaxInt64), int64(math.MaxInt64)}}), usm.ErrOverflow, ""},
	}
	names := map[string]bool{}
	for _, tc := range tests {
		require.False(t, names[tc.name], "duplicate case %q", tc.name)
		names[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = usm.Parse(tc.m) })
			requireKind(t, err, tc.kind)
			assert.True(t, strings.HasPrefix(err.Error(), "__sycl_usm_array_interface__ is malformed: "), err.Error())
			var me *usm.MalformedError
			require.ErrorAs(t, err, &me)
			if tc.field != "" {
				assert.Equal(t, tc.field, me.Field, err.Error())
			}
		})
	}
}

func TestParseNilDict(t *testing.T) {
	_, err := usm.Parse(nil)
	requireKind(t, err, usm.ErrValue)
}

func TestParseMessages(t *testing.T) {
	_, err := usm.Parse(with(map[string]any{"version": 2}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dict('version': 2) is unexpected. The only recognized version is 1.")

	_, err = usm.Parse(with(nil, "version"))
	assert.Contains(t, err.Error(), "dict('version': 0) is unexpected")

	_, err = usm.Parse(with(nil, "data"))
	assert.Contains(t, err.Error(), "'data' field is required, and must be a tuple")

	_, err = usm.Parse(with(nil, "shape"))
	assert.Contains(t, err.Error(), "Shape entry is a required element of `__sycl_usm_array_interface__` dictionary")

	_, err = usm.Parse(with(map[string]any{"strides": []any{1}}))
	assert.Contains(t, err.Error(), "'strides' must be a tuple or list of the same length as shape")

	_, err = usm.Parse(with(map[string]any{"shape": []any{-4}}))
	assert.Contains(t, err.Error(), "Array shape elements need to be positive")

	_, err = usm.Parse(with(map[string]any{"typestr": "invalid"}))
	assert.Contains(t, err.Error(), `dict('typestr': "invalid") is unexpected`)
}

// A caller's string of 100 kB (a typestr, a JSON number) is quoted at
// most 200 bytes at a time (errkind.Quote): the typestr was quoted whole
// three times.
func TestParseMessagesBounded(t *testing.T) {
	big := strings.Repeat("9", 100_000)
	for name, parse := range map[string]func() error{
		"typestr": func() error { _, err := usm.Parse(with(map[string]any{"typestr": "<f" + big})); return err },
		"json typestr": func() error {
			_, err := usm.ParseJSON([]byte(`{"data": [8, false], "shape": [1], "typestr": "<f` + big + `", "version": 1, "syclobj": "host"}`))
			return err
		},
		"json pointer": func() error {
			_, err := usm.ParseJSON([]byte(`{"data": [` + big + `, false], "shape": [1], "typestr": "<f4", "version": 1, "syclobj": "host"}`))
			return err
		},
		"json.Number pointer": func() error {
			_, err := usm.Parse(with(map[string]any{"data": []any{json.Number(big), false}}))
			return err
		},
		"json.Number pointer, not an integer": func() error {
			_, err := usm.Parse(with(map[string]any{"data": []any{json.Number(big + ".5"), false}}))
			return err
		},
	} {
		err := parse()
		require.Error(t, err, name)
		msg := err.Error()
		if len(msg) > 1500 { // not asserted with testify, which would print it all
			t.Fatalf("%s: a message of %d bytes: %.400s...", name, len(msg), msg)
		}
		assert.Contains(t, msg, strings.Repeat("9", 190), name)
		assert.Contains(t, msg, " bytes)", name)
	}
}

func TestParseAccepted(t *testing.T) {
	tests := []struct {
		name  string
		m     map[string]any
		check func(t *testing.T, in usm.Interface)
	}{
		{"version True", with(map[string]any{"version": true}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, 1, in.Version)
		}},
		{"version json", with(map[string]any{"version": json.Number("1")}), nil},
		{"version int8", with(map[string]any{"version": int8(1)}), nil},
		{"version uint", with(map[string]any{"version": uint(1)}), nil},
		{"offset missing", with(nil, "offset"), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, int64(0), in.Offset)
		}},
		{"offset negative", with(map[string]any{"offset": -3}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, int64(-3), in.Offset)
			w, err := in.Window()
			require.NoError(t, err)
			assert.Equal(t, usm.Window{Lo: -12, Hi: 12}, w)
		}},
		{"offset bool", with(map[string]any{"offset": true}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, int64(1), in.Offset)
		}},
		{"offset uint16", with(map[string]any{"offset": uint16(7)}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, int64(7), in.Offset)
		}},
		{"data list", with(map[string]any{"data": []any{4096, true}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, uintptr(4096), in.Data)
			assert.True(t, in.ReadOnly)
		}},
		{"data int64 slice", with(map[string]any{"data": []int64{8192, 1}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, uintptr(8192), in.Data)
			assert.True(t, in.ReadOnly)
		}},
		{"data array", with(map[string]any{"data": [2]any{uintptr(12288), 0}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, uintptr(12288), in.Data)
			assert.False(t, in.ReadOnly)
		}},
		{"data uint64 slice", with(map[string]any{"data": []uint64{1 << 40, 0}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, uintptr(1<<40), in.Data)
		}},
		{"data read-only None", with(map[string]any{"data": []any{4096, nil}}), func(t *testing.T, in usm.Interface) {
			assert.False(t, in.ReadOnly)
		}},
		{"data read-only string", with(map[string]any{"data": []any{4096, "yes"}}), func(t *testing.T, in usm.Interface) {
			assert.True(t, in.ReadOnly)
		}},
		{"pointer True", with(map[string]any{"data": []any{true, false}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, uintptr(1), in.Data)
		}},
		{"pointer above 2^63", with(map[string]any{"data": []any{uint64(1)<<63 + 4096, false}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, uintptr(1<<63+4096), in.Data)
		}},
		{"pointer max uint64", with(map[string]any{"data": []any{uint64(math.MaxUint64), false}, "shape": []any{0}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, ^uintptr(0), in.Data)
		}},
		{"pointer json above 2^63", with(map[string]any{"data": []any{json.Number("18446744073709551615"), false}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, ^uintptr(0), in.Data)
		}},
		{"pointer json plus sign", with(map[string]any{"data": []any{json.Number("+4096"), false}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, uintptr(4096), in.Data)
		}},
		{"pointer int", with(map[string]any{"data": []any{int(0x7fff0000), false}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, uintptr(0x7fff0000), in.Data)
		}},
		{"pointer zero", with(map[string]any{"data": []any{0, false}}), func(t *testing.T, in usm.Interface) {
			// NULL is refused only when binding (Registry.Parse).
			assert.Equal(t, uintptr(0), in.Data)
		}},
		{"syclobj selector value", with(map[string]any{"syclobj": syclobj.MustParseSelector("opencl:cpu:0")}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, "opencl:cpu:0", in.Syclobj.(syclobj.Selector).String())
		}},
		{"syclobj context ref", with(map[string]any{"syclobj": syclobj.UnsafeContextRef(0xabc)}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, syclobj.UnsafeContextRef(0xabc), in.Syclobj)
		}},
		{"syclobj number string", with(map[string]any{"syclobj": "0"}), nil},
		{"shape tuple of int64", with(map[string]any{"shape": []int64{4, 5}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, []int64{4, 5}, in.Shape)
		}},
		{"shape array", with(map[string]any{"shape": [3]int{1, 2, 3}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, []int64{1, 2, 3}, in.Shape)
		}},
		{"shape json", with(map[string]any{"shape": []any{json.Number("7")}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, []int64{7}, in.Shape)
		}},
		{"shape mixed ints", with(map[string]any{"shape": []any{int32(2), uint8(3), int64(4)}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, []int64{2, 3, 4}, in.Shape)
		}},
		{"0-d", with(map[string]any{"shape": []any{}}), func(t *testing.T, in usm.Interface) {
			assert.Empty(t, in.Shape)
			w, err := in.Window()
			require.NoError(t, err)
			assert.Equal(t, usm.Window{Lo: 0, Hi: 4}, w)
		}},
		{"0-d with empty strides and offset", with(map[string]any{"shape": []int64{}, "strides": []int64{}, "offset": 5}), func(t *testing.T, in usm.Interface) {
			w, err := in.Window()
			require.NoError(t, err)
			assert.Equal(t, usm.Window{Lo: 20, Hi: 24}, w)
		}},
		{"size 0", with(map[string]any{"shape": []any{0, 3}, "offset": 2}), func(t *testing.T, in usm.Interface) {
			w, err := in.Window()
			require.NoError(t, err)
			assert.Equal(t, usm.Window{Lo: 8, Hi: 8}, w)
			assert.True(t, w.Empty())
		}},
		{"size 0 with huge strides", with(map[string]any{"shape": []any{0, 3}, "strides": []any{int64(math.MaxInt64), 1}}), nil},
		{"typestr little endian", with(map[string]any{"typestr": "<f8"}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, 8, in.DType.Size())
		}},
		{"typestr big endian", with(map[string]any{"typestr": ">i2"}), func(t *testing.T, in usm.Interface) {
			want, err := dtype.FromTypestr(typestr.Type{Kind: typestr.Int, Size: 2, Order: typestr.Big})
			require.NoError(t, err)
			assert.Equal(t, want, in.DType)
		}},
		{"typestr bool", with(map[string]any{"typestr": "|b1"}), nil},
		{"typestr complex128", with(map[string]any{"typestr": "c16"}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, 16, in.DType.Size())
		}},
		{"strides list", with(map[string]any{"strides": []any{1, 2}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, []int64{1, 2}, in.Strides)
		}},
		{"strides int64 slice", with(map[string]any{"strides": []int64{3, 1}}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, []int64{3, 1}, in.Strides)
		}},
		{"strides array", with(map[string]any{"strides": [2]int64{-3, 1}, "offset": 3}), func(t *testing.T, in usm.Interface) {
			assert.Equal(t, []int64{-3, 1}, in.Strides)
			w, err := in.Window()
			require.NoError(t, err)
			assert.Equal(t, usm.Window{Lo: 0, Hi: 24}, w)
		}},
		{"strides zero (broadcast)", with(map[string]any{"strides": []any{0, 0}}), func(t *testing.T, in usm.Interface) {
			w, err := in.Window()
			require.NoError(t, err)
			assert.Equal(t, usm.Window{Lo: 0, Hi: 4}, w)
		}},
		{"extra keys ignored", with(map[string]any{"mask": nil, "descr": []any{}}), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := usm.Parse(tc.m)
			require.NoError(t, err)
			assert.Equal(t, usm.Version1, in.Version)
			if tc.check != nil {
				tc.check(t, in)
			}
		})
	}
}

// The byte windows dpctl's own tests pin down, through Parse.
func TestParseDpctlPins(t *testing.T) {
	in, err := usm.Parse(map[string]any{
		"data": []any{4096, true}, "shape": []any{10}, "strides": []any{2}, "offset": 8,
		"typestr": "|u1", "version": 1, "syclobj": "host",
	})
	require.NoError(t, err)
	w, err := in.Window()
	require.NoError(t, err)
	assert.Equal(t, usm.Window{Lo: 8, Hi: 27}, w)
	assert.Equal(t, int64(19), w.Len())

	in, err = usm.Parse(map[string]any{
		"data": []any{4096, true}, "shape": []any{2, 2}, "strides": []any{10, -2}, "offset": 9,
		"typestr": "|u1", "version": 1, "syclobj": "host",
	})
	require.NoError(t, err)
	w, err = in.Window()
	require.NoError(t, err)
	assert.Equal(t, usm.Window{Lo: 7, Hi: 20}, w)
}

func TestParseDoesNotAliasOrMutateInput(t *testing.T) {
	shape := []int64{2, 3}
	strides := []int64{1, 2}
	m := with(map[string]any{"shape": shape, "strides": strides})
	before := len(m)
	in, err := usm.Parse(m)
	require.NoError(t, err)
	shape[0], strides[0] = 99, 99
	assert.Equal(t, []int64{2, 3}, in.Shape)
	assert.Equal(t, []int64{1, 2}, in.Strides)
	assert.Len(t, m, before)
	// Growing Shape must not write into Strides.
	in.Shape = append(in.Shape, 7)
	assert.Equal(t, []int64{1, 2}, in.Strides)
}

func TestParseJSON(t *testing.T) {
	in, err := usm.ParseJSON([]byte(`{"data": [18446744073709551615, true], "shape": [3, 4],
		"strides": [-4, 1], "offset": 8, "typestr": "<i8", "version": 1, "syclobj": "opencl:gpu:1"}`))
	require.NoError(t, err)
	assert.Equal(t, ^uintptr(0), in.Data)
	assert.True(t, in.ReadOnly)
	assert.Equal(t, []int64{3, 4}, in.Shape)
	assert.Equal(t, []int64{-4, 1}, in.Strides)
	assert.Equal(t, int64(8), in.Offset)
	assert.Equal(t, 8, in.DType.Size())
	assert.Equal(t, "opencl:gpu:1", in.Syclobj.(syclobj.Selector).String())
	w, err := in.Window()
	require.NoError(t, err)
	assert.Equal(t, usm.Window{Lo: 0, Hi: 96}, w)

	// 0-d, strides null, no offset.
	in, err = usm.ParseJSON([]byte(`{"data":[4096,false],"shape":[],"strides":null,"typestr":"|f8","version":1,"syclobj":"host"}`))
	require.NoError(t, err)
	assert.Empty(t, in.Shape)
	assert.Nil(t, in.Strides)

	bad := []struct {
		name, json string
		kind       error
	}{
		{"not json", `{"data":`, usm.ErrValue},
		{"array", `[1, 2]`, usm.ErrValue},
		{"null", `null`, usm.ErrValue},
		{"empty", ``, usm.ErrValue},
		{"trailing data", `{"data":[4096,false],"shape":[1],"typestr":"|f4","version":1,"syclobj":"host"} {}`, usm.ErrValue},
		{"trailing garbage", `{"data":[4096,false],"shape":[1],"typestr":"|f4","version":1,"syclobj":"host"}x`, usm.ErrValue},
		{"offset float", `{"offset": 1.5, "version": "x"}`, usm.ErrType},
		{"offset null", `{"offset": null}`, usm.ErrType},
		{"version true but no data", `{"version": true}`, usm.ErrValue},
		{"version 2", `{"version": 2}`, usm.ErrValue},
		{"pointer negative", `{"version":1,"data":[-1,false]}`, usm.ErrOverflow},
		{"pointer 2^64", `{"version":1,"data":[18446744073709551616,false]}`, usm.ErrOverflow},
		{"pointer float", `{"version":1,"data":[4096.0,false]}`, usm.ErrType},
		{"pointer string", `{"version":1,"data":["4096",false]}`, usm.ErrType},
		{"data object of one", `{"version":1,"data":{"a":1}}`, usm.ErrValue},
		{"data object of two", `{"version":1,"data":{"a":1,"b":2}}`, usm.ErrType},
		{"data true", `{"version":1,"data":true}`, usm.ErrType},
		{"data string of two", `{"version":1,"data":"ab"}`, usm.ErrType},
		{"typestr with NUL", `{"version":1,"data":[4096,false],"syclobj":"host","shape":[2],"typestr":"|f4\u0000junk"}`, usm.ErrValue},
		{"data zero", `{"version":1,"data":0}`, usm.ErrValue},
		{"syclobj number", `{"version":1,"data":[4096,false],"syclobj":0}`, usm.ErrValue},
		{"syclobj null", `{"version":1,"data":[4096,false],"syclobj":null}`, usm.ErrValue},
		{"shape object", `{"version":1,"data":[4096,false],"syclobj":"host","shape":{}}`, usm.ErrValue},
		{"shape float element", `{"version":1,"data":[4096,false],"syclobj":"host","shape":[2.0],"typestr":"|u1"}`, usm.ErrType},
		{"typestr missing", `{"version":1,"data":[4096,false],"syclobj":"host","shape":[2]}`, usm.ErrValue},
		{"overflow", `{"version":1,"data":[4096,false],"syclobj":"host","shape":[4611686018427387904,4],"typestr":"|u1"}`, usm.ErrOverflow},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := usm.ParseJSON([]byte(tc.json))
			requireKind(t, err, tc.kind)
		})
	}
}

func TestMap(t *testing.T) {
	parse := func(m map[string]any) *usm.Interface {
		t.Helper()
		in, err := usm.Parse(m)
		require.NoError(t, err)
		return &in
	}

	in := parse(with(map[string]any{"typestr": "<f4", "offset": 6, "data": []any{uint64(0x20000), true}}))
	m := mustMap(t, in)
	assert.Equal(t, map[string]any{
		"data":    []any{uint64(0x20000), true},
		"shape":   []int64{2, 3},
		"strides": nil,
		"typestr": "|f4",
		"offset":  int64(6),
		"version": 1,
		"syclobj": "host",
	}, m)
	assert.Contains(t, m, "offset")
	assert.Contains(t, m, "strides")

	// Explicit C strides are dropped; non-contiguous ones are kept.
	assert.Nil(t, mustMap(t, parse(with(map[string]any{"strides": []any{3, 1}})))["strides"])
	assert.Nil(t, mustMap(t, parse(with(map[string]any{"shape": []any{1, 3}, "strides": []any{100, 1}})))["strides"])
	assert.Equal(t, []int64{1, 2}, mustMap(t, parse(with(map[string]any{"strides": []any{1, 2}})))["strides"])
	assert.Equal(t, []int64{-3, 1}, mustMap(t, parse(with(map[string]any{"strides": []any{-3, 1}, "offset": 3})))["strides"])
	assert.Equal(t, []int64{6, 2}, mustMap(t, parse(with(map[string]any{"strides": []any{6, 2}})))["strides"])

	// Non-Selector syclobj values are passed through.
	ref := syclobj.UnsafeQueueRef(0x1234)
	assert.Equal(t, ref, mustMap(t, parse(with(map[string]any{"syclobj": ref})))["syclobj"])

	// A fresh dict each time: mutating one result leaves the next alone.
	in = parse(with(map[string]any{"strides": []any{1, 2}}))
	m1 := mustMap(t, in)
	m1["data"].([]any)[0] = uint64(1)
	m1["shape"].([]int64)[0] = 100
	m1["strides"].([]int64)[0] = 100
	m1["typestr"] = "|u1"
	delete(m1, "version")
	m2 := mustMap(t, in)
	assert.Equal(t, []any{uint64(0x10000), false}, m2["data"])
	assert.Equal(t, []int64{2, 3}, m2["shape"])
	assert.Equal(t, []int64{1, 2}, m2["strides"])
	assert.Equal(t, "|f4", m2["typestr"])
	assert.Equal(t, 1, m2["version"])
	assert.Equal(t, []int64{2, 3}, in.Shape)
	assert.Equal(t, []int64{1, 2}, in.Strides)
}

// mustMap is in.Map() for an interface whose element type has a typestr.
func mustMap(t *testing.T, in *usm.Interface) map[string]any {
	t.Helper()
	m, err := in.Map()
	require.NoError(t, err)
	return m
}

func TestMapRoundTrip(t *testing.T) {
	dicts := []map[string]any{
		validDict(),
		with(map[string]any{"strides": []any{1, 2}, "offset": 4}),
		with(map[string]any{"strides": []any{-3, -1}, "offset": 5, "typestr": "|c8"}),
		with(map[string]any{"shape": []any{}, "typestr": "|b1"}),
		with(map[string]any{"shape": []any{0, 5}, "offset": -1}),
		with(map[string]any{"data": []any{uint64(1) << 63, true}, "syclobj": "level_zero:gpu:0,opencl:cpu"}),
		with(map[string]any{"syclobj": syclobj.UnsafeContextRef(0xfeed)}),
		with(map[string]any{"shape": []any{10}, "strides": []any{2}, "offset": 8, "typestr": "|u1"}),
	}
	for i, d := range dicts {
		in, err := usm.Parse(d)
		require.NoError(t, err, "dict %d", i)
		again, err := usm.Parse(mustMap(t, &in))
		require.NoError(t, err, "dict %d", i)
		assert.Equal(t, in, again, "dict %d", i)
	}

	// Explicit C strides and a native byte order come back normalised.
	in, err := usm.Parse(with(map[string]any{"strides": []any{3, 1}, "typestr": "=f4"}))
	require.NoError(t, err)
	again, err := usm.Parse(mustMap(t, &in))
	require.NoError(t, err)
	assert.Nil(t, again.Strides)
	assert.Equal(t, dtype.Float32, again.DType)
	w1, _ := in.Window()
	w2, _ := again.Window()
	assert.Equal(t, w1, w2)
}

func TestInterfaceHelpers(t *testing.T) {
	in, err := usm.Parse(with(map[string]any{"offset": 3, "typestr": "|f8"}))
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x10000+24), in.ElementPointer())
	assert.Equal(t, []int64{3, 1}, in.EffectiveStrides())
	in.Strides = []int64{1, 2}
	assert.Equal(t, []int64{1, 2}, in.EffectiveStrides())
	require.NoError(t, in.Validate())

	bad := in
	bad.Version = 2
	requireKind(t, bad.Validate(), usm.ErrValue)
	bad = in
	bad.Syclobj = nil
	requireKind(t, bad.Validate(), usm.ErrValue)
	bad = in
	bad.DType = dtype.Type{}
	requireKind(t, bad.Validate(), usm.ErrValue)
	bad = in
	bad.Strides = []int64{1}
	requireKind(t, bad.Validate(), usm.ErrValue)
	bad = in
	bad.Shape = []int64{-1, 2}
	requireKind(t, bad.Validate(), usm.ErrValue)
	bad = in
	bad.Shape = []int64{1 << 62, 4}
	requireKind(t, bad.Validate(), usm.ErrOverflow)
}

func TestMalformedErrorUnwrap(t *testing.T) {
	_, err := usm.Parse(with(map[string]any{"typestr": "f3"}))
	var te *typestr.Error
	require.ErrorAs(t, err, &te)
	_, err = usm.Parse(with(map[string]any{"syclobj": "bogus"}))
	var se *syclobj.SelectorError
	require.ErrorAs(t, err, &se)
	_, err = usm.Parse(with(map[string]any{"shape": []any{int64(1) << 62, 4}}))
	var me *usm.MalformedError
	require.ErrorAs(t, err, &me)
	require.Error(t, errors.Unwrap(err))
}
