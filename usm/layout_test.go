package usm_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/usm"
)

func TestElementCount(t *testing.T) {
	ok := []struct {
		shape []int64
		want  int64
	}{
		{nil, 1},
		{[]int64{}, 1},
		{[]int64{5}, 5},
		{[]int64{2, 3, 4}, 24},
		{[]int64{0}, 0},
		{[]int64{3, 0, 7}, 0},
		{[]int64{1, 1, 1}, 1},
		{[]int64{math.MaxInt64}, math.MaxInt64},
		{[]int64{1 << 31, 1 << 31}, 1 << 62},
		{[]int64{0, math.MaxInt64}, 0},
	}
	for _, tc := range ok {
		n, err := usm.ElementCount(tc.shape)
		require.NoError(t, err, "%v", tc.shape)
		assert.Equal(t, tc.want, n, "%v", tc.shape)
	}

	for _, shape := range [][]int64{
		{1 << 62, 4},
		{1 << 32, 1 << 32},
		{math.MaxInt64, 2},
		{0, 1 << 62, 4}, // zero extents count as 1 for the overflow check
		{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3},
	} {
		_, err := usm.ElementCount(shape)
		requireKind(t, err, usm.ErrOverflow)
	}
	for _, shape := range [][]int64{{-1}, {2, -3}, {0, -1}, {math.MinInt64}} {
		_, err := usm.ElementCount(shape)
		requireKind(t, err, usm.ErrValue)
	}
}

func TestCFStrides(t *testing.T) {
	assert.Equal(t, []int64{}, usm.CStrides(nil))
	assert.Equal(t, []int64{1}, usm.CStrides([]int64{7}))
	assert.Equal(t, []int64{12, 4, 1}, usm.CStrides([]int64{2, 3, 4}))
	assert.Equal(t, []int64{4, 4, 1}, usm.CStrides([]int64{2, 0, 4}))
	assert.Equal(t, []int64{1, 2, 6}, usm.FStrides([]int64{2, 3, 4}))
	assert.Equal(t, []int64{1, 2, 2}, usm.FStrides([]int64{2, 0, 4}))
	assert.Equal(t, []int64{1}, usm.FStrides([]int64{7}))
	assert.Equal(t, []int64{}, usm.FStrides([]int64{}))
}

func TestContiguity(t *testing.T) {
	tests := []struct {
		name    string
		shape   []int64
		strides []int64
		wantC   bool
		wantF   bool
	}{
		{"nil strides 2-d", []int64{2, 3}, nil, true, false},
		{"nil strides 1-d", []int64{5}, nil, true, true},
		{"nil strides 0-d", []int64{}, nil, true, true},
		{"nil strides with unit dims", []int64{1, 4, 1}, nil, true, true},
		{"nil strides empty", []int64{2, 0, 3}, nil, true, true},
		{"C strides", []int64{2, 3}, []int64{3, 1}, true, false},
		{"F strides", []int64{2, 3}, []int64{1, 2}, false, true},
		{"1-d unit stride", []int64{5}, []int64{1}, true, true},
		{"1-d stride 2", []int64{5}, []int64{2}, false, false},
		{"1-d negative", []int64{5}, []int64{-1}, false, false},
		{"0-d empty strides", []int64{}, []int64{}, true, true},
		{"unit dim any stride", []int64{1, 3}, []int64{99, 1}, true, true},
		{"unit dim any stride F", []int64{3, 1}, []int64{1, -7}, true, true},
		{"all unit dims", []int64{1, 1}, []int64{5, 9}, true, true},
		{"empty with odd strides", []int64{0, 3}, []int64{7, -2}, true, true},
		{"gap", []int64{2, 3}, []int64{4, 1}, false, false},
		{"broadcast", []int64{2, 3}, []int64{0, 1}, false, false},
		{"transposed 3-d", []int64{2, 3, 4}, []int64{1, 2, 6}, false, true},
		{"C 3-d", []int64{2, 3, 4}, []int64{12, 4, 1}, true, false},
		{"C 3-d middle unit", []int64{2, 1, 4}, []int64{4, 1000, 1}, true, false},
		{"length mismatch", []int64{2, 3}, []int64{1}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.wantC, usm.IsCContiguous(tc.shape, tc.strides), "C")
			assert.Equal(t, tc.wantF, usm.IsFContiguous(tc.shape, tc.strides), "F")
		})
	}
	// The computed strides are contiguous in their own order.
	for _, shape := range [][]int64{{2, 3, 4}, {1}, {5, 0}, {7, 1, 2}} {
		assert.True(t, usm.IsCContiguous(shape, usm.CStrides(shape)), "%v", shape)
		assert.True(t, usm.IsFContiguous(shape, usm.FStrides(shape)), "%v", shape)
	}
}

func TestByteWindow(t *testing.T) {
	tests := []struct {
		name     string
		shape    []int64
		strides  []int64
		offset   int64
		itemsize int
		want     usm.Window
	}{
		// dpctl's test_suai_non_contig_1D: 19 bytes from byte 8.
		{"dpctl pin 1-D", []int64{10}, []int64{2}, 8, 1, usm.Window{Lo: 8, Hi: 27}},
		// dpctl's test_suai_non_contig_2D: element indices 7…19.
		{"dpctl pin 2-D", []int64{2, 2}, []int64{10, -2}, 9, 1, usm.Window{Lo: 7, Hi: 20}},
		{"C contiguous", []int64{2, 3}, nil, 0, 4, usm.Window{Lo: 0, Hi: 24}},
		{"explicit C strides", []int64{2, 3}, []int64{3, 1}, 0, 4, usm.Window{Lo: 0, Hi: 24}},
		{"C with offset", []int64{2, 3}, nil, 5, 2, usm.Window{Lo: 10, Hi: 22}},
		{"F strides", []int64{2, 3}, []int64{1, 2}, 0, 8, usm.Window{Lo: 0, Hi: 48}},
		{"negative stride", []int64{4}, []int64{-1}, 3, 4, usm.Window{Lo: 0, Hi: 16}},
		{"negative strides below pointer", []int64{3, 2}, []int64{-2, -1}, 0, 1, usm.Window{Lo: -5, Hi: 1}},
		{"negative offset", []int64{3}, nil, -1, 4, usm.Window{Lo: -4, Hi: 8}},
		{"mixed signs", []int64{3, 4}, []int64{-8, 2}, 16, 1, usm.Window{Lo: 0, Hi: 23}},
		{"zero strides broadcast", []int64{5, 7}, []int64{0, 0}, 2, 4, usm.Window{Lo: 8, Hi: 12}},
		{"zero stride one axis", []int64{5, 3}, []int64{0, 1}, 0, 2, usm.Window{Lo: 0, Hi: 6}},
		{"0-d", []int64{}, nil, 0, 8, usm.Window{Lo: 0, Hi: 8}},
		{"0-d with offset", nil, nil, 3, 8, usm.Window{Lo: 24, Hi: 32}},
		{"0-d empty strides", []int64{}, []int64{}, -2, 2, usm.Window{Lo: -4, Hi: -2}},
		{"size 0", []int64{0}, nil, 0, 4, usm.Window{Lo: 0, Hi: 0}},
		{"size 0 at offset", []int64{3, 0}, []int64{-100, 5}, 7, 4, usm.Window{Lo: 28, Hi: 28}},
		{"size 0 huge strides", []int64{2, 0}, []int64{math.MaxInt64, math.MinInt64}, 0, 16, usm.Window{Lo: 0, Hi: 0}},
		{"itemsize 16", []int64{2, 2}, []int64{4, 1}, 1, 16, usm.Window{Lo: 16, Hi: 112}},
		{"unit dims ignore stride", []int64{1, 1}, []int64{math.MaxInt64, math.MinInt64}, 0, 4, usm.Window{Lo: 0, Hi: 4}},
		{"largest exact", []int64{1}, nil, math.MaxInt64 - 1, 1, usm.Window{Lo: math.MaxInt64 - 1, Hi: math.MaxInt64}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := usm.ByteWindow(tc.shape, tc.strides, tc.offset, tc.itemsize)
			require.NoError(t, err)
			assert.Equal(t, tc.want, w)
			assert.Equal(t, tc.want.Hi-tc.want.Lo, w.Len())
			assert.Equal(t, tc.want.Lo == tc.want.Hi, w.Empty())
		})
	}
}

func TestByteWindowErrors(t *testing.T) {
	tests := []struct {
		name     string
		shape    []int64
		strides  []int64
		offset   int64
		itemsize int
		kind     error
	}{
		{"stride times extent", []int64{3}, []int64{1 << 62}, 0, 1, usm.ErrOverflow},
		{"negative stride times extent", []int64{3}, []int64{-(1 << 62) - 1}, 0, 1, usm.ErrOverflow},
		{"min stride", []int64{2}, []int64{math.MinInt64}, 0, 1, usm.ErrOverflow},
		{"displacement sum", []int64{2, 2}, []int64{math.MaxInt64 / 2, math.MaxInt64/2 + 2}, 0, 1, usm.ErrOverflow},
		{"negative displacement sum", []int64{2, 2}, []int64{math.MinInt64 / 2, math.MinInt64/2 - 1}, 0, 1, usm.ErrOverflow},
		{"displacement times itemsize", []int64{2}, []int64{1 << 61}, 0, 4, usm.ErrOverflow},
		{"offset times itemsize", []int64{1}, nil, 1 << 62, 4, usm.ErrOverflow},
		{"negative offset times itemsize", []int64{1}, nil, -(1 << 62) - 1, 2, usm.ErrOverflow},
		{"offset times itemsize, size 0", []int64{0}, nil, math.MaxInt64, 2, usm.ErrOverflow},
		{"offset plus window", []int64{2}, nil, math.MaxInt64 - 1, 1, usm.ErrOverflow},
		{"offset plus negative window", []int64{2}, []int64{-1}, math.MinInt64, 1, usm.ErrOverflow},
		{"window length", []int64{2, 2}, []int64{math.MaxInt64 / 2, math.MinInt64 / 2}, 0, 1, usm.ErrOverflow},
		{"element count", []int64{1 << 62, 4}, nil, 0, 1, usm.ErrOverflow},
		{"C bytes", []int64{1 << 62}, nil, 0, 4, usm.ErrOverflow},
		{"bytes of a stride-0 array", []int64{1<<61 + 1}, []int64{0}, 0, 8, usm.ErrOverflow},
		{"strides too short", []int64{2, 3}, []int64{1}, 0, 4, usm.ErrValue},
		{"strides too long", []int64{2}, []int64{1, 1}, 0, 4, usm.ErrValue},
		{"strides for 0-d", []int64{}, []int64{1}, 0, 4, usm.ErrValue},
		{"negative extent", []int64{2, -1}, nil, 0, 4, usm.ErrValue},
		{"zero itemsize", []int64{2}, nil, 0, 0, usm.ErrValue},
		{"negative itemsize", []int64{2}, nil, 0, -4, usm.ErrValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = usm.ByteWindow(tc.shape, tc.strides, tc.offset, tc.itemsize) })
			requireKind(t, err, tc.kind)
		})
	}
}

// ByteWindow agrees with enumerating every element of small arrays.
func TestByteWindowBruteForce(t *testing.T) {
	shapes := [][]int64{{}, {1}, {3}, {2, 3}, {3, 1, 2}, {2, 0}}
	strideSets := []int64{-3, -1, 0, 1, 2, 5}
	for _, shape := range shapes {
		nd := len(shape)
		var rec func(st []int64)
		rec = func(st []int64) {
			if len(st) < nd {
				for _, s := range strideSets {
					rec(append(st, s))
				}
				return
			}
			for _, offset := range []int64{-2, 0, 7} {
				for _, isz := range []int{1, 4} {
					w, err := usm.ByteWindow(shape, st, offset, isz)
					require.NoError(t, err)
					lo, hi, any := int64(math.MaxInt64), int64(math.MinInt64), false
					idx := make([]int64, nd)
					n, _ := usm.ElementCount(shape)
					for e := int64(0); e < n; e++ {
						d := offset
						for k := range nd {
							d += idx[k] * st[k]
						}
						lo, hi, any = min(lo, d*int64(isz)), max(hi, (d+1)*int64(isz)), true
						for k := nd - 1; k >= 0; k-- {
							if idx[k]++; idx[k] < shape[k] {
								break
							}
							idx[k] = 0
						}
					}
					if !any {
						lo, hi = offset*int64(isz), offset*int64(isz)
					}
					require.Equal(t, usm.Window{Lo: lo, Hi: hi}, w, "shape %v strides %v offset %d itemsize %d", shape, st, offset, isz)
				}
			}
		}
		rec(make([]int64, 0, nd))
	}
}

func TestWindowString(t *testing.T) {
	assert.Equal(t, "[-4, 12)", usm.Window{Lo: -4, Hi: 12}.String())
}
