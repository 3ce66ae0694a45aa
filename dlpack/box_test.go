package dlpack_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/hooks"
)

var hostAcceptedData = hooks.AcceptedData.(func(*dlpack.Tensor, []int64) (uintptr, uintptr, bool))

// boxCase is one layout and its box, read from fuzz bytes: a tensor Import
// accepts, caps around its shape, and a second tensor of the same layout
// with a shape inside the box and a pointer in the range the box gives.
type boxCase struct {
	f     foreign
	caps  []int64
	inner []int64 // a shape elementwise in 0..caps
	probe uint64  // picks the second tensor's pointer in lo..hi
}

var boxDTypes = []dlabi.DataType{{Code: 2, Bits: 32, Lanes: 1}, {Code: 0, Bits: 8, Lanes: 1},
	{Code: 5, Bits: 128, Lanes: 1}, {Code: 6, Bits: 8, Lanes: 1}, {Code: 2, Bits: 64, Lanes: 1}}

// readBoxCase: header versioned, ndim (0..4), dtype, stridesNull, data,
// byte_offset, probe; then per dimension extent, stride, cap slack and an
// inner extent selector.
func readBoxCase(in []byte) (boxCase, bool) {
	const head = 4 + 8 + 8 + 8
	if len(in) < head {
		return boxCase{}, false
	}
	ndim := int(in[1] % 5)
	if len(in) < head+ndim*32 {
		return boxCase{}, false
	}
	c := boxCase{f: foreign{versioned: in[0]&1 == 1, major: 1, ndim: int32(ndim),
		dtype: boxDTypes[int(in[2])%len(boxDTypes)], device: dlpack.Device{Type: dlpack.CPU},
		data:       uintptr(binary.LittleEndian.Uint64(in[4:])),
		byteOffset: binary.LittleEndian.Uint64(in[12:])},
		probe: binary.LittleEndian.Uint64(in[20:])}
	c.f.shape = make([]int64, ndim)
	if in[3]&1 == 0 {
		c.f.strides = make([]int64, ndim)
	}
	c.caps = make([]int64, ndim)
	c.inner = make([]int64, ndim)
	for i := range ndim {
		v := in[head+32*i:]
		c.f.shape[i] = int64(binary.LittleEndian.Uint64(v) % (1 << 20))
		if c.f.strides != nil {
			c.f.strides[i] = int64(binary.LittleEndian.Uint64(v[8:]))
		}
		c.caps[i] = max(c.f.shape[i], 1) + int64(binary.LittleEndian.Uint64(v[16:])%(1<<20))
		c.inner[i] = int64(binary.LittleEndian.Uint64(v[24:]) % uint64(c.caps[i]+1))
	}
	return c, true
}

// checkBox: every tensor in the box at every pointer of the range is one
// Import accepts, and at the box's corner (shape = caps) the range is
// exact, so the pointers just outside it are refused.
func checkBox(t *testing.T, c boxCase) {
	m, _ := c.f.build(t)
	tn, err := dlpack.Import(m, dlpack.ImportOptions{KeepOnError: true})
	if err != nil {
		freeUndeleted(m)
		return
	}
	lo, hi, ok := hostAcceptedData(tn, c.caps)
	tn.Release()
	if !ok {
		return
	}
	try := func(shape []int64, data uintptr) error {
		g := c.f
		g.shape, g.data = shape, data
		m, _ := g.build(t)
		tn, err := dlpack.Import(m, dlpack.ImportOptions{KeepOnError: true})
		if err != nil {
			freeUndeleted(m)
			return err
		}
		tn.Release()
		return nil
	}
	span := uint64(hi - lo)
	pick := lo + uintptr(c.probe%(span+1))
	if span == math.MaxUint64 {
		pick = uintptr(c.probe)
	}
	for _, shape := range [][]int64{c.inner, c.caps, c.f.shape} {
		for _, d := range []uintptr{lo, hi, pick} {
			if err := try(shape, d); err != nil {
				t.Fatalf("%+v, caps %v: range %#x..%#x, but shape %v at %#x is refused: %v", c.f, c.caps, lo, hi, shape, d, err)
			}
		}
	}
	if lo > 0 && try(c.caps, lo-1) == nil {
		t.Fatalf("%+v, caps %v: range %#x..%#x, but %#x is accepted too", c.f, c.caps, lo, hi, lo-1)
	}
	if hi < math.MaxUint64 && try(c.caps, hi+1) == nil {
		t.Fatalf("%+v, caps %v: range %#x..%#x, but %#x is accepted too", c.f, c.caps, lo, hi, hi+1)
	}
}

// FuzzHostAcceptedData holds the box the extension's C half replays
// (hooks.AcceptedData) to Import itself.
func FuzzHostAcceptedData(f *testing.F) {
	seed := func(versioned, ndim, dtype, stridesNull uint8, data, bo, probe uint64, dims ...[4]int64) []byte {
		b := []byte{versioned, ndim, dtype, stridesNull}
		b = binary.LittleEndian.AppendUint64(b, data)
		b = binary.LittleEndian.AppendUint64(b, bo)
		b = binary.LittleEndian.AppendUint64(b, probe)
		for _, d := range dims {
			for _, v := range d {
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
		}
		return b
	}
	f.Add(seed(1, 1, 0, 1, 0x7f00_0000_0000, 0, 7, [4]int64{1024, 0, 1000, 5}))
	f.Add(seed(1, 2, 1, 0, 0x1000, 64, 3, [4]int64{3, 4, 2, 1}, [4]int64{4, 1, 3, 4}))
	f.Add(seed(0, 3, 2, 0, 0x5000_0000, 0, 9, [4]int64{2, -12, 1, 0}, [4]int64{3, 4, 0, 3}, [4]int64{4, -1, 5, 2}))
	f.Add(seed(1, 1, 4, 0, 0xff_ffff_ffff_0000, 0, 1, [4]int64{16, 1, 16, 31}))
	f.Add(seed(1, 2, 0, 0, 0x100, 1<<40, 2, [4]int64{0, 1 << 30, 8, 8}, [4]int64{5, 1 << 20, 3, 1}))
	f.Add(seed(1, 0, 0, 1, 0, 0, 0))
	f.Fuzz(func(t *testing.T, in []byte) {
		if c, ok := readBoxCase(in); ok {
			checkBox(t, c)
		}
	})
}
