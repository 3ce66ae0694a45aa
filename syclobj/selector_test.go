package syclobj_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// filter builds a Filter; n < 0 means "any number".
func filter(b syclobj.Backend, t syclobj.DeviceType, n int) syclobj.Filter {
	return syclobj.Filter{Backend: b, Type: t, Number: n}
}

const anyNum = -1

func TestParseSelectorValid(t *testing.T) {
	tests := []struct {
		in   string
		want []syclobj.Filter
	}{
		{"opencl:cpu:0", []syclobj.Filter{filter(syclobj.OpenCL, syclobj.CPU, 0)}},
		{"opencl:cpu", []syclobj.Filter{filter(syclobj.OpenCL, syclobj.CPU, anyNum)}},
		{"opencl", []syclobj.Filter{filter(syclobj.OpenCL, syclobj.AnyType, anyNum)}},
		{"level_zero:gpu", []syclobj.Filter{filter(syclobj.LevelZero, syclobj.GPU, anyNum)}},
		{"ext_oneapi_level_zero:gpu:1", []syclobj.Filter{filter(syclobj.LevelZero, syclobj.GPU, 1)}},
		{"level_zero:0", []syclobj.Filter{filter(syclobj.LevelZero, syclobj.AnyType, 0)}},
		{"gpu:1", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.GPU, 1)}},
		{"gpu", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.GPU, anyNum)}},
		{"accelerator", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.Accelerator, anyNum)}},
		{"opencl:*:1", []syclobj.Filter{filter(syclobj.OpenCL, syclobj.AnyType, 1)}},
		{"opencl:*", []syclobj.Filter{filter(syclobj.OpenCL, syclobj.AnyType, anyNum)}},
		{"*:cpu", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.CPU, anyNum)}},
		{"*:*:3", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.AnyType, 3)}},
		{"*:*:*", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.AnyType, anyNum)}},
		{"*", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.AnyType, anyNum)}},
		{"gpu:*", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.GPU, anyNum)}},
		{"2", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.AnyType, 2)}},
		{"0", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.AnyType, 0)}},
		{"007", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.AnyType, 7)}},
		{"2147483647", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.AnyType, 2147483647)}},
		{"host", []syclobj.Filter{filter(syclobj.Host, syclobj.AnyType, anyNum)}},
		{"host:host", []syclobj.Filter{filter(syclobj.Host, syclobj.HostDevice, anyNum)}},
		{"*:host", []syclobj.Filter{filter(syclobj.AnyBackend, syclobj.HostDevice, anyNum)}},
		{"host:cpu:0", []syclobj.Filter{filter(syclobj.Host, syclobj.CPU, 0)}},
		{"cuda", []syclobj.Filter{filter(syclobj.CUDA, syclobj.AnyType, anyNum)}},
		{"hip:gpu", []syclobj.Filter{filter(syclobj.HIP, syclobj.GPU, anyNum)}},
		{"opencl:cpu,level_zero:gpu", []syclobj.Filter{
			filter(syclobj.OpenCL, syclobj.CPU, anyNum),
			filter(syclobj.LevelZero, syclobj.GPU, anyNum),
		}},
		{"gpu:1,cpu,2", []syclobj.Filter{
			filter(syclobj.AnyBackend, syclobj.GPU, 1),
			filter(syclobj.AnyBackend, syclobj.CPU, anyNum),
			filter(syclobj.AnyBackend, syclobj.AnyType, 2),
		}},
		{"gpu,gpu", []syclobj.Filter{
			filter(syclobj.AnyBackend, syclobj.GPU, anyNum),
			filter(syclobj.AnyBackend, syclobj.GPU, anyNum),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			sel, err := syclobj.ParseSelector(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, sel.Filters())
			assert.Equal(t, tt.in, sel.String())
			assert.NotEqual(t, syclobj.Selector{}, sel)
			assert.Equal(t, sel, syclobj.MustParseSelector(tt.in))

			// The canonical form of the filters parses to the same filters.
			parts := make([]string, 0, len(tt.want))
			for _, f := range sel.Filters() {
				parts = append(parts, f.String())
			}
			again, err := syclobj.ParseSelector(strings.Join(parts, ","))
			require.NoError(t, err)
			assert.Equal(t, tt.want, again.Filters())
		})
	}
}

// unknownSuffix follows every "unknown part" reason.
const unknownSuffix = " (backends: opencl, level_zero, ext_oneapi_level_zero, cuda, hip, host; device types: cpu, gpu, accelerator, host)"

func TestParseSelectorInvalid(t *testing.T) {
	tests := []struct {
		in     string
		reason string // the whole reason: what is wrong
	}{
		{"", "empty selector"},
		{",", `filter 0 "": empty filter`},
		{",opencl", `filter 0 "": empty filter`},
		{"opencl,", `filter 1 "": empty filter`},
		{"opencl,,gpu", `filter 1 "": empty filter`},
		{"opencl::0", "empty part (want backend:device_type:device_num, each optional)"},
		{":gpu", "empty part (want backend:device_type:device_num, each optional)"},
		{"gpu:", "empty part (want backend:device_type:device_num, each optional)"},
		{"gpu:opencl", `backend "opencl" must come first and only once`},
		{"opencl:opencl", `backend "opencl" must come first and only once`},
		{"*:opencl", `backend "opencl" must come first and only once`},
		{"1:level_zero", `backend "level_zero" must come first and only once`},
		{"cpu:gpu", `device type "gpu" must come before device_num and only once`},
		{"1:gpu", `device type "gpu" must come before device_num and only once`},
		{"*:*:gpu", `device type "gpu" must come before device_num and only once`},
		{"0:1", `device_num "1" given twice`},
		{"opencl:0:1", `device_num "1" given twice`},
		{"0:*", "'*' after device_num"},
		{"foo", `unknown part "foo"`},
		{"OPENCL", `unknown part "OPENCL"`},
		{"opencl:GPU", `unknown part "GPU"`},
		{"Level_Zero", `unknown part "Level_Zero"`},
		{" opencl", `unknown part " opencl"`},
		{"opencl ", `unknown part "opencl "`},
		{"opencl:cpu:0:1", "more than three parts (want backend:device_type:device_num)"},
		{"*:*:*:*", "more than three parts (want backend:device_type:device_num)"},
		{"opencl:cpu:-1", `device_num "-1" must be a non-negative decimal integer without sign`},
		{"+1", `device_num "+1" must be a non-negative decimal integer without sign`},
		{"opencl:cpu:1.0", `unknown part "1.0"`},
		{"opencl:cpu:0x1", `unknown part "0x1"`},
		{"opencl:cpu:99999999999", `device_num "99999999999" is out of range`},
		{"2147483648", `device_num "2147483648" is out of range`},
		{"99999999999999999999999999", `device_num "99999999999999999999999999" is out of range`},
		{"a,b", `filter 0 "a": unknown part "a"`},
		{"opencl:cpu,foo", `filter 1 "foo": unknown part "foo"`},
		{"opencl:cpu,gpu:opencl", `filter 1 "gpu:opencl": backend "opencl" must come first and only once`},
		{"ｇpu", `unknown part "ｇpu"`},
		{"gpu\x00", `unknown part "gpu\x00"`},
		{"\xff", `unknown part "\xff"`},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			var (
				sel syclobj.Selector
				err error
			)
			require.NotPanics(t, func() { sel, err = syclobj.ParseSelector(tt.in) })
			require.Error(t, err)
			assert.Equal(t, syclobj.Selector{}, sel)

			var se *syclobj.SelectorError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.in, se.Selector)
			reason := tt.reason
			if strings.Contains(reason, "unknown part") {
				reason += unknownSuffix
			}
			assert.Equal(t, reason, se.Reason)
			assert.Nil(t, se.Seen)
			assert.True(t, errors.Is(err, usm.ErrValue), "must match usm.ErrValue")
			assert.False(t, errors.Is(err, usm.ErrBuffer))
			assert.Equal(t, "ValueError", usm.PythonException(err))
			assert.Equal(t, "filter selector "+strconv.Quote(tt.in)+": "+reason, err.Error())
			assert.Panics(t, func() { syclobj.MustParseSelector(tt.in) })
		})
	}
}

// devices is a global order: Level Zero first, then OpenCL, then host.
var devices = []syclobj.Device{
	{Backend: syclobj.LevelZero, Type: syclobj.GPU, Name: "L0 GPU 0"},
	{Backend: syclobj.LevelZero, Type: syclobj.GPU, Name: "L0 GPU 1"},
	{Backend: syclobj.OpenCL, Type: syclobj.CPU, Name: "OpenCL CPU"},
	{Backend: syclobj.OpenCL, Type: syclobj.GPU, Name: "OpenCL GPU"},
	{Backend: syclobj.Host, Type: syclobj.HostDevice, Name: "usmbridge host"},
}

// refResolve is an independent statement of the resolution rule: for each
// filter, list the devices it accepts; device_num indexes that list (no
// number: its first entry); the answer is the smallest such global index.
func refResolve(filters []syclobj.Filter, devs []syclobj.Device) int {
	best := -1
	for _, f := range filters {
		var matching []int
		for i, d := range devs {
			if (f.Backend == syclobj.AnyBackend || f.Backend == d.Backend) &&
				(f.Type == syclobj.AnyType || f.Type == d.Type) {
				matching = append(matching, i)
			}
		}
		n := max(f.Number, 0)
		if n < len(matching) && (best < 0 || matching[n] < best) {
			best = matching[n]
		}
	}
	return best
}

func TestResolve(t *testing.T) {
	tests := []struct {
		sel  string
		want int
	}{
		{"opencl:cpu:0", 2},
		{"opencl:cpu", 2},
		{"opencl", 2},
		{"opencl:gpu", 3},
		{"opencl:gpu:0", 3},
		{"opencl:*:1", 3},
		{"opencl:1", 3},
		{"level_zero:gpu", 0},
		{"level_zero:gpu:0", 0},
		{"ext_oneapi_level_zero:gpu:1", 1},
		{"level_zero:1", 1},
		{"gpu", 0},
		{"gpu:0", 0},
		{"gpu:1", 1},
		{"gpu:2", 3}, // device_num counts GPUs only
		{"cpu", 2},
		{"cpu:0", 2},
		{"*:cpu", 2},
		{"*", 0},
		{"*:*:3", 3},
		{"0", 0},
		{"2", 2}, // a bare number is a global index
		{"4", 4},
		{"host", 4},
		{"host:host", 4},
		{"*:host", 4},
		{"host:host:0", 4},
		// Comma lists: the first device (in global order) that any filter
		// accepts, each filter counting its own matches.
		{"opencl:cpu,level_zero:gpu", 0},
		{"level_zero:gpu,opencl:cpu", 0},
		{"opencl:gpu,opencl:cpu", 2},
		{"cuda,opencl:gpu", 3},
		{"accelerator,host", 4},
		{"level_zero:gpu:1,opencl:cpu", 1},
		{"opencl:cpu:1,gpu:1", 1},
		{"gpu:2,gpu:0", 0},
		{"gpu:2,cpu", 2},
		{"cuda,hip,3", 3},
		{"9,host", 4},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			sel := syclobj.MustParseSelector(tt.sel)
			got, err := sel.Resolve(devices)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want, refResolve(sel.Filters(), devices), "reference resolver disagrees with the table")
		})
	}
}

func TestResolveNoMatch(t *testing.T) {
	for _, s := range []string{
		"cuda", "hip:gpu", "accelerator", "5", "*:*:5", "opencl:cpu:1", "opencl:gpu:1",
		"level_zero:gpu:2", "level_zero:cpu", "host:cpu", "opencl:host", "gpu:3",
		"cuda,hip,accelerator", "2147483647",
	} {
		t.Run(s, func(t *testing.T) {
			devs := append([]syclobj.Device(nil), devices...)
			idx, err := syclobj.MustParseSelector(s).Resolve(devs)
			require.Error(t, err)
			assert.Equal(t, -1, idx)
			assert.Equal(t, -1, refResolve(syclobj.MustParseSelector(s).Filters(), devs))

			var se *syclobj.SelectorError
			require.ErrorAs(t, err, &se)
			assert.ErrorIs(t, err, usm.ErrValue)
			assert.Equal(t, s, se.Selector)
			assert.Equal(t, "no device matches", se.Reason)
			assert.Equal(t, devices, se.Seen)

			msg := err.Error()
			assert.Contains(t, msg, strconv.Quote(s))
			assert.Contains(t, msg, "no device matches")
			assert.Contains(t, msg, "devices seen: ")
			for i, d := range devices {
				assert.Contains(t, msg, strconv.Itoa(i)+"="+d.String())
			}
			assert.NotContains(t, msg, "no devices available")

			// Seen is a copy, not the caller's slice.
			devs[0].Name = "changed"
			assert.Equal(t, "L0 GPU 0", se.Seen[0].Name)
		})
	}
}

func TestResolveNoMatchMessage(t *testing.T) {
	_, err := syclobj.MustParseSelector("cuda:gpu").Resolve(devices[2:4])
	require.Error(t, err)
	assert.Equal(t, `filter selector "cuda:gpu": no device matches (devices seen: `+
		`0=opencl:cpu "OpenCL CPU", 1=opencl:gpu "OpenCL GPU")`, err.Error())
}

func TestResolveNoDevices(t *testing.T) {
	for _, devs := range [][]syclobj.Device{nil, {}} {
		for _, s := range []string{"0", "*", "opencl:cpu", "host"} {
			idx, err := syclobj.MustParseSelector(s).Resolve(devs)
			require.Error(t, err, s)
			assert.Equal(t, -1, idx)
			assert.ErrorIs(t, err, usm.ErrValue)
			var se *syclobj.SelectorError
			require.ErrorAs(t, err, &se)
			assert.Empty(t, se.Seen)
			assert.Equal(t, "filter selector "+strconv.Quote(s)+": no device matches (no devices available)", err.Error())
		}
	}
}

func TestResolveZeroSelector(t *testing.T) {
	var sel syclobj.Selector
	assert.Equal(t, syclobj.Selector{}, sel)
	assert.Empty(t, sel.Filters())
	assert.Equal(t, "", sel.String())
	idx, err := sel.Resolve(devices)
	require.Error(t, err)
	assert.Equal(t, -1, idx)
	assert.ErrorIs(t, err, usm.ErrValue)
	var se *syclobj.SelectorError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "zero Selector")
}

func TestFiltersIsACopy(t *testing.T) {
	sel := syclobj.MustParseSelector("opencl:cpu:0,gpu")
	fs := sel.Filters()
	fs[0] = filter(syclobj.CUDA, syclobj.Accelerator, 5)
	assert.Equal(t, filter(syclobj.OpenCL, syclobj.CPU, 0), sel.Filters()[0])
	idx, err := sel.Resolve(devices)
	require.NoError(t, err)
	assert.Equal(t, 0, idx) // "gpu" picks device 0 before opencl:cpu (2)
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "*", syclobj.AnyBackend.String())
	assert.Equal(t, "level_zero", syclobj.LevelZero.String())
	assert.Equal(t, "opencl", syclobj.OpenCL.String())
	assert.Equal(t, "cuda", syclobj.CUDA.String())
	assert.Equal(t, "hip", syclobj.HIP.String())
	assert.Equal(t, "host", syclobj.Host.String())
	assert.Equal(t, "Backend(42)", syclobj.Backend(42).String())

	assert.Equal(t, "*", syclobj.AnyType.String())
	assert.Equal(t, "cpu", syclobj.CPU.String())
	assert.Equal(t, "gpu", syclobj.GPU.String())
	assert.Equal(t, "accelerator", syclobj.Accelerator.String())
	assert.Equal(t, "host", syclobj.HostDevice.String())
	assert.Equal(t, "DeviceType(9)", syclobj.DeviceType(9).String())

	assert.Equal(t, "opencl:cpu:0", filter(syclobj.OpenCL, syclobj.CPU, 0).String())
	assert.Equal(t, "*:gpu:*", filter(syclobj.AnyBackend, syclobj.GPU, anyNum).String())
	assert.Equal(t, `level_zero:gpu "L0 GPU 0"`, devices[0].String())
}

// The backend and device type names the parser accepts are exactly the
// String forms of the constants (plus the ext_oneapi_ alias).
func TestNamesRoundTrip(t *testing.T) {
	for _, b := range []syclobj.Backend{syclobj.LevelZero, syclobj.OpenCL, syclobj.CUDA, syclobj.HIP, syclobj.Host} {
		sel, err := syclobj.ParseSelector(b.String())
		require.NoError(t, err, b.String())
		assert.Equal(t, []syclobj.Filter{filter(b, syclobj.AnyType, anyNum)}, sel.Filters())
	}
	for _, dt := range []syclobj.DeviceType{syclobj.CPU, syclobj.GPU, syclobj.Accelerator, syclobj.HostDevice} {
		sel, err := syclobj.ParseSelector("*:" + dt.String())
		require.NoError(t, err, dt.String())
		assert.Equal(t, []syclobj.Filter{filter(syclobj.AnyBackend, dt, anyNum)}, sel.Filters())
	}
}

// A selector of 100 kB is quoted at most 200 bytes at a time, as CPython
// quotes with "%.200s": an unknown device string made a message of 200 kB
// (the string and its one part, each whole).
func TestSelectorErrorBounded(t *testing.T) {
	const n = 100_000
	many := strings.Repeat("opencl:gpu,", n/11) // 9090 filters, each valid
	for _, c := range []struct {
		name, in string
		says     string
	}{
		{"one unknown part", strings.Repeat("x", n), `: unknown part "` + strings.Repeat("x", 200) + `"... (100000 bytes) (backends: `},
		{"a malformed filter among many", many + strings.Repeat("y", n), `: filter 9090 "` + strings.Repeat("y", 200) + `"... (100000 bytes): unknown part "`},
		{"no device matches", strings.TrimSuffix(many, ","), `... (99989 bytes): no device matches (devices seen: 0=opencl:cpu "CPU")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			sel, err := syclobj.ParseSelector(c.in)
			if err == nil {
				_, err = sel.Resolve([]syclobj.Device{{Backend: syclobj.OpenCL, Type: syclobj.CPU, Name: "CPU"}})
			}
			require.ErrorIs(t, err, usm.ErrValue)
			msg := err.Error()
			if len(msg) > 1000 { // not asserted with testify, which would print it all
				t.Fatalf("a message of %d bytes: %.300s...", len(msg), msg)
			}
			assert.True(t, strings.HasPrefix(msg, `filter selector "`+c.in[:200]+`"... (`), msg)
			assert.Contains(t, msg, c.says)
		})
	}
}
