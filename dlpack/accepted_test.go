package dlpack

import (
	"math"
	"testing"

	"github.com/usmbridge/usmbridge/usm"
)

// checkAccepted holds acceptedData to place for one layout: every probe
// pointer is accepted by place exactly when it lies in the range (or never,
// when acceptedData says no pointer is). Layouts outside the derivation's
// assumption (ok false with a window it does not cover) are place's alone.
func checkAccepted(t *testing.T, bo uint64, win usm.Window, probes ...uintptr) {
	t.Helper()
	lo, hi, ok := acceptedData(bo, win)
	covered := win.Empty() || (win.Lo <= 0 && win.Hi > 0)
	if !ok && !covered {
		return
	}
	probes = append(probes, 0, 1, math.MaxUint64, uintptr(maxUserAddress), uintptr(-win.Lo), uintptr(bo))
	if ok {
		probes = append(probes, lo-1, lo, lo+1, hi-1, hi, hi+1)
	}
	for _, p := range probes {
		in := ok && lo <= p && p <= hi
		if got := place(p, bo, win); (got == placedOK) != in {
			t.Fatalf("byte_offset %d, window %v: acceptedData = %#x..%#x (ok %v), but place(%#x) = %d", bo, win, lo, hi, ok, p, got)
		}
	}
}

func TestAcceptedData(t *testing.T) {
	for _, c := range []struct {
		bo  uint64
		win usm.Window
	}{
		{0, usm.Window{}},
		{1 << 40, usm.Window{}},
		{math.MaxUint64, usm.Window{}},
		{0, usm.Window{Lo: 0, Hi: 8}},
		{16, usm.Window{Lo: -16, Hi: 8}},
		{0, usm.Window{Lo: -16, Hi: 8}},
		{8, usm.Window{Lo: -16, Hi: 8}},
		{0, usm.Window{Lo: 0, Hi: int64(maxUserAddress)}},
		{1, usm.Window{Lo: 0, Hi: int64(maxUserAddress)}},
		{0, usm.Window{Lo: math.MinInt64, Hi: 1}},
		{math.MaxUint64, usm.Window{Lo: 0, Hi: 1}},
		{maxUserAddress - 1, usm.Window{Lo: 0, Hi: 1}},
		{maxUserAddress, usm.Window{Lo: 0, Hi: 1}},
		{0, usm.Window{Lo: 0, Hi: math.MaxInt64}},
	} {
		checkAccepted(t, c.bo, c.win, 0x1000, 0x7fff_0000_0000)
	}
}

// FuzzAcceptedData: the range the extension's C half replays is exactly
// the set of pointers Import's checks accept.
func FuzzAcceptedData(f *testing.F) {
	f.Add(uint64(0), int64(0), int64(8), uint64(0x1000))
	f.Add(uint64(16), int64(-16), int64(8), uint64(0))
	f.Add(uint64(math.MaxUint64), int64(0), int64(0), uint64(1))
	f.Add(uint64(0), int64(math.MinInt64), int64(1), uint64(1<<63))
	f.Add(maxUserAddress-8, int64(0), int64(8), uint64(8))
	f.Fuzz(func(t *testing.T, bo uint64, lo, hi int64, p uint64) {
		if lo > hi {
			lo, hi = hi, lo
		}
		checkAccepted(t, bo, usm.Window{Lo: lo, Hi: hi}, uintptr(p))
	})
}
