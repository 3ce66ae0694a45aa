package usm_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

func hostDevice(t *testing.T) (usm.Device, *cpu.Backend) {
	t.Helper()
	b := new(cpu.Backend)
	d, err := usm.NewRegistry(b).Device("host")
	require.NoError(t, err)
	return d, b
}

// iota fills a new 2-d float64 array of shape rows×cols with 0, 1, 2, ...
func iota(t *testing.T, d usm.Device, rows, cols int64) *usm.NDArray[float64] {
	t.Helper()
	x, err := usm.Empty[float64](d, usm.KindShared, rows, cols)
	require.NoError(t, err)
	v := make([]float64, rows*cols)
	for i := range v {
		v[i] = float64(i)
	}
	require.NoError(t, x.CopyFrom(v))
	return x
}

func contents[T usm.Element](t *testing.T, x *usm.NDArray[T]) []T {
	t.Helper()
	n := int64(1)
	for _, s := range x.Shape() {
		n *= s
	}
	out := make([]T, n)
	require.NoError(t, x.CopyTo(out))
	return out
}

// One array's life on the host backend: allocate, write, read through
// every accessor, Close once (and again, harmlessly).
func TestNDArrayLife(t *testing.T) {
	d, b := hostDevice(t)
	before := cpu.Live()["allocations"]
	x := iota(t, d, 2, 3)
	assert.Equal(t, []int64{2, 3}, x.Shape())
	assert.Equal(t, []int64{3, 1}, x.Strides())
	assert.NotNil(t, x.Queue())

	xs, err := x.Elements()
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 2, 3, 4, 5}, xs)
	xs[4] = 40
	v, err := x.At(1, 1)
	require.NoError(t, err)
	assert.Equal(t, 40.0, v)
	require.NoError(t, x.Set(-1, 0, 2))
	assert.Equal(t, []float64{0, 1, -1, 3, 40, 5}, contents(t, x))

	_, err = x.At(2, 0)
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.ErrorIs(t, x.Set(1, 0), usm.ErrValue)
	assert.ErrorIs(t, x.CopyFrom(make([]float64, 5)), usm.ErrValue)
	assert.ErrorIs(t, x.CopyTo(make([]float64, 7)), usm.ErrValue)

	a, err := x.Array()
	require.NoError(t, err)
	assert.Equal(t, dtype.Float64, a.DType)
	assert.Equal(t, []int64{2, 3}, a.Shape)
	a.Shape[0] = 99 // the copy is the caller's
	assert.Equal(t, []int64{2, 3}, x.Shape())

	assert.Equal(t, before+1, cpu.Live()["allocations"])
	require.NoError(t, x.Close())
	require.NoError(t, x.Close(), "a second Close does nothing")
	assert.Equal(t, before, cpu.Live()["allocations"], "Close gave the memory back")
	_ = b
}

// A closed array, and every view of it, refuses every use with ErrClosed
// (kind ErrValue); a closed view refuses, its array does not.
func TestNDArrayClosed(t *testing.T) {
	d, _ := hostDevice(t)
	x := iota(t, d, 4, 4)
	col, err := x.Slice(1, 2, 3, 1)
	require.NoError(t, err)
	row, err := x.Slice(0, 1, 2, 1)
	require.NoError(t, err)
	require.NoError(t, row.Close())
	_, err = row.At(0, 0)
	assert.ErrorIs(t, err, usm.ErrClosed)
	_, err = x.At(1, 1)
	assert.NoError(t, err, "closing a view leaves its array")

	require.NoError(t, x.Close())
	for _, y := range []*usm.NDArray[float64]{x, col} {
		closed := func(what string, err error) {
			t.Helper()
			assert.ErrorIs(t, err, usm.ErrClosed, what)
			assert.ErrorIs(t, err, usm.ErrValue, what)
			assert.Equal(t, "ValueError", usm.PythonException(err), what)
		}
		_, err := y.Elements()
		closed("Elements", err)
		_, _, err = y.Raw()
		closed("Raw", err)
		_, err = y.At(0, 0)
		closed("At", err)
		closed("Set", y.Set(1, 0, 0))
		closed("CopyTo", y.CopyTo(make([]float64, 16)))
		closed("CopyFrom", y.CopyFrom(make([]float64, 16)))
		_, err = y.Array()
		closed("Array", err)
		_, err = y.Slice(0, 0, 1, 1)
		closed("Slice", err)
		_, err = y.Reshape(-1)
		closed("Reshape", err)
		_, err = y.Transpose()
		closed("Transpose", err)
		assert.NoError(t, y.Close())
	}
	var zero usm.NDArray[float32]
	_, err = zero.At()
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.NoError(t, zero.Close())
	var null *usm.NDArray[float32]
	assert.NoError(t, null.Close())
	assert.Nil(t, null.Shape())
}

// Views share the memory and follow the layout rules: slices with steps
// either way, reshape of contiguous arrays only, transposes; writes
// through a view land in the array.
func TestNDArrayViews(t *testing.T) {
	d, _ := hostDevice(t)
	x := iota(t, d, 3, 4) // 0..11
	defer x.Close()

	col, err := x.Slice(1, 1, 2, 1) // x[:, 1:2]
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 1}, col.Shape())
	assert.Equal(t, []float64{1, 5, 9}, contents(t, col))

	odd, err := x.Slice(1, 1, 4, 2) // x[:, 1::2]
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 3, 5, 7, 9, 11}, contents(t, odd))

	rev, err := x.Slice(0, 0, 3, -1) // x[::-1]
	require.NoError(t, err)
	assert.Equal(t, []float64{8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3}, contents(t, rev))
	rev2, err := x.Slice(1, 0, 4, -2) // x[:, ::-2] = columns 3, 1
	require.NoError(t, err)
	assert.Equal(t, []float64{3, 1, 7, 5, 11, 9}, contents(t, rev2))
	empty, err := x.Slice(0, 2, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 4}, empty.Shape())
	assert.Empty(t, contents(t, empty))

	tr, err := x.Transpose()
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 3}, tr.Shape())
	assert.Equal(t, []int64{1, 4}, tr.Strides())
	assert.Equal(t, []float64{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, contents(t, tr))
	v, err := tr.At(3, 1)
	require.NoError(t, err)
	assert.Equal(t, 7.0, v)

	flat, err := x.Reshape(-1)
	require.NoError(t, err)
	assert.Equal(t, []int64{12}, flat.Shape())
	cube, err := flat.Reshape(2, -1, 3)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 2, 3}, cube.Shape())
	_, err = tr.Reshape(12)
	assert.ErrorIs(t, err, usm.ErrValue, "a transpose needs a copy")
	for _, bad := range [][]int64{{5, 2}, {-1, -1}, {-2, 6}, {0, -1}, {1 << 62, 1 << 62}} {
		_, err := x.Reshape(bad...)
		assert.Error(t, err, "%v", bad)
	}

	require.NoError(t, tr.Set(-7, 3, 1)) // x[1, 3]
	got, err := x.At(1, 3)
	require.NoError(t, err)
	assert.Equal(t, -7.0, got)

	for _, bad := range []struct {
		dim               int
		start, stop, step int64
	}{{2, 0, 1, 1}, {-1, 0, 1, 1}, {0, 0, 4, 1}, {0, 2, 1, 1}, {0, -1, 1, 1}, {0, 0, 1, 0}, {0, 0, 3, -1 << 63}} {
		_, err := x.Slice(bad.dim, bad.start, bad.stop, bad.step)
		assert.ErrorIs(t, err, usm.ErrValue, "%+v", bad)
	}
	for _, bad := range [][]int{{0}, {0, 0}, {0, 2}, {1, -1}} {
		_, err := x.Transpose(bad...)
		assert.ErrorIs(t, err, usm.ErrValue, "%v", bad)
	}
}

// Raw serves the strided views gonum-like code indexes itself, and
// refuses reversed ones; Elements serves C-contiguous ones only.
func TestNDArrayRaw(t *testing.T) {
	d, _ := hostDevice(t)
	x := iota(t, d, 3, 4)
	defer x.Close()
	odd, err := x.Slice(1, 1, 4, 2)
	require.NoError(t, err)
	data, strides, err := odd.Raw()
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 2}, strides)
	assert.Len(t, data, 11, "element 0 to the last one the view touches")
	assert.Equal(t, 11.0, data[2*strides[0]+1*strides[1]])
	_, err = odd.Elements()
	assert.ErrorIs(t, err, usm.ErrBuffer)

	tr, err := x.Transpose()
	require.NoError(t, err)
	data, strides, err = tr.Raw()
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 4}, strides)
	assert.Equal(t, 6.0, data[2*strides[0]+1*strides[1]])

	rev, err := x.Slice(0, 0, 3, -1)
	require.NoError(t, err)
	_, _, err = rev.Raw()
	assert.ErrorIs(t, err, usm.ErrBuffer)
	one, err := rev.Slice(0, 1, 2, 1) // extent 1: its negative stride is never followed
	require.NoError(t, err)
	data, _, err = one.Raw()
	require.NoError(t, err)
	assert.Equal(t, []float64{4, 5, 6, 7}, data)
}

func TestEmptyErrors(t *testing.T) {
	d, _ := hostDevice(t)
	_, err := usm.Empty[float32](usm.Device{}, usm.KindShared, 4)
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = usm.Empty[float32](d, usm.KindShared, 2, -1)
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = usm.Empty[float64](d, usm.KindShared, 1<<40, 1<<40)
	assert.ErrorIs(t, err, usm.ErrOverflow)
	x, err := usm.Empty[int32](d, usm.KindShared, 0, 5) // empty, still an allocation
	require.NoError(t, err)
	xs, err := x.Elements()
	require.NoError(t, err)
	assert.Empty(t, xs)
	require.NoError(t, x.Close())
	s, err := usm.Empty[complex64](d, usm.KindHost) // 0-d: one element
	require.NoError(t, err)
	require.NoError(t, s.Set(1+2i))
	v, err := s.At()
	require.NoError(t, err)
	assert.Equal(t, complex64(1+2i), v)
	require.NoError(t, s.Close())
}

// countingOwner counts what an adopted array releases.
type countingOwner struct{ retained, released atomic.Int32 }

func (o *countingOwner) Retain() bool { o.retained.Add(1); return true }
func (o *countingOwner) Release()     { o.released.Add(1) }

// Adopt takes the caller's reference: Close releases it once; an element
// type other than T leaves it with the caller.
func TestAdopt(t *testing.T) {
	host := new(cpu.Backend)
	alloc, err := host.AllocHost(32)
	require.NoError(t, err)
	defer alloc.Free()
	arr, err := usm.NewRegistry(host).NewArray(alloc, dtype.Float32, []int64{2, 4})
	require.NoError(t, err)
	o := &countingOwner{}
	arr.Owner = o
	_, err = usm.Adopt[float64](arr)
	assert.ErrorIs(t, err, usm.ErrType)
	x, err := usm.Adopt[float32](arr)
	require.NoError(t, err)
	arr.Shape[0] = 1 // the caller's Array is a copy's source only
	assert.Equal(t, []int64{2, 4}, x.Shape())
	require.NoError(t, x.CopyFrom([]float32{1, 2, 3, 4, 5, 6, 7, 8}))
	assert.Equal(t, o.retained.Load(), o.released.Load(), "each call released what it held")
	require.NoError(t, x.Close())
	require.NoError(t, x.Close())
	assert.EqualValues(t, 1, o.released.Load()-o.retained.Load(), "the adopted reference released once")

	_, err = usm.Adopt[float32](nil)
	assert.ErrorIs(t, err, usm.ErrValue)
}

// A DLPack export of an array keeps its memory past Close, for its
// consumer; the array itself is closed.
func TestNDArrayExportOutlivesClose(t *testing.T) {
	d, _ := hostDevice(t)
	x := iota(t, d, 2, 2)
	a, err := x.Array()
	require.NoError(t, err)
	m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	require.NoError(t, err)
	live := cpu.Live()["allocations"]
	require.NoError(t, x.Close())
	assert.Equal(t, live, cpu.Live()["allocations"], "the export holds the memory")
	tn, err := dlpack.Import(m, dlpack.ImportOptions{})
	require.NoError(t, err)
	v, err := usm.At[float64](&tn.Array, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, 3.0, v)
	tn.Release()
	assert.Equal(t, live-1, cpu.Live()["allocations"])
	_, err = usm.View[float64](a)
	assert.ErrorIs(t, err, usm.ErrClosed, "the Array of a closed array whose memory went")
}

// Close waits for the array's queue before the memory goes: a kernel
// launched there has finished with it.
func TestNDArrayCloseWaits(t *testing.T) {
	host := new(cpu.Backend)
	alloc, err := host.AllocHost(16)
	require.NoError(t, err)
	arr, err := usm.NewRegistry(host).NewArray(alloc, dtype.Int32, []int64{4})
	require.NoError(t, err)
	q := &countingQueue{}
	arr.Queue = q
	arr.Owner = alloc
	x, err := usm.Adopt[int32](arr)
	require.NoError(t, err)
	require.NoError(t, x.Close())
	assert.Equal(t, 1, q.waits)
	require.NoError(t, alloc.Free())
}

// An array as a kernel argument is its element 0's address; closed, it is
// refused before the backend sees the launch.
func TestNDArrayArg(t *testing.T) {
	d, _ := hostDevice(t)
	x := iota(t, d, 3, 4)
	l := &recorder{}
	k := usm.NewKernel("k", 1, l)
	q := x.Queue()
	col, err := x.Slice(1, 2, 3, 1)
	require.NoError(t, err)
	_, err = k.Launch(q, usm.NDRange(3), nil, col.Arg())
	require.NoError(t, err)
	xa, err := x.Array()
	require.NoError(t, err)
	assert.EqualValues(t, xa.Data+2*8, l.args[0].Bits())
	require.NoError(t, x.Close())
	_, err = k.Launch(q, usm.NDRange(3), nil, col.Arg())
	assert.ErrorIs(t, err, usm.ErrClosed)
	var null *usm.NDArray[float32]
	_, err = k.Launch(q, usm.NDRange(3), nil, null.Arg())
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.Equal(t, 1, l.launches)
}

// Accesses racing Close on another goroutine read the memory while it is
// there or are refused; the memory goes once, when the last one is done.
func TestNDArrayCloseRaces(t *testing.T) {
	d, _ := hostDevice(t)
	before := cpu.Live()["allocations"]
	for range 100 {
		x := iota(t, d, 16, 16)
		v, err := x.Transpose()
		require.NoError(t, err)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dst := make([]float64, 256)
				for range 10 {
					var err error
					if g%2 == 0 {
						err = v.CopyTo(dst)
					} else {
						_, err = x.At(3, 4)
					}
					if err != nil {
						assert.ErrorIs(t, err, usm.ErrClosed)
						return
					}
				}
			}()
		}
		require.NoError(t, x.Close())
		wg.Wait()
	}
	assert.Equal(t, before, cpu.Live()["allocations"])
}

func TestInGroupsOf(t *testing.T) {
	r := usm.NDRange(1000).InGroupsOf(64)
	assert.Equal(t, usm.Range{Dims: 1, Global: [3]int{1024}, Local: [3]int{64}}, r)
	r = usm.NDRange(100, 30).InGroupsOf(16, 16)
	assert.Equal(t, [3]int{112, 32}, r.Global)
	assert.Equal(t, usm.NDRange(128).WithLocal(64), usm.NDRange(128).InGroupsOf(64), "a multiple stays")
	assert.Equal(t, usm.NDRange(0).WithLocal(8), usm.NDRange(0).InGroupsOf(8))

	k := usm.NewKernel("k", 0, &recorder{})
	q, err := cpu.Default().Queue(0)
	require.NoError(t, err)
	_, err = k.Launch(q, usm.NDRange(1000).InGroupsOf(64), nil)
	assert.NoError(t, err)
	for _, bad := range []usm.Range{usm.NDRange(10).InGroupsOf(-4), usm.NDRange(10, 10).InGroupsOf(4),
		usm.NDRange(1<<31 - 1).InGroupsOf(1 << 20)} {
		_, err := k.Launch(q, bad, nil)
		assert.ErrorIs(t, err, usm.ErrValue, "%+v", bad)
	}
}
