package dpctl_test

import (
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

var kernelSrc = usm.ProgramSource{OpenCLC: testutil.KernelSource()}

// elem0 is the address of an array's element 0.
func elem0(a *usm.Array) uintptr { return a.Data + uintptr(a.Offset)*uintptr(a.DType.Size()) }

// A kernel on a dpnp array's own (out-of-order) queue: it runs after
// dpnp's work on its arguments (the fill of y, through a barrier event it
// depends on), its results are dpnp's to read, the program is built once
// for the queue's context and device, and the SPIR-V of the same source
// builds too.
func TestKernelOnDpnpQueue(t *testing.T) {
	py, _ := loaded(t)
	run(t, py, "import dpnp\nkx = dpnp.arange(1 << 16, dtype='f4', device='opencl:cpu')\nky = dpnp.ones(1 << 16, dtype='f4', sycl_queue=kx.sycl_queue)")
	x, err := asArray(t, py, "kx")
	require.NoError(t, err)
	defer x.Owner.Release()
	y, err := asArray(t, py, "ky")
	require.NoError(t, err)
	defer y.Owner.Release()
	require.Equal(t, usm.KindDevice, y.Memory.Kind)
	dq, ok := y.Queue.(*dpctl.Queue)
	require.True(t, ok, "%T", y.Queue)

	p, err := usm.BuildProgram(dq, kernelSrc)
	require.NoError(t, err)
	p2, err := usm.BuildProgram(x.Queue, kernelSrc)
	require.NoError(t, err)
	assert.Same(t, p, p2, "one program per context, device and source")
	k, err := p.Kernel("saxpy")
	require.NoError(t, err)
	assert.Equal(t, 5, k.NumArgs())
	ev, err := k.Launch(dq, usm.NDRange(1<<16), nil, usm.Scalar(float32(2)), usm.Pointer(elem0(x)), usm.Scalar(int64(1)),
		usm.Pointer(elem0(y)), usm.Scalar(int64(1)))
	require.NoError(t, err)
	require.NoError(t, ev.Wait())
	require.NoError(t, ev.Close())
	assert.EqualValues(t, 1, evalInt(t, py, "int((dpnp.asnumpy(ky) == 1 + 2 * dpnp.asnumpy(kx)).all())"))

	// The same source from SPIR-V (scripts/spirv.sh), a launch after
	// another's event.
	sp, err := usm.BuildProgram(dq, usm.ProgramSource{SPIRV: testutil.SPIRV(t)})
	require.NoError(t, err)
	assert.NotSame(t, p, sp)
	fill, err := sp.Kernel("fill")
	require.NoError(t, err)
	sa, err := p.Kernel("scale_add")
	require.NoError(t, err)
	e1, err := fill.Launch(dq, usm.NDRange(1<<16), nil, usm.Pointer(elem0(y)), usm.Scalar(float32(4)))
	require.NoError(t, err)
	e2, err := sa.Launch(dq, usm.NDRange(1<<16).WithLocal(256), []usm.Event{e1}, usm.Pointer(elem0(y)), usm.Scalar(float32(3)), usm.Scalar(float32(1)))
	require.NoError(t, err)
	require.NoError(t, e1.Close())
	require.NoError(t, e2.Wait())
	require.NoError(t, e2.Close())
	assert.EqualValues(t, 1, evalInt(t, py, "int((dpnp.asnumpy(ky) == 13).all())"))
	assert.Zero(t, dpctl.Live()["events"], "every launch event was closed")
}

// A malformed SPIR-V module is refused before dpctl's SYCL runtime sees
// it (DPCTLKernelBundle_CreateFromSpirv): Intel's OpenCL runtime under it
// looped forever, holding the GIL, on an instruction of word count 0, and
// ended the process on the other modules of testutil.MalformedSPIRV; hence
// a child, which now ends at once.
func TestKernelMalformedSPIRV(t *testing.T) {
	if !testutil.InChild("malformed-spirv") {
		_, b := loaded(t) // skips without dpctl
		if openCLCPU(b) < 0 {
			testutil.Runtime(t, testutil.Dpctl, errkind.New(errkind.NotAvailable, "test", "dpctl has no opencl:cpu device"))
		}
		testutil.MalformedSPIRV(t) // skips without the SPIR-V tools
		c := testutil.RunChild(t, "malformed-spirv", 120*time.Second)
		c.Expect(t, 0, "PASS")
		t.Logf("the child took %v", c.Elapsed)
		return
	}
	_, b := loaded(t)
	q, err := b.Queue(openCLCPU(b))
	require.NoError(t, err)
	for _, m := range testutil.MalformedSPIRV(t) {
		_, err := usm.BuildProgram(q, usm.ProgramSource{SPIRV: m.Module})
		require.ErrorIs(t, err, usm.ErrValue, m.Name)
		var be *usm.BuildError
		require.False(t, errors.As(err, &be), "%s: refused before DPCTLKernelBundle_CreateFromSpirv: %v", m.Name, err)
		assert.ErrorContains(t, err, "malformed SPIR-V module: word "+strconv.Itoa(m.Word)+": ", m.Name)
	}
	p, err := usm.BuildProgram(q, usm.ProgramSource{SPIRV: testutil.SPIRV(t)})
	require.NoError(t, err, "the next build of a good module")
	_, err = p.Kernel("saxpy")
	require.NoError(t, err)
}

// openCLCPU is the index of dpctl's first opencl:cpu device, -1 if none.
func openCLCPU(b *dpctl.Backend) int {
	for i, d := range b.Devices() {
		if d.Backend == syclobj.OpenCL && d.Type == syclobj.CPU {
			return i
		}
	}
	return -1
}

// On an in-order queue a kernel launched on an array's own queue is
// ordered with the dpnp work submitted after it, with no wait: the queue
// is held back (python/tests/pending.py), the kernel must not have run
// while it is (it is on that queue, not another), and a dpnp operation
// submitted right after the queue runs again sees its result.
func TestKernelOrderedWithDpnp(t *testing.T) {
	if testutil.InChild("dpnp-order") {
		orderedWithDpnp(t)
		return
	}
	loaded(t) // skips without dpctl
	testutil.RunChild(t, "dpnp-order", 120*time.Second).Expect(t, 0, "PASS")
}

func orderedWithDpnp(t *testing.T) {
	py, _ := loaded(t)
	tests, err := filepath.Abs("../python/tests")
	require.NoError(t, err)
	run(t, py, "import dpnp, importlib.util\n"+
		"spec = importlib.util.spec_from_file_location('pending', "+pyString(filepath.Join(tests, "pending.py"))+")\n"+
		"pending = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(pending)\nPending = pending.Pending\n"+
		"qi = dpctl.SyclQueue('opencl:cpu', property='in_order')\n"+
		"oy = dpnp.ones(4096, dtype='f4', usm_type='shared', sycl_queue=qi)\noy.sycl_queue.wait()")
	y, err := asArray(t, py, "oy")
	require.NoError(t, err)
	defer y.Owner.Release()
	p, err := usm.BuildProgram(y.Queue, kernelSrc)
	require.NoError(t, err)
	k, err := p.Kernel("fill")
	require.NoError(t, err)
	run(t, py, "pend = Pending(qi)")
	ev, err := k.Launch(y.Queue, usm.NDRange(4096), nil, usm.Pointer(elem0(y)), usm.Scalar(float32(5)))
	require.NoError(t, err)
	require.NoError(t, ev.Close(), "the results are ordered on the queue without the event")
	time.Sleep(50 * time.Millisecond)
	ys := unsafe.Slice((*float32)(cmem.Ptr(elem0(y))), 4096)
	assert.Equal(t, float32(1), ys[0], "the kernel waits behind the held queue: it is on the array's own queue")
	// dpnp's operations wait on the host for a held queue, so the
	// operation is submitted once the queue runs again, right behind the
	// kernel, with nothing waited for in between.
	run(t, py, "pend.complete()\noz = oy * 2")
	assert.EqualValues(t, 1, evalInt(t, py, "int((dpnp.asnumpy(oz) == 10).all())"), "the dpnp operation saw the kernel's result")
	assert.EqualValues(t, 1, evalInt(t, py, "int((dpnp.asnumpy(oy) == 5).all())"))
}

// pyString quotes s as a Python string literal.
func pyString(s string) string {
	b := []byte{'\''}
	for _, c := range []byte(s) {
		if c == '\'' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return string(append(b, '\''))
}

// A build failure's error carries the compiler's log (dpctl reports none:
// it comes from the native OpenCL queue under the SYCL queue); launches
// refuse what they cannot submit.
func TestKernelErrors(t *testing.T) {
	_, b := loaded(t)
	q, err := b.Queue(oclCPU(t, b))
	require.NoError(t, err)
	_, err = usm.BuildProgram(q, usm.ProgramSource{OpenCLC: "kernel void broken(global int *p) { p[0] = no_such_thing; }"})
	var be *usm.BuildError
	require.True(t, errors.As(err, &be), "%v", err)
	assert.Contains(t, be.Log, "no_such_thing")
	assert.ErrorIs(t, err, usm.ErrValue)

	p, err := usm.BuildProgram(q, kernelSrc)
	require.NoError(t, err)
	_, err = p.Kernel("nope")
	assert.ErrorIs(t, err, usm.ErrValue)
	k, err := p.Kernel("fill")
	require.NoError(t, err)
	goMem := make([]float32, 4)
	_, err = k.Launch(q, usm.NDRange(4), nil, usm.Pointer(uintptr(unsafe.Pointer(&goMem[0]))), usm.Scalar(float32(1)))
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.ErrorContains(t, err, "not USM")
	_, err = k.Launch(q, usm.NDRange(4), nil, usm.Scalar(float32(1)))
	assert.ErrorContains(t, err, "takes 2 arguments")
	// A scalar where a SPIR-V kernel takes a pointer: the module says what
	// each parameter is (libsyclinterface has no query), and SYCL would
	// take the scalar's bits for an address the kernel reads through.
	sp, err := usm.BuildProgram(q, usm.ProgramSource{SPIRV: testutil.SPIRV(t)})
	require.NoError(t, err)
	ks, err := sp.Kernel("fill")
	require.NoError(t, err)
	_, err = ks.Launch(q, usm.NDRange(4), nil, usm.Scalar(int64(0x1234)), usm.Scalar(float32(1)))
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.ErrorContains(t, err, "argument 0 of kernel \"fill\" is a pointer to __global or __constant memory; got a scalar")

	// USM of another context: the opencl backend's own cl_context, on the
	// same device, which SYCL's default context does not know.
	ob, dev, _ := openclDevices(t)
	a, err := ob.Alloc(dev, usm.KindShared, 64)
	require.NoError(t, err)
	_, err = k.Launch(q, usm.NDRange(4), nil, usm.Pointer(a.Pointer()), usm.Scalar(float32(1)))
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.ErrorContains(t, err, "not USM of the kernel's context")
	require.NoError(t, a.Free())
	require.NoError(t, ob.Close())
}

// A launch event kept as an array's pending work holds a copy of its own
// (DPCTLEvent_Copy), and WithEventRef lends the ref of a live event of
// the Backend's, and of no other.
func TestKernelEventCopies(t *testing.T) {
	py, b := loaded(t)
	run(t, py, "import dpnp\npy_ = dpnp.zeros(1 << 10, dtype='f4', usm_type='shared', device='opencl:cpu')")
	y, err := asArray(t, py, "py_")
	require.NoError(t, err)
	defer y.Owner.Release()
	_, k := testutil.BuildKernel(t, y.Queue, kernelSrc, "fill")
	ev, err := k.Launch(y.Queue, usm.NDRange(1<<10), nil, usm.Pointer(elem0(y)), usm.Scalar(float32(3)))
	require.NoError(t, err)
	var ref uintptr
	assert.True(t, b.WithEventRef(ev, func(r uintptr) { ref = r }))
	assert.NotZero(t, ref)
	require.NoError(t, y.WrittenBy(ev))
	require.NoError(t, ev.Close())
	assert.False(t, b.WithEventRef(ev, func(uintptr) { t.Error("called for a released event") }))
	assert.False(t, b.WithEventRef(usm.Event{}, func(uintptr) { t.Error("called for the zero Event") }))
	evs := y.Pending.Events()
	require.Len(t, evs, 1)
	assert.True(t, b.WithEventRef(evs[0], func(uintptr) {}), "the copy is an event of the Backend's")
	assert.EqualValues(t, 1, dpctl.Live()["events"], "the copy outlives the launcher's Close")
	require.NoError(t, y.Queue.Wait())
	done, err := evs[0].Done()
	require.NoError(t, err)
	assert.True(t, done, "DPCTLEvent_GetCommandExecutionStatus: complete once the queue is")
	require.NoError(t, y.Wait())
	assert.Zero(t, dpctl.Live()["events"], "the wait released the copy")
	done, err = evs[0].Done()
	require.NoError(t, err)
	assert.True(t, done, "a released event is done")
	assert.EqualValues(t, 1, evalInt(t, py, "int((dpnp.asnumpy(py_) == 3).all())"))
}

// On an out-of-order queue a launch follows a barrier of the queue's
// earlier work, and depends on it unless the barrier is complete when it
// is submitted (an idle queue: a dependency costs the kernel a pass
// through SYCL's scheduler). Idle, the kernel runs; with earlier work
// held back (a marker waiting for an OpenCL user event,
// python/tests/pending.py) it waits until that work completes. (Intel's
// OpenCL runtime holds commands after its native barrier back too, so
// this shows the order, which a launch without the barrier breaks, not
// which of the two keeps it.) In a child, since a launch that waited
// wrongly would hang.
func TestKernelWaitsForBusyQueue(t *testing.T) {
	if testutil.InChild("ooo-busy") {
		busyQueue(t)
		return
	}
	loaded(t) // skips without dpctl
	testutil.RunChild(t, "ooo-busy", 120*time.Second).Expect(t, 0, "PASS")
}

func busyQueue(t *testing.T) {
	py, _ := loaded(t)
	tests, err := filepath.Abs("../python/tests")
	require.NoError(t, err)
	run(t, py, "import dpnp, importlib.util\n"+
		"spec = importlib.util.spec_from_file_location('pending', "+pyString(filepath.Join(tests, "pending.py"))+")\n"+
		"pending = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(pending)\n"+
		"qo = dpctl.SyclQueue('opencl:cpu')\n"+
		"bo = dpnp.ones(4096, dtype='f4', usm_type='shared', sycl_queue=qo)\nqo.wait()")
	y, err := asArray(t, py, "bo")
	require.NoError(t, err)
	defer y.Owner.Release()
	_, k := testutil.BuildKernel(t, y.Queue, kernelSrc, "fill")
	ys := unsafe.Slice((*float32)(cmem.Ptr(elem0(y))), 4096)

	// Idle: the barrier is complete, and the kernel runs with no dependency.
	ev, err := k.Launch(y.Queue, usm.NDRange(4096), nil, usm.Pointer(elem0(y)), usm.Scalar(float32(2)))
	require.NoError(t, err)
	require.NoError(t, ev.Wait())
	require.NoError(t, ev.Close())
	assert.Equal(t, float32(2), ys[4095])

	run(t, py, "held = pending.Pending(qo, out_of_order=True)")
	ev, err = k.Launch(y.Queue, usm.NDRange(4096), nil, usm.Pointer(elem0(y)), usm.Scalar(float32(5)))
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond)
	done, err := ev.Done()
	require.NoError(t, err)
	assert.False(t, done, "the kernel waits behind the barrier of the held work")
	assert.Equal(t, float32(2), ys[0])
	run(t, py, "held.complete()")
	require.NoError(t, ev.Wait())
	require.NoError(t, ev.Close())
	assert.Equal(t, float32(5), ys[0])
}
