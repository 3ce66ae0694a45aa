package usm_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

// typedLayout is a view into a base vector of typedBase elements.
type typedLayout struct {
	name     string
	shape    []int64
	strides  []int64 // nil: C order
	offset   int64
	viewable bool // C-contiguous, so View accepts it
}

const typedBase = 24

var typedLayouts = []typedLayout{
	{"c-2x3", []int64{2, 3}, nil, 0, true},
	{"c-explicit-offset", []int64{2, 3}, []int64{3, 1}, 4, true},
	{"extent-1-any-stride", []int64{1, 3}, []int64{99, 1}, 2, true},
	{"fortran-2x3", []int64{2, 3}, []int64{1, 2}, 0, false},
	{"every-other", []int64{5}, []int64{2}, 1, false},
	{"reversed", []int64{6}, []int64{-1}, 5, false},
	{"reversed-2d", []int64{2, 3}, []int64{-3, -1}, 5, false},
	{"rows-of-runs", []int64{3, 2}, []int64{4, 1}, 1, false},
	{"3d-mixed", []int64{2, 2, 3}, []int64{12, -3, 1}, 3, false},
	{"broadcast-rows", []int64{2, 3}, []int64{0, 1}, 0, false},
	{"sparse", []int64{3}, []int64{10}, 1, false},
	{"0-d", []int64{}, nil, 7, true},
	{"size-0", []int64{0, 4}, nil, 0, true},
	{"size-0-strided", []int64{3, 0}, []int64{-5, 2}, 20, true},
}

// offsets lists, in C order, the element offsets of the layout, computed
// directly from the SUAI formula Offset + Σ i[k]·Strides[k].
func (l typedLayout) offsets() []int64 {
	st := l.strides
	if st == nil {
		st = usm.CStrides(l.shape)
	}
	var out []int64
	var rec func(d int, off int64)
	rec = func(d int, off int64) {
		if d == len(l.shape) {
			out = append(out, off)
			return
		}
		for i := range l.shape[d] {
			rec(d+1, off+i*st[d])
		}
	}
	rec(0, l.offset)
	return out
}

// indices lists every index tuple in C order.
func (l typedLayout) indices() [][]int64 {
	var out [][]int64
	var rec func(idx []int64)
	rec = func(idx []int64) {
		if len(idx) == len(l.shape) {
			out = append(out, slices.Clone(idx))
			return
		}
		for i := range l.shape[len(idx)] {
			rec(append(idx, i))
		}
	}
	rec(nil)
	return out
}

// typedFixture is a host vector of typedBase elements and a strided array
// over it.
type typedFixture[T usm.Element] struct {
	base []T       // View of the whole vector
	arr  usm.Array // the layout over it
	copy *copyCounter
}

// copyCounter is a backend whose Copier counts calls; its memory is cpu
// memory that tests may declare to be device memory.
type copyCounter struct {
	*cpu.Backend
	calls, bytes int
}

func (c *copyCounter) Copy(dst, src, n uintptr) error {
	c.calls++
	c.bytes += int(n)
	return c.Backend.Copy(dst, src, n)
}

func newTypedFixture[T usm.Element](t *testing.T, ts dtype.Type, l typedLayout, gen func(int) T) typedFixture[T] {
	t.Helper()
	be := &copyCounter{Backend: new(cpu.Backend)}
	reg := usm.NewRegistry(be.Backend)
	alloc, err := be.AllocHost(uintptr(typedBase * ts.Size()))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, alloc.Free()) })
	whole, err := reg.NewArray(alloc, ts, []int64{typedBase})
	require.NoError(t, err)
	base, err := usm.View[T](whole)
	require.NoError(t, err)
	for i := range base {
		base[i] = gen(i)
	}
	arr := *whole
	arr.Backend = be // copies through the counter
	arr.Shape, arr.Strides, arr.Offset = l.shape, l.strides, l.offset
	require.NoError(t, arr.Validate())
	require.NoError(t, arr.CheckExtent())
	return typedFixture[T]{base: base, arr: arr, copy: be}
}

func testTypedLayouts[T usm.Element](t *testing.T, ts dtype.Type, gen func(int) T) {
	for _, l := range typedLayouts {
		t.Run(l.name, func(t *testing.T) {
			offs := l.offsets()
			f := newTypedFixture(t, ts, l, gen)
			want := make([]T, len(offs))
			for i, o := range offs {
				want[i] = f.base[o]
			}

			vals, err := usm.Values[T](&f.arr)
			require.NoError(t, err)
			got := []T{}
			for v := range vals {
				got = append(got, v)
			}
			assert.Equal(t, want, got, "Values")

			for i, idx := range l.indices() {
				v, err := usm.At[T](&f.arr, idx...)
				require.NoError(t, err)
				assert.Equal(t, want[i], v, "At%v", idx)
			}

			view, err := usm.View[T](&f.arr)
			if l.viewable {
				require.NoError(t, err)
				assert.Equal(t, want, append([]T{}, view...), "View")
			} else {
				require.ErrorIs(t, err, usm.ErrBuffer)
				assert.ErrorContains(t, err, "not C-contiguous")
			}

			// Host and (declared) device memory must give the same copies;
			// device memory goes through the Copier only.
			for _, kind := range []usm.Kind{usm.KindHost, usm.KindDevice} {
				f.arr.Memory.Kind = kind
				f.copy.calls = 0
				dst := make([]T, len(offs))
				require.NoError(t, usm.CopyToSlice(dst, &f.arr))
				assert.Equal(t, want, dst, "CopyToSlice %s", kind)

				before := slices.Clone(f.base)
				src := make([]T, len(offs))
				for i := range src {
					src[i] = gen(100 + i)
				}
				require.NoError(t, usm.CopyFromSlice(&f.arr, src))
				expect := slices.Clone(before)
				for i, o := range offs {
					expect[o] = src[i] // later elements win where strides alias
				}
				assert.Equal(t, expect, f.base, "CopyFromSlice %s wrote exactly the array's elements", kind)
				copy(f.base, before)
				if kind == usm.KindHost {
					assert.Zero(t, f.copy.calls, "host memory is copied directly")
				} else if len(offs) > 0 {
					assert.Positive(t, f.copy.calls)
				}
			}
		})
	}
}

func TestTypedLayouts(t *testing.T) {
	t.Run("float32", func(t *testing.T) {
		testTypedLayouts(t, dtype.Float32, func(i int) float32 { return float32(i) + 0.5 })
	})
	t.Run("int64", func(t *testing.T) {
		testTypedLayouts(t, dtype.Int64, func(i int) int64 { return int64(i) * -1e12 })
	})
	t.Run("uint8", func(t *testing.T) {
		testTypedLayouts(t, dtype.Uint8, func(i int) uint8 { return uint8(i*37 + 1) })
	})
	t.Run("bool", func(t *testing.T) {
		testTypedLayouts(t, dtype.Bool, func(i int) bool { return i%3 == 0 })
	})
	t.Run("complex128", func(t *testing.T) {
		testTypedLayouts(t, dtype.Complex128, func(i int) complex128 { return complex(float64(i), -float64(i)) })
	})
	type celsius float64 // named types with an Element underlying type work too
	t.Run("named-float64", func(t *testing.T) {
		testTypedLayouts(t, dtype.Float64, func(i int) celsius { return celsius(i) / 4 })
	})
}

// TestTypedCopyRuns checks how device copies move data: a contiguous
// array in one copy; a strided read in one copy of its window when that is
// at most stagingSlack times its elements, else one copy per contiguous
// run; a strided write always per run, so no byte between elements is
// written.
func TestTypedCopyRuns(t *testing.T) {
	byName := map[string]typedLayout{}
	for _, l := range typedLayouts {
		byName[l.name] = l
	}
	for _, tc := range []struct {
		layout               string
		n                    int
		readCalls, readBytes int
		writeCalls           int
	}{
		{"c-2x3", 6, 1, 24, 1},
		{"fortran-2x3", 6, 1, 24, 6},  // window = elements: staged read
		{"rows-of-runs", 6, 1, 40, 3}, // window of 10 elements for 6
		{"3d-mixed", 12, 1, 72, 4},    // window of 18 for 12
		{"reversed", 6, 1, 24, 6},
		{"broadcast-rows", 6, 1, 12, 2}, // 3 distinct elements read once
		{"sparse", 3, 3, 12, 3},         // window of 21 for 3: per run
		{"0-d", 1, 1, 4, 1},
		{"size-0", 0, 0, 0, 0},
	} {
		t.Run(tc.layout, func(t *testing.T) {
			f := newTypedFixture(t, dtype.Float32, byName[tc.layout], func(i int) float32 { return float32(i) })
			f.arr.Memory.Kind = usm.KindDevice
			dst := make([]float32, tc.n)
			require.NoError(t, usm.CopyToSlice(dst, &f.arr))
			assert.Equal(t, tc.readCalls, f.copy.calls, "read copies")
			assert.Equal(t, tc.readBytes, f.copy.bytes, "read bytes")
			f.copy.calls, f.copy.bytes = 0, 0
			require.NoError(t, usm.CopyFromSlice(&f.arr, dst))
			assert.Equal(t, tc.writeCalls, f.copy.calls, "write copies")
			assert.Equal(t, tc.n*4, f.copy.bytes, "write bytes")
		})
	}
}

func TestTypedRefusals(t *testing.T) {
	l := typedLayouts[0]
	newF := func(t *testing.T) typedFixture[float32] {
		return newTypedFixture(t, dtype.Float32, l, func(i int) float32 { return float32(i) })
	}
	asAccess := func(t *testing.T, err error, kind error, text string) {
		t.Helper()
		var ae *usm.AccessError
		require.ErrorAs(t, err, &ae)
		assert.ErrorIs(t, err, kind)
		assert.Contains(t, ae.Error(), text)
		for _, other := range []error{usm.ErrValue, usm.ErrType, usm.ErrBuffer, usm.ErrNotSupported} {
			if other != kind { //nolint:errorlint // which sentinel of the list, not error matching
				assert.NotErrorIs(t, err, other, "an error has one kind")
			}
		}
	}

	t.Run("wrong-type", func(t *testing.T) {
		f := newF(t)
		_, err := usm.View[int32](&f.arr)
		asAccess(t, err, usm.ErrType, "Go type int32 is int32, the array's dtype is float32")
		_, err = usm.At[float64](&f.arr, 0, 0)
		asAccess(t, err, usm.ErrType, "float64")
		_, err = usm.Values[uint32](&f.arr)
		asAccess(t, err, usm.ErrType, "uint32")
		asAccess(t, usm.CopyToSlice(make([]int32, 6), &f.arr), usm.ErrType, "int32")
		asAccess(t, usm.CopyFromSlice(&f.arr, make([]complex64, 6)), usm.ErrType, "complex64")
	})
	t.Run("byte-swapped", func(t *testing.T) {
		f := newF(t)
		var err error
		f.arr.DType, err = dtype.FromTypestr(typestr.MustParse(">f4"))
		require.NoError(t, err)
		_, err = usm.View[float32](&f.arr)
		asAccess(t, err, usm.ErrBuffer, "the array's dtype is float32, byte-swapped; Go values are in the host's byte order")
		_, err = usm.View[int32](&f.arr)
		asAccess(t, err, usm.ErrType, "the array's dtype is float32, byte-swapped")
		asAccess(t, usm.CopyToSlice(make([]float32, 6), &f.arr), usm.ErrBuffer, "byte order")
	})
	t.Run("no-go-type", func(t *testing.T) {
		// Element types without a Go type are bytes (Array.Bytes); typed
		// access names the array's dtype, whatever T is asked for.
		for _, dt := range []dtype.Type{dtype.Float16, dtype.Bfloat16, dtype.Complex32, dtype.Float8E4M3FN, dtype.Float8E5M2} {
			f := newF(t)
			f.arr.DType = dt
			_, err := usm.View[uint16](&f.arr)
			asAccess(t, err, usm.ErrType, "the array's dtype is "+dt.String())
			_, err = usm.At[uint8](&f.arr, 0, 0)
			asAccess(t, err, usm.ErrType, dt.String())
			_, err = usm.Values[float32](&f.arr)
			asAccess(t, err, usm.ErrType, dt.String())
			asAccess(t, usm.CopyToSlice(make([]int8, 6), &f.arr), usm.ErrType, dt.String())
			asAccess(t, usm.CopyFromSlice(&f.arr, make([]uint16, 6)), usm.ErrType, dt.String())
			b, err := f.arr.Bytes()
			require.NoError(t, err, "%s: the bytes are reachable", dt)
			w, _ := f.arr.Window()
			assert.Len(t, b, int(w.Len()))
		}
	})
	t.Run("read-only", func(t *testing.T) {
		f := newF(t)
		f.arr.ReadOnly = true
		before := slices.Clone(f.base)
		_, err := usm.View[float32](&f.arr)
		asAccess(t, err, usm.ErrBuffer, "read-only")
		for _, kind := range []usm.Kind{usm.KindHost, usm.KindDevice} {
			f.arr.Memory.Kind = kind
			asAccess(t, usm.CopyFromSlice(&f.arr, make([]float32, 6)), usm.ErrBuffer, "read-only")
			assert.Equal(t, before, f.base, "nothing written")
			assert.Zero(t, f.copy.calls)
		}
		// Reading is allowed.
		f.arr.Memory.Kind = usm.KindHost
		v, err := usm.At[float32](&f.arr, 1, 2)
		require.NoError(t, err)
		assert.Equal(t, float32(5), v)
		dst := make([]float32, 6)
		require.NoError(t, usm.CopyToSlice(dst, &f.arr))
		assert.Equal(t, before[:6], dst)
	})
	t.Run("device-memory", func(t *testing.T) {
		f := newF(t)
		f.arr.Memory.Kind = usm.KindDevice
		_, err := usm.View[float32](&f.arr)
		asAccess(t, err, usm.ErrBuffer, "device memory is not host-accessible")
		_, err = usm.At[float32](&f.arr, 0, 0)
		asAccess(t, err, usm.ErrBuffer, "not host-accessible")
		_, err = usm.Values[float32](&f.arr)
		asAccess(t, err, usm.ErrBuffer, "not host-accessible")
		// A backend that cannot copy leaves no way to reach the memory.
		f.arr.Backend = noCopy{f.copy.Backend}
		asAccess(t, usm.CopyToSlice(make([]float32, 6), &f.arr), usm.ErrNotSupported, "cannot copy")
		asAccess(t, usm.CopyFromSlice(&f.arr, make([]float32, 6)), usm.ErrNotSupported, "cannot copy")
	})
	t.Run("lengths-and-indices", func(t *testing.T) {
		f := newF(t)
		asAccess(t, usm.CopyToSlice(make([]float32, 5), &f.arr), usm.ErrValue, "the slice has 5 elements, the array 6")
		asAccess(t, usm.CopyFromSlice(&f.arr, make([]float32, 7)), usm.ErrValue, "the slice has 7 elements")
		_, err := usm.At[float32](&f.arr, 1)
		asAccess(t, err, usm.ErrValue, "1 indices for an array of 2 dimensions")
		_, err = usm.At[float32](&f.arr, 0, 3)
		asAccess(t, err, usm.ErrValue, "index 3 is out of bounds for dimension 1 of extent 3")
		_, err = usm.At[float32](&f.arr, -1, 0)
		asAccess(t, err, usm.ErrValue, "index -1")
	})
	t.Run("misaligned", func(t *testing.T) {
		f := newF(t)
		f.arr.Data++
		f.arr.Shape = []int64{2}
		_, err := usm.View[float32](&f.arr)
		asAccess(t, err, usm.ErrBuffer, "not aligned to 4 bytes")
		// Copies and element reads work bytewise.
		dst := make([]float32, 2)
		require.NoError(t, usm.CopyToSlice(dst, &f.arr))
	})
	t.Run("malformed-layout", func(t *testing.T) {
		f := newF(t)
		f.arr.Strides = []int64{1}
		_, err := usm.Values[float32](&f.arr)
		var me *usm.MalformedError
		require.ErrorAs(t, err, &me)
	})
}

// noCopy is a backend without a Copier: embedding the interface promotes
// only its methods.
type noCopy struct{ usm.Backend }

// waitQueue records waits and fails them on demand.
type waitQueue struct {
	waits int
	err   error
}

func (q *waitQueue) Wait() error { q.waits++; return q.err }

// TestTypedWaitsOnQueue checks that every access waits on the array's
// queue first, and that a failed wait stops it before memory is touched.
func TestTypedWaitsOnQueue(t *testing.T) {
	f := newTypedFixture(t, dtype.Float32, typedLayouts[0], func(i int) float32 { return float32(i) })
	before := slices.Clone(f.base)
	ops := map[string]func() error{
		"View":          func() error { _, err := usm.View[float32](&f.arr); return err },
		"At":            func() error { _, err := usm.At[float32](&f.arr, 0, 0); return err },
		"Values":        func() error { _, err := usm.Values[float32](&f.arr); return err },
		"CopyToSlice":   func() error { return usm.CopyToSlice(make([]float32, 6), &f.arr) },
		"CopyFromSlice": func() error { return usm.CopyFromSlice(&f.arr, make([]float32, 6)) },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			q := &waitQueue{}
			f.arr.Queue = q
			require.NoError(t, op())
			assert.Equal(t, 1, q.waits)
			copy(f.base, before)

			boom := errors.New("queue lost")
			f.arr.Queue = &waitQueue{err: boom}
			require.ErrorIs(t, op(), boom)
			assert.Equal(t, before, f.base, "nothing written after a failed wait")
		})
	}
}

func TestTypedErrorsName(t *testing.T) {
	f := newTypedFixture(t, dtype.Float32, typedLayouts[3], func(i int) float32 { return float32(i) })
	_, err := usm.View[float32](&f.arr)
	assert.EqualError(t, err, "usm.View: strides (1, 2) of shape (2, 3) are not C-contiguous; use usm.Values, usm.At or usm.CopyToSlice")
	assert.Equal(t, "BufferError", usm.PythonException(err))
	_ = fmt.Sprint(err)
}

// FuzzTypedLayout checks typed access on arbitrary layouts that fit the
// fixture's allocation: Values, At and CopyToSlice agree with the SUAI
// formula, and CopyFromSlice writes exactly the array's elements, for
// host memory and through the Copier.
func FuzzTypedLayout(f *testing.F) {
	f.Add(uint8(2), int64(2), int64(3), int64(3), int64(1), int64(0), false)
	f.Add(uint8(2), int64(3), int64(2), int64(-4), int64(-1), int64(20), true)
	f.Add(uint8(1), int64(6), int64(0), int64(-3), int64(0), int64(16), false)
	f.Add(uint8(0), int64(0), int64(0), int64(0), int64(0), int64(23), true)
	f.Add(uint8(2), int64(0), int64(4), int64(-5), int64(2), int64(20), false)
	f.Fuzz(func(t *testing.T, ndim uint8, d0, d1, s0, s1, offset int64, device bool) {
		l := typedLayout{name: "fuzz", offset: offset}
		switch ndim % 3 {
		case 0:
			l.shape = []int64{}
		case 1:
			l.shape, l.strides = []int64{d0}, []int64{s0}
		default:
			l.shape, l.strides = []int64{d0, d1}, []int64{s0, s1}
		}
		gen := func(i int) uint16 { return uint16(i*7919 + 1) }
		fx := newTypedFixture(t, dtype.Uint16, typedLayouts[0], gen)
		fx.arr.Shape, fx.arr.Strides, fx.arr.Offset = l.shape, l.strides, l.offset
		if fx.arr.Validate() != nil || fx.arr.CheckExtent() != nil {
			return // not a layout inside the allocation
		}
		if device {
			fx.arr.Memory.Kind = usm.KindDevice
		}
		offs := l.offsets()
		want := make([]uint16, len(offs))
		for i, o := range offs {
			want[i] = fx.base[o]
		}
		got := make([]uint16, len(offs))
		require.NoError(t, usm.CopyToSlice(got, &fx.arr))
		require.Equal(t, want, got)
		if !device {
			vals, err := usm.Values[uint16](&fx.arr)
			require.NoError(t, err)
			i := 0
			for v := range vals {
				require.Equal(t, want[i], v)
				i++
			}
			require.Equal(t, len(want), i)
			for i, idx := range l.indices() {
				v, err := usm.At[uint16](&fx.arr, idx...)
				require.NoError(t, err)
				require.Equal(t, want[i], v)
			}
		}
		src := make([]uint16, len(offs))
		for i := range src {
			src[i] = gen(1000 + i)
		}
		expect := slices.Clone(fx.base)
		for i, o := range offs {
			expect[o] = src[i]
		}
		require.NoError(t, usm.CopyFromSlice(&fx.arr, src))
		require.Equal(t, expect, fx.base)
	})
}

// TestTypedBoolBytes: a producer's bool array may hold any nonzero byte for
// true; Go must never see a bool whose byte is neither 0 nor 1.
func TestTypedBoolBytes(t *testing.T) {
	f := newTypedFixture(t, dtype.Uint8, typedLayouts[0], func(i int) uint8 { return []uint8{0, 1, 2, 255}[i%4] })
	f.arr.DType = dtype.Bool
	raw := func(b []bool) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b)) }
	want := []byte{0, 1, 1, 1, 0, 1}
	_, err := usm.View[bool](&f.arr)
	var ae *usm.AccessError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.Contains(t, err.Error(), "element 2 holds byte 2")
	for _, kind := range []usm.Kind{usm.KindHost, usm.KindDevice} {
		f.arr.Memory.Kind = kind
		got := make([]bool, 6)
		require.NoError(t, usm.CopyToSlice(got, &f.arr))
		assert.Equal(t, want, raw(got), "CopyToSlice from %s memory", kind)
	}
	f.arr.Memory.Kind = usm.KindHost
	v, err := usm.At[bool](&f.arr, 1, 0) // byte 255
	require.NoError(t, err)
	assert.Equal(t, []byte{1}, raw([]bool{v}))
	vals, err := usm.Values[bool](&f.arr)
	require.NoError(t, err)
	var got []bool
	for v := range vals {
		got = append(got, v)
	}
	assert.Equal(t, want, raw(got), "Values")
}
