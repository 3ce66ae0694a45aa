package levelzero

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// The fake driver builds no code: it reads the SPIR-V module's entry
// points and runs the kernels of internal/testutil/testdata/kernels.cl it
// knows by name with C of its own (levelzero/testdata/fakedriver). So
// these tests check what usmbridge asks of Level Zero (modules from
// SPIR-V, kernels, group sizes, arguments, launches with events on
// immediate lists) and that every result lands where it should.

func floats(t *testing.T, b *Backend, dev, n int) (uintptr, []float32) {
	t.Helper()
	return testutil.SharedFloats(t, b, dev, n)
}

func TestKernelSPIRV(t *testing.T) {
	b := newBackend(t)
	spv := testutil.SPIRV(t)
	q, err := b.Queue(0)
	require.NoError(t, err)
	src := usm.ProgramSource{SPIRV: spv}
	p, err := usm.BuildProgram(q, src)
	require.NoError(t, err)
	p2, err := usm.BuildProgram(q, src)
	require.NoError(t, err)
	assert.Same(t, p, p2, "built once per context, device, source and options")
	before := mustFake(t)

	k, err := p.Kernel("saxpy")
	require.NoError(t, err)
	assert.Equal(t, 5, k.NumArgs(), "from the module's OpFunctionParameters")
	const n = 512
	xp, x := floats(t, b, 0, 2*n)
	yp, y := floats(t, b, 0, 3*n)
	for i := range x {
		x[i] = float32(i)
	}
	for i := range y {
		y[i] = 1
	}
	ev, err := k.Launch(q, usm.NDRange(n), nil, usm.Scalar(float32(2)), usm.Pointer(xp), usm.Scalar(int64(2)),
		usm.Pointer(yp+uintptr(3*n-1)*4), usm.Scalar(int64(-3)))
	require.NoError(t, err)
	require.NoError(t, ev.Wait())
	require.NoError(t, ev.Close())
	require.NoError(t, ev.Close())
	for i := range y {
		want := float32(1)
		if (3*n-1-i)%3 == 0 {
			want = 1 + 2*x[2*((3*n-1-i)/3)]
		}
		require.Equal(t, want, y[i], "y[%d]", i)
	}

	ip, err := b.Alloc(0, usm.KindDevice, 16*6*4)
	require.NoError(t, err)
	defer ip.Free()
	ki, err := p.Kernel("iota2d")
	require.NoError(t, err)
	ev, err = ki.Launch(q, usm.NDRange(16, 6).WithLocal(4, 3), nil, usm.Pointer(ip.Pointer()), usm.Scalar(int32(16)), usm.Scalar(int32(3)))
	require.NoError(t, err)
	require.NoError(t, ev.Close(), "results are ordered on the list without the event")
	out := make([]int32, 16*6)
	require.NoError(t, b.Copy(uintptr(unsafe.Pointer(&out[0])), ip.Pointer(), uintptr(len(out))*4))
	for j := range 6 {
		for i := range 16 {
			require.EqualValues(t, 1000*j+i+3, out[j*16+i])
		}
	}
	after := mustFake(t)
	assert.Equal(t, before.Launches+2, after.Launches, "both launches ran in the driver")
	assert.Zero(t, Live()["launches"])
}

// A malformed module never reaches zeModuleCreate (the fake counts its
// calls): Intel's OpenCL runtime looped forever or ended the process on
// these (testutil.MalformedSPIRV), and a driver need not be kinder. A
// big-endian module reaches it in little-endian words, which the fake
// alone reads.
func TestKernelMalformedSPIRV(t *testing.T) {
	b := newBackend(t)
	q, err := b.Queue(0)
	require.NoError(t, err)
	before := mustFake(t).ModuleCreates
	for _, m := range testutil.MalformedSPIRV(t) {
		_, err := usm.BuildProgram(q, usm.ProgramSource{SPIRV: m.Module})
		require.ErrorIs(t, err, usm.ErrValue, m.Name)
		var be *usm.BuildError
		require.False(t, errors.As(err, &be), "%s: %v", m.Name, err)
		assert.ErrorContains(t, err, "malformed SPIR-V module: word "+strconv.Itoa(m.Word)+": ", m.Name)
	}
	assert.Equal(t, before, mustFake(t).ModuleCreates, "no malformed module reached zeModuleCreate")

	spv := testutil.SPIRV(t)
	be := make([]byte, len(spv))
	for i := 0; i < len(spv); i += 4 {
		binary.BigEndian.PutUint32(be[i:], binary.LittleEndian.Uint32(spv[i:]))
	}
	p, err := usm.BuildProgram(q, usm.ProgramSource{SPIRV: be})
	require.NoError(t, err, "big-endian")
	assert.Equal(t, before+1, mustFake(t).ModuleCreates)
	k, err := p.Kernel("fill")
	require.NoError(t, err)
	yp, y := floats(t, b, 0, 16)
	ev, err := k.Launch(q, usm.NDRange(16), nil, usm.Pointer(yp), usm.Scalar(float32(2.5)))
	require.NoError(t, err)
	require.NoError(t, ev.Wait())
	require.NoError(t, ev.Close())
	assert.Equal(t, float32(2.5), y[15])
	_, err = k.Launch(q, usm.NDRange(16), nil, usm.Scalar(float32(1)), usm.Scalar(float32(2.5)))
	assert.ErrorContains(t, err, "is a pointer to __global", "the big-endian module's parameters are read too")
}

// What the driver refuses, and what usmbridge refuses before anything
// reaches it.
func TestKernelRefusals(t *testing.T) {
	b := newBackend(t)
	spv := testutil.SPIRV(t)
	q, err := b.Queue(0)
	require.NoError(t, err)
	_, err = usm.BuildProgram(q, usm.ProgramSource{OpenCLC: testutil.KernelSource()})
	assert.ErrorIs(t, err, usm.ErrNotSupported, "Level Zero builds SPIR-V only")

	// A module usmbridge finds well formed, with nothing for the driver
	// to build: the header alone.
	headerOnly := []byte{0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	_, err = usm.BuildProgram(q, usm.ProgramSource{SPIRV: headerOnly})
	var be *usm.BuildError
	require.True(t, errors.As(err, &be), "%v", err)
	assert.ErrorIs(t, err, zeapi.ErrorModuleBuildFailure)
	assert.ErrorIs(t, err, usm.ErrValue)
	ctx, err := b.Context(0)
	require.NoError(t, err)
	// The log through a loader that wraps handles is not readable (see
	// zeapi.Lib.ModuleCreate); the "intercept" configuration runs this
	// test that way.
	direct := api.DirectHandles(zeapi.Context(ctx.Native()))
	assert.Equal(t, os.Getenv(childEnv) != "intercept", direct)
	if direct {
		assert.Contains(t, be.Log, "the SPIR-V module has no entry point")
	} else {
		assert.Contains(t, be.Log, "no build log")
	}
	_, err = usm.BuildProgram(q, usm.ProgramSource{SPIRV: spv, Options: "-fakeze-fail"})
	require.True(t, errors.As(err, &be), "%v", err)
	if direct {
		assert.Contains(t, be.Log, "-fakeze-fail")
	}

	p, err := usm.BuildProgram(q, usm.ProgramSource{SPIRV: spv})
	require.NoError(t, err)
	_, err = p.Kernel("no_such_kernel")
	assert.ErrorIs(t, err, zeapi.ErrorInvalidKernelName)
	_, err = p.Kernel(strings.Repeat("k", 100_000))
	require.ErrorIs(t, err, zeapi.ErrorInvalidKernelName)
	if n := len(err.Error()); n > 1000 { // quoted 200 bytes at most (errkind.Quote); testify would print it all
		t.Fatalf("a message of %d bytes", n)
	}
	assert.ErrorContains(t, err, `no kernel "`+strings.Repeat("k", 200)+`"... (100000 bytes) in the module`)
	k, err := p.Kernel("fill")
	require.NoError(t, err)
	yp, y := floats(t, b, 0, 16)
	_, err = k.Launch(q, usm.NDRange(16), nil, usm.Pointer(yp))
	assert.ErrorContains(t, err, "takes 2 arguments, got 1")
	// A scalar where the kernel takes a pointer: the SPIR-V says what each
	// parameter is, and Level Zero, which has no query, would take 8 bytes
	// for an address the kernel then reads through.
	for _, s := range []usm.Arg{usm.Scalar(float32(1)), usm.Scalar(int64(0x1234))} {
		_, err = k.Launch(q, usm.NDRange(16), nil, s, usm.Scalar(float32(1)))
		assert.ErrorIs(t, err, usm.ErrValue)
		assert.ErrorContains(t, err, "argument 0 of kernel \"fill\" is a pointer to __global or __constant memory; got a scalar")
	}
	goMem := make([]float32, 16)
	_, err = k.Launch(q, usm.NDRange(16), nil, usm.Pointer(uintptr(unsafe.Pointer(&goMem[0]))), usm.Scalar(float32(1)))
	assert.ErrorContains(t, err, "not USM")
	if len(b.Devices()) > 1 { // the plain configuration has two fake devices
		q1, err := b.Queue(1)
		require.NoError(t, err)
		_, err = k.Launch(q1, usm.NDRange(16), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
		assert.ErrorContains(t, err, "not of the context and device", "a kernel built for device 0 on device 1's list")
	}
	cq, err := api.CommandQueueCreate(zeapi.Context(ctx.Native()), b.devs[0].dev.h, zeapi.QueueModeDefault)
	require.NoError(t, err)
	bq, err := ctx.UnsafeBorrowQueue(uintptr(cq))
	require.NoError(t, err)
	_, err = k.Launch(bq, usm.NDRange(16), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
	assert.ErrorContains(t, err, "not to a command queue")
	require.NoError(t, bq.Close())
	require.NoError(t, api.CommandQueueDestroy(cq))
	l, err := newImmediateList(ctx, b.devs[0].dev, zeapi.QueueModeSynchronous)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	_, err = k.Launch(l, usm.NDRange(16), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
	assert.ErrorIs(t, err, usm.ErrValue, "a closed list")
	for _, v := range y {
		require.Zero(t, v, "a refused launch wrote nothing")
	}
	require.NoError(t, p.Close())
	_, err = k.Launch(q, usm.NDRange(16), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
	assert.ErrorIs(t, err, usm.ErrValue, "a kernel of a closed program")
}

// A launch after another's event waits for it on the device: the first
// list is held back behind a host-signalled gate, and the second list's
// launch must neither run before the first's (the fill would overwrite
// it) nor block the host (both lists are asynchronous).
func TestKernelAfterEvents(t *testing.T) {
	for _, mode := range []string{"after", "no after"} {
		t.Run(mode, func(t *testing.T) {
			b := newBackend(t)
			spv := testutil.SPIRV(t)
			ctx, err := b.Context(0)
			require.NoError(t, err)
			dev := b.devs[0].dev
			held, err := newImmediateList(ctx, dev, zeapi.QueueModeAsynchronous)
			require.NoError(t, err)
			defer func() { require.NoError(t, held.Close()) }()
			other, err := newImmediateList(ctx, dev, zeapi.QueueModeAsynchronous)
			require.NoError(t, err)
			defer func() { require.NoError(t, other.Close()) }()
			gate := hostEvent(t, ctx)

			p, err := usm.BuildProgram(held, usm.ProgramSource{SPIRV: spv})
			require.NoError(t, err)
			fill, err := p.Kernel("fill")
			require.NoError(t, err)
			sa, err := p.Kernel("scale_add")
			require.NoError(t, err)
			yp, y := floats(t, b, 0, 64)
			require.NoError(t, held.appendBarrier(nil, gate))
			ev1, err := fill.Launch(held, usm.NDRange(64), nil, usm.Pointer(yp), usm.Scalar(float32(5)))
			require.NoError(t, err)
			var deps []usm.Event
			if mode == "after" {
				deps = []usm.Event{ev1}
			}
			ev2, err := sa.Launch(other, usm.NDRange(64), deps, usm.Pointer(yp), usm.Scalar(float32(2)), usm.Scalar(float32(1)))
			require.NoError(t, err)
			require.NoError(t, ev1.Close(), "released before its launch ran: kept until the driver signals it")
			if mode == "after" {
				assert.Zero(t, y[0], "the second launch waits for the held first one")
			}
			require.NoError(t, gate.hostSignal())
			require.NoError(t, ev2.Wait())
			require.NoError(t, ev2.Close())
			require.NoError(t, held.Wait())
			want := float32(11)
			if mode == "no after" {
				want = 5
			}
			for i := range y {
				require.Equal(t, want, y[i], "y[%d]", i)
			}
		})
	}
}

// A launch on a synchronous list (a Backend's) is done when its append
// returns: its results are there at once, it returns the zero Event,
// which is complete, and the driver makes no event for it. On an
// asynchronous list the launch signals an event the table hands out.
func TestKernelLaunchSynchronous(t *testing.T) {
	b := newBackend(t)
	q, err := b.Queue(0)
	require.NoError(t, err)
	_, k := testutil.BuildKernel(t, q, usm.ProgramSource{SPIRV: testutil.SPIRV(t)}, "fill")
	yp, y := floats(t, b, 0, 8)
	require.NoError(t, testutil.LaunchWait(k, q, usm.NDRange(8), usm.Pointer(yp), usm.Scalar(float32(1))))
	before := mustFake(t)
	ev, err := k.Launch(q, usm.NDRange(8), nil, usm.Pointer(yp), usm.Scalar(float32(3)))
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 3, 3, 3, 3, 3, 3, 3}, y, "done before any wait")
	src, id := ev.Source()
	assert.Nil(t, src, "the zero Event")
	assert.Zero(t, id)
	after := mustFake(t)
	assert.Equal(t, before.Launches+1, after.Launches)
	assert.Equal(t, before.objects(), after.objects(), "no event, no pool")
	require.NoError(t, ev.Wait())
	require.NoError(t, ev.Close())

	ctx, err := b.Context(0)
	require.NoError(t, err)
	async, err := newImmediateList(ctx, b.devs[0].dev, zeapi.QueueModeAsynchronous)
	require.NoError(t, err)
	defer func() { require.NoError(t, async.Close()) }()
	ev, err = k.Launch(async, usm.NDRange(8), nil, usm.Pointer(yp), usm.Scalar(float32(4)))
	require.NoError(t, err)
	src, _ = ev.Source()
	assert.NotNil(t, src, "an event of the table")
	require.NoError(t, ev.Wait())
	require.NoError(t, ev.Close())
	assert.Equal(t, float32(4), y[7])
	assert.Zero(t, Live()["launches"])
}

// A launch sets only the arguments that changed since the last one (the
// kernel object keeps them), and after a launch that failed it sets every
// one again: scale_add's c, changed in a launch refused at m (a double
// where the kernel takes a float, whose size the driver refuses), never
// reached the kernel, so the next launch with that c must set it.
func TestKernelArgumentsKept(t *testing.T) {
	b := newBackend(t)
	q, err := b.Queue(0)
	require.NoError(t, err)
	_, k := testutil.BuildKernel(t, q, usm.ProgramSource{SPIRV: testutil.SPIRV(t)}, "scale_add")
	yp, y := floats(t, b, 0, 4)
	zp, z := floats(t, b, 0, 4)
	launch := func(p uintptr, m, c usm.Arg) error {
		return testutil.LaunchWait(k, q, usm.NDRange(4), usm.Pointer(p), m, c)
	}
	require.NoError(t, launch(yp, usm.Scalar(float32(1)), usm.Scalar(float32(2))))
	assert.Equal(t, float32(2), y[0])
	require.NoError(t, launch(yp, usm.Scalar(float32(1)), usm.Scalar(float32(2))), "nothing changed")
	assert.Equal(t, float32(4), y[0])
	require.NoError(t, launch(zp, usm.Scalar(float32(1)), usm.Scalar(float32(2))), "the pointer changed")
	assert.Equal(t, float32(2), z[0])
	assert.Equal(t, float32(4), y[0], "y is left alone")
	require.NoError(t, launch(yp, usm.Scalar(float32(3)), usm.Scalar(float32(2))), "the pointer and m changed")
	assert.Equal(t, float32(14), y[0])

	err = launch(yp, usm.Scalar(float64(1)), usm.Scalar(float32(5)))
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.ErrorIs(t, err, zeapi.ErrorInvalidKernelArgumentSize)
	assert.ErrorContains(t, err, "argument 1 of kernel \"scale_add\"")
	assert.Equal(t, float32(14), y[0], "nothing ran")
	require.NoError(t, launch(yp, usm.Scalar(float32(1)), usm.Scalar(float32(5))))
	assert.Equal(t, float32(19), y[0], "c = 5 reached the kernel")
}

// The pointers of a launch are checked together (one crossing into C),
// but the error names the first argument that is not USM of the
// kernel's context, in order, NULL included.
func TestKernelPointerChecks(t *testing.T) {
	b := newBackend(t)
	q, err := b.Queue(0)
	require.NoError(t, err)
	_, k := testutil.BuildKernel(t, q, usm.ProgramSource{SPIRV: testutil.SPIRV(t)}, "saxpy")
	xp, _ := floats(t, b, 0, 4)
	yp, y := floats(t, b, 0, 4)
	goMem := make([]float32, 4)
	gp := uintptr(unsafe.Pointer(&goMem[0]))
	for _, c := range []struct {
		x, y uintptr
		bad  int
	}{{gp, yp, 1}, {xp, gp, 3}, {0, yp, 1}, {xp, 0, 3}, {gp, 0, 1}, {0, gp, 1}} {
		_, err := k.Launch(q, usm.NDRange(4), nil, usm.Scalar(float32(1)), usm.Pointer(c.x), usm.Scalar(int64(1)), usm.Pointer(c.y), usm.Scalar(int64(1)))
		assert.ErrorIs(t, err, usm.ErrValue)
		assert.ErrorContains(t, err, "argument "+strconv.Itoa(c.bad)+" of kernel \"saxpy\"")
		assert.ErrorContains(t, err, "is not USM of the kernel's context")
	}
	assert.Equal(t, []float32{0, 0, 0, 0}, y, "nothing ran")
	require.NoError(t, testutil.LaunchWait(k, q, usm.NDRange(4), usm.Scalar(float32(1)), usm.Pointer(xp), usm.Scalar(int64(1)), usm.Pointer(yp), usm.Scalar(int64(1))))
}

// A launch the driver refuses leaves its event free for the next one:
// nothing was appended that would signal it, so the backend closes.
func TestKernelFailedLaunchKeepsNoEvent(t *testing.T) {
	b := newBackend(t)
	ctx, err := b.Context(0)
	require.NoError(t, err)
	async, err := newImmediateList(ctx, b.devs[0].dev, zeapi.QueueModeAsynchronous)
	require.NoError(t, err)
	defer func() { require.NoError(t, async.Close()) }()
	_, k := testutil.BuildKernel(t, async, usm.ProgramSource{SPIRV: testutil.SPIRV(t)}, "empty")
	failNext(t, "zeCommandListAppendLaunchKernel", ErrorDeviceLost)
	_, err = k.Launch(async, usm.NDRange(1), nil)
	wantCallError(t, err, "zeCommandListAppendLaunchKernel", ErrorDeviceLost)
	assert.Zero(t, ctx.progs.evs.held(), "the event is free again")
	require.NoError(t, testutil.LaunchWait(k, async, usm.NDRange(1)))
	assert.Zero(t, ctx.progs.evs.held())
}
