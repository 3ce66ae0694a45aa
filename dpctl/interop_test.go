package dpctl_test

import (
	"fmt"
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// openclDevices opens a Backend of the opencl package (after dpctl, so
// both use the ICD loader SYCL loaded) and returns it with the index of
// its first device with real USM (Intel's CPU runtime) and of its first
// with SVM only (PoCL): a device allocation of the latter comes back
// shared.
func openclDevices(t *testing.T) (ob *opencl.Backend, usmDev, svmDev int) {
	t.Helper()
	ob, err := opencl.New()
	testutil.Runtime(t, testutil.IntelOpenCL, err)
	usmDev, svmDev = -1, -1
	for i := range ob.Devices() {
		a, err := ob.Alloc(i, usm.KindDevice, 64)
		if err != nil {
			continue
		}
		switch {
		case a.Kind() == usm.KindDevice && usmDev < 0:
			usmDev = i
		case a.Kind() == usm.KindShared && svmDev < 0:
			svmDev = i
		}
		require.NoError(t, a.Free())
	}
	if usmDev < 0 {
		testutil.Runtime(t, testutil.IntelOpenCL, errkind.New(errkind.NotAvailable, "test", "no OpenCL device with cl_intel_unified_shared_memory"))
	}
	if svmDev < 0 {
		testutil.Runtime(t, testutil.PoCL, errkind.New(errkind.NotAvailable, "test", "no OpenCL device with SVM only"))
	}
	return ob, usmDev, svmDev
}

// clQueueRefs reads a cl_command_queue's reference count, as clContextRefs
// a context's.
func clQueueRefs(t *testing.T, q uintptr) func() uint32 {
	t.Helper()
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, "libOpenCL.so.1")
	require.NoError(t, err)
	var getInfo ffi.Fn
	require.NoError(t, lib.Resolve(ffi.Required(&getInfo, "clGetCommandQueueInfo")))
	const clQueueReferenceCount = 0x1092
	return func() uint32 {
		var n uint32
		rc := int32(getInfo.Call(q, clQueueReferenceCount, unsafe.Sizeof(n), uintptr(unsafe.Pointer(&n)), 0))
		require.Zero(t, rc, "clGetCommandQueueInfo")
		return n
	}
}

// syclNativeQueue returns the cl_command_queue under a SYCL queue ref
// (sycl::queue::getNative, which retains it) and gives the reference back.
func syclNativeQueue(t *testing.T, b *dpctl.Backend, ref uintptr) uintptr {
	t.Helper()
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, b.API().Path())
	require.NoError(t, err)
	getNative, err := lib.Lookup("_ZNK4sycl3_V15queue9getNativeERi")
	require.NoError(t, err)
	var desc int32
	h := getNative.Call(ref, uintptr(unsafe.Pointer(&desc)))
	require.NotZero(t, h)
	q, err := opencl.UnsafeAdoptQueue(h)
	require.NoError(t, err)
	require.NoError(t, q.Close())
	return h
}

// oclCPU is the position of SYCL's OpenCL CPU device with USM.
func oclCPU(t testing.TB, b *dpctl.Backend) int {
	t.Helper()
	for i, d := range b.Devices() {
		if d.Backend == syclobj.OpenCL && d.Type == syclobj.CPU && b.HasUSM(i) {
			return i
		}
	}
	t.Fatal("dpctl has no OpenCL CPU device with USM")
	return -1
}

// InteropQueue makes a SYCL context and queue over the native context and
// queue of the opencl backend, once: SYCL then classifies and measures
// the backend's USM, its queue is the native queue itself, and one
// reference to each native object is lent to SYCL for good, so the SYCL
// queue still works after the opencl Backend is closed.
func TestInteropQueue(t *testing.T) {
	py, b := loaded(t)
	live0 := opencl.Live()
	ob, dev, _ := openclDevices(t)
	live1 := opencl.Live() // what the Backend holds, on top of live0
	oq, err := ob.Queue(dev)
	require.NoError(t, err)
	nq := oq.(*opencl.Queue)
	c, err := ob.Context(dev)
	require.NoError(t, err)
	ctxRefs, qRefs := clContextRefs(t, c.Native()), clQueueRefs(t, nq.Native())
	c0, q0 := ctxRefs(), qRefs()
	lentC, lentQ := b.Lent()

	dq, err := b.InteropQueue(nq)
	require.NoError(t, err)
	again, err := b.InteropQueue(nq)
	require.NoError(t, err)
	assert.Same(t, dq, again, "made once per native queue")
	assert.Equal(t, c0+1, ctxRefs(), "one context reference lent to SYCL")
	assert.Equal(t, q0+1, qRefs(), "one queue reference lent to SYCL")
	lc, lq := b.Lent()
	assert.Equal(t, [2]int{lentC + 1, lentQ + 1}, [2]int{lc, lq})
	assert.Equal(t, nq.Native(), syclNativeQueue(t, b, dq.Ref()), "the SYCL queue is the native queue")

	a, err := ob.Alloc(dev, usm.KindShared, 64)
	require.NoError(t, err)
	info, q, ok, err := b.BindRef(syclobj.UnsafeQueueRef(dq.Ref()), a.Pointer()+8)
	require.True(t, ok)
	require.NoError(t, err, "SYCL knows the pointer in the context made from the native one")
	assert.Equal(t, usm.PointerInfo{Kind: usm.KindShared, Device: oclCPU(t, b), Base: a.Pointer(), Size: 64}, info)
	require.NoError(t, q.Wait())
	_, _, _, err = b.BindRef(syclobj.UnsafeQueueRef(uintptr(evalInt(t, py, "q.addressof_ref()"))), a.Pointer())
	require.ErrorIs(t, err, usm.ErrValue, "the default context does not know it")

	// SYCL's copies go into the native queue, which the opencl side waits on.
	src := []byte("copied by SYCL into native USM..")
	ev := b.API().QueueMemcpy(dq.Ref(), a.Pointer(), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)))
	require.NotZero(t, ev)
	require.NoError(t, nq.Wait())
	assert.Equal(t, src, a.Bytes()[:len(src)])
	b.API().EventDelete(ev)
	require.NoError(t, a.Free())

	live2 := opencl.Live() // with what InteropQueue made: the lent context, dpctl's native sides
	require.NoError(t, ob.Close())
	live := opencl.Live()
	assert.Equal(t, live2["contexts"]-live1["contexts"], live["contexts"]-live0["contexts"], "Close gave back the Backend's contexts; the lent one stays alive, and counted")
	assert.Equal(t, live0["queues"]+1, live["queues"], "the lent queue too")
	assert.EqualValues(t, 1, ctxRefs(), "after Close, the lent context reference is the only one")
	assert.EqualValues(t, 1, qRefs(), "and so is the lent queue reference")
	// The SYCL queue still works: SYCL allocates in the native context.
	p := b.API().MallocShared(64, dq.Ref())
	require.NotZero(t, p, "the SYCL queue outlives the opencl Backend")
	ev = b.API().QueueMemcpy(dq.Ref(), p, uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)))
	require.NotZero(t, ev)
	b.API().EventWait(ev)
	b.API().EventDelete(ev)
	assert.Equal(t, src, cmem.Bytes(p, uintptr(len(src))), "USM the host reads")
	b.API().FreeWithQueue(p, dq.Ref())
}

// A device SYCL has no USM for (PoCL, whose opencl backend memory is SVM)
// and a closed queue are refused before anything is made or lent.
func TestInteropQueueRefused(t *testing.T) {
	_, b := loaded(t)
	ob, _, dev := openclDevices(t)
	defer ob.Close()
	oq, err := ob.Queue(dev)
	require.NoError(t, err)
	nq := oq.(*opencl.Queue)
	c, err := ob.Context(dev)
	require.NoError(t, err)
	ctxRefs, qRefs := clContextRefs(t, c.Native()), clQueueRefs(t, nq.Native())
	c0, q0 := ctxRefs(), qRefs()
	lentC, lentQ := b.Lent()

	_, err = b.InteropQueue(nq)
	require.ErrorIs(t, err, usm.ErrNotSupported)
	assert.Contains(t, err.Error(), "not among SYCL's OpenCL devices with USM")
	assert.Equal(t, [2]uint32{c0, q0}, [2]uint32{ctxRefs(), qRefs()}, "nothing lent")
	lc, lq := b.Lent()
	assert.Equal(t, [2]int{lentC, lentQ}, [2]int{lc, lq})

	clone, err := nq.Clone()
	require.NoError(t, err)
	require.NoError(t, clone.Close())
	_, err = b.InteropQueue(clone)
	assert.ErrorIs(t, err, usm.ErrValue, "a closed queue")
}

// interopChildEnv names the child-process test to run.
const interopChildEnv = "USMBRIDGE_DPCTL_INTEROP_CHILD"

// TestInteropGuard: make_context and make_queue are called only where
// they cannot throw. In a child process (a C++ exception would abort it)
// both are replaced by libc's abort(): a device SYCL has no USM for, and a
// library without the entry points, must be refused without reaching
// them. The control run, with Intel's device, must die by abort, so the
// stand-ins are really on the path.
func TestInteropGuard(t *testing.T) {
	if mode := os.Getenv(interopChildEnv); mode != "" {
		interopGuardChild(t, mode)
		return
	}
	loaded(t)
	runGuardChildren(t, "TestInteropGuard", interopChildEnv, "make_context",
		[]guardCase{{"svm-device", true}, {"no-symbols", true}, {"control", false}})
}

func interopGuardChild(t *testing.T, mode string) {
	_, b := loaded(t)
	ob, usmDev, svmDev := openclDevices(t)
	libc, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, "libc.so.6")
	require.NoError(t, err)
	abort, err := libc.Lookup("abort")
	require.NoError(t, err)
	dev := usmDev
	switch mode {
	case "svm-device":
		b.SetInteropRoute(abort, abort)
		dev = svmDev
	case "no-symbols":
		b.SetInteropRoute(0, 0)
	default:
		b.SetInteropRoute(abort, abort)
	}
	oq, err := ob.Queue(dev)
	require.NoError(t, err)
	_, err = b.InteropQueue(oq.(*opencl.Queue))
	require.ErrorIs(t, err, usm.ErrNotSupported)
	fmt.Println("child " + mode + " done")
}
