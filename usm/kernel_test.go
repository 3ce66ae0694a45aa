package usm_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// The rules usm.Kernel applies before any backend sees a launch (one
// place for every backend): ranges, argument counts, empty ranges, and
// what the queue must offer. A recording Launcher stands for a backend
// here: the rules are usm's own, the backends' launches are tested on
// their runtimes.

type recorder struct {
	launches int
	args     []usm.Arg
	r        usm.Range
	after    int
	closed   int
}

func (l *recorder) Launch(q usm.Queue, r usm.Range, after []usm.Event, args []usm.Arg) (usm.Event, error) {
	l.launches++
	l.args = append(l.args[:0], args...)
	l.r, l.after = r, len(after)
	return usm.Event{}, nil
}

func (l *recorder) Close() error { l.closed++; return nil }

type waits struct{ n int }

func (w *waits) WaitEvent(id uint64) error    { w.n++; return nil }
func (w *waits) ReleaseEvent(id uint64) error { return nil }

func TestRangeCheck(t *testing.T) {
	k := usm.NewKernel("k", 0, &recorder{})
	q, err := cpu.Default().Queue(0)
	require.NoError(t, err)
	for _, r := range []usm.Range{usm.NDRange(1), usm.NDRange(8, 4).WithLocal(2, 2), usm.NDRange(2, 3, 4), usm.NDRange(0)} {
		_, err := k.Launch(q, r, nil)
		assert.NoError(t, err, "%+v", r)
	}
	for _, r := range []usm.Range{{}, usm.NDRange(1, 2, 3, 4), usm.NDRange(-1), usm.NDRange(8).WithLocal(3),
		usm.NDRange(8, 8).WithLocal(2), usm.NDRange(math.MaxInt32 + 1), {Dims: 1, Global: [3]int{4, 4}}} {
		_, err := k.Launch(q, r, nil)
		assert.ErrorIs(t, err, usm.ErrValue, "%+v", r)
	}
	assert.False(t, usm.NDRange(4).HasLocal())
	assert.True(t, usm.NDRange(4).WithLocal(2).HasLocal())
}

func TestArgs(t *testing.T) {
	a := usm.Scalar(float32(1.5))
	assert.False(t, a.IsPointer())
	assert.Equal(t, dtype.Float32, a.DType())
	assert.Equal(t, 4, a.Size())
	assert.EqualValues(t, math.Float32bits(1.5), a.Bits())
	assert.Equal(t, dtype.Int64, usm.Scalar(-1).DType(), "int is int64")
	assert.EqualValues(t, uint64(math.MaxUint64), usm.Scalar(-1).Bits())
	assert.EqualValues(t, 0xff, usm.Scalar(int8(-1)).Bits(), "the low Size bytes")
	assert.Equal(t, 1, usm.Scalar(int8(-1)).Size())
	p := usm.Pointer(0x1000)
	assert.True(t, p.IsPointer())
	assert.Equal(t, 8, p.Size())
	assert.EqualValues(t, 0x1000, p.Bits())
}

func TestKernelLaunchRules(t *testing.T) {
	l := &recorder{}
	k := usm.NewKernel("k", 2, l)
	q, err := cpu.Default().Queue(0)
	require.NoError(t, err)

	_, err = k.Launch(q, usm.NDRange(4), nil, usm.Scalar(1))
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.ErrorContains(t, err, `kernel "k" takes 2 arguments, got 1`)
	_, err = k.Launch(q, usm.NDRange(4).WithLocal(3), nil, usm.Scalar(1), usm.Scalar(2))
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = k.Launch(nil, usm.NDRange(4), nil, usm.Scalar(1), usm.Scalar(2))
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.Zero(t, l.launches, "nothing reached the backend")

	w := &waits{}
	after := []usm.Event{usm.NewEvent(w, 1), {}}
	_, err = k.Launch(q, usm.NDRange(0), after, usm.Scalar(1), usm.Scalar(2))
	require.NoError(t, err)
	assert.Zero(t, l.launches, "an empty range submits nothing")
	assert.Equal(t, 1, w.n, "but waits for the events it was to follow")

	_, err = k.Launch(q, usm.NDRange(4, 2), after, usm.Scalar(int32(7)), usm.Pointer(0x40))
	require.NoError(t, err)
	assert.Equal(t, 1, l.launches)
	assert.Equal(t, []usm.Arg{usm.Scalar(int32(7)), usm.Pointer(0x40)}, l.args)
	assert.Equal(t, usm.NDRange(4, 2), l.r)
	assert.Equal(t, 2, l.after)

	require.NoError(t, k.Close())
	require.NoError(t, k.Close())
	assert.Equal(t, 1, l.closed, "Close reaches the backend once")
	_, err = k.Launch(q, usm.NDRange(4), nil, usm.Scalar(1), usm.Scalar(2))
	assert.ErrorContains(t, err, "closed")
	_, err = k.Launch(q, usm.NDRange(0), nil, usm.Scalar(1), usm.Scalar(2))
	assert.ErrorContains(t, err, "closed", "an empty range on a closed kernel is refused too")
}

// A launch allocates nothing: its arguments and events go into the
// kernel's own memory.
func TestKernelLaunchAllocatesNothing(t *testing.T) {
	l := &recorder{args: make([]usm.Arg, 0, 3)}
	k := usm.NewKernel("k", 3, l)
	q, err := cpu.Default().Queue(0)
	require.NoError(t, err)
	after := []usm.Event{usm.NewEvent(&waits{}, 1)}
	_, _ = k.Launch(q, usm.NDRange(8), after, usm.Scalar(float32(1)), usm.Pointer(0x40), usm.Scalar(3))
	n := testing.AllocsPerRun(100, func() {
		_, _ = k.Launch(q, usm.NDRange(8), after, usm.Scalar(float32(1)), usm.Pointer(0x40), usm.Scalar(3))
	})
	assert.Zero(t, n)
}

func TestEventZero(t *testing.T) {
	var e usm.Event
	assert.NoError(t, e.Wait())
	assert.NoError(t, e.Close())
	src, id := e.Source()
	assert.Nil(t, src)
	assert.Zero(t, id)
}

func TestBuildProgramRefusals(t *testing.T) {
	q, err := cpu.Default().Queue(0)
	require.NoError(t, err)
	_, err = usm.BuildProgram(q, usm.ProgramSource{})
	assert.ErrorIs(t, err, usm.ErrValue, "no source")
	_, err = usm.BuildProgram(q, usm.ProgramSource{OpenCLC: "x", SPIRV: []byte{1}})
	assert.ErrorIs(t, err, usm.ErrValue, "two sources")
	_, err = usm.BuildProgram(q, usm.ProgramSource{OpenCLC: "kernel void k(void) {}\x00"})
	assert.ErrorIs(t, err, usm.ErrValue, "a NUL byte in the source")
	_, err = usm.BuildProgram(q, usm.ProgramSource{SPIRV: []byte{0x03, 0x02, 0x23, 0x07, 0}, Options: "-O2\x00"})
	assert.ErrorIs(t, err, usm.ErrValue, "a NUL byte in the options")
	assert.NoError(t, usm.ProgramSource{SPIRV: []byte{0x03, 0x02, 0x23, 0x07, 0}}.Check(), "SPIR-V is binary: NUL bytes are its own")
	// No queue, and a queue that builds nothing, say so, and what builds
	// (it once read "no queue runs no kernels").
	_, err = usm.BuildProgram(nil, usm.ProgramSource{OpenCLC: "x"})
	assert.ErrorIs(t, err, usm.ErrNotSupported)
	const builders = "kernels are built for a queue of the opencl, levelzero or dpctl backend; " +
		"memory the host reads is computed on in Go (View, CopyToSlice)"
	assert.Equal(t, "usm.BuildProgram: no queue was given (nil; an array in host memory has none): "+builders, err.Error())
	_, err = usm.BuildProgram(q, usm.ProgramSource{OpenCLC: "x"})
	assert.ErrorIs(t, err, usm.ErrNotSupported)
	assert.Equal(t, "usm.BuildProgram: the host backend's queue (package cpu) cannot build kernels: "+builders, err.Error())
	_, err = usm.BuildProgram(&plainQueue{}, usm.ProgramSource{OpenCLC: "x"})
	assert.Equal(t, "usm.BuildProgram: a queue of type *usm_test.plainQueue cannot build kernels: "+builders, err.Error())
	be := &usm.BuildError{Op: "clBuildProgram", Log: "line 1: error", Err: errors.New("failed")}
	assert.ErrorIs(t, be, usm.ErrValue)
	assert.Equal(t, "clBuildProgram: the program does not build: failed\nline 1: error", be.Error())
	assert.Equal(t, "ValueError", usm.PythonException(be))
}

// An array argument reaches the backend as the address of its element 0,
// held for the launch and released after it; a read-only array and one
// whose memory is gone are refused before the backend sees anything, on
// an empty range too.
func TestArrayArg(t *testing.T) {
	l := &recorder{}
	k := usm.NewKernel("k", 2, l)
	q, err := cpu.Default().Queue(0)
	require.NoError(t, err)
	host := new(cpu.Backend)
	alloc, err := host.AllocHost(64)
	require.NoError(t, err)
	arr, err := usm.NewRegistry(host).NewArray(alloc, dtype.Float32, []int64{4, 4})
	require.NoError(t, err)
	view := *arr
	view.Shape, view.Strides, view.Offset = []int64{4}, []int64{-4}, 13 // column 1, bottom up

	_, err = k.Launch(q, usm.NDRange(4), nil, usm.ArrayArg(&view), usm.Scalar(float32(1)))
	require.NoError(t, err)
	require.Equal(t, 1, l.launches)
	assert.True(t, l.args[0].IsPointer())
	assert.EqualValues(t, alloc.Pointer()+13*4, l.args[0].Bits(), "element 0's address")

	ro := *arr
	ro.ReadOnly = true
	for _, r := range []usm.Range{usm.NDRange(4), usm.NDRange(0)} {
		_, err = k.Launch(q, r, nil, usm.ArrayArg(&ro), usm.Scalar(float32(1)))
		assert.ErrorIs(t, err, usm.ErrBuffer)
		assert.ErrorContains(t, err, "argument 0 of kernel \"k\"")
	}
	require.NoError(t, alloc.Free())
	assert.False(t, alloc.Live(), "the launch's hold was released")
	for _, r := range []usm.Range{usm.NDRange(4), usm.NDRange(0)} {
		_, err = k.Launch(q, r, nil, usm.Scalar(float32(1)), usm.ArrayArg(arr))
		assert.ErrorIs(t, err, usm.ErrClosed)
		assert.ErrorIs(t, err, usm.ErrValue)
		assert.Equal(t, "ValueError", usm.PythonException(err))
	}
	assert.Equal(t, 1, l.launches, "nothing reached the backend")
}
