package opencl

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

func TestDevices(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		info, pi := r.dev.info, r.dev.platform.info
		t.Logf("%s: %q by %q, %s, driver %s, platform %q %s, SVM caps %#x, USM %q %+v",
			r.name, info.name, info.vendor, info.version, info.driverVersion,
			pi.name, pi.version, info.svm, info.usmExtension, info.usm)
		assert.NotEmpty(t, info.name)
		assert.NotEmpty(t, info.vendor)
		assert.True(t, strings.HasPrefix(info.version, "OpenCL "), info.version)
		assert.NotEmpty(t, info.extensions)
		assert.NotZero(t, info.typ&clapi.DeviceTypeCPU)
		assert.Equal(t, r.mem, r.b.devs[r.local].mem, "memory model of %s", r.name)
		assert.Equal(t, r.mem, r.dev.memory())
		assert.Contains(t, pi.extensions, "cl_khr_icd")
		assert.Equal(t, r.local, r.dev.index, "a device's index is its index in the backend")
		assert.Same(t, r.dev, findDevice(r.dev.id))
		assert.Equal(t, syclobj.Device{Backend: syclobj.OpenCL, Type: syclobj.CPU, Name: info.name}, r.b.Devices()[r.local])
		switch r.mem {
		case usmMemory:
			assert.Contains(t, []string{"cl_intel_unified_shared_memory", "cl_intel_unified_shared_memory_preview"}, info.usmExtension)
			assert.NotZero(t, info.usm.host)
			assert.NotZero(t, info.usm.device)
			assert.NotZero(t, info.usm.singleDeviceShared)
		case svmMemory:
			assert.Empty(t, info.usmExtension, "PoCL 3.1 has no USM")
			assert.True(t, r.dev.hasFineGrainSVM())
		}
	})
}

// With no ICD the loader reports CL_PLATFORM_NOT_FOUND_KHR, which must be
// "runtime not available". The loader reads OCL_ICD_VENDORS once per
// process, so this runs the test binary again with an empty vendor
// directory.
func TestNoPlatform(t *testing.T) {
	_, err := platforms()
	testutil.Runtime(t, testutil.PoCL, err)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=platforms", "OCL_ICD_VENDORS="+dir, "OCL_ICD_FILENAMES=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "platforms=0 notavailable=true")
	assert.Contains(t, string(out), "CL_PLATFORM_NOT_FOUND_KHR")
}

func TestZeroHandles(t *testing.T) {
	var (
		c *Context
		q *Queue
	)
	assert.NoError(t, c.Close(), "closing nothing does nothing")
	assert.Zero(t, c.Native())
	assert.Equal(t, usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}, c.QueryPointer(0x1000))
	assert.ErrorIs(t, q.Wait(), usm.ErrValue)
	assert.NoError(t, q.Close())
	assert.Zero(t, q.Native())
	_, err := newContext()
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = UnsafeAdoptQueue(0)
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = UnsafeBorrowQueue(0)
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = UnsafeBorrowContext(0)
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = UnsafeAdoptContext(0)
	assert.ErrorIs(t, err, usm.ErrValue)
}

// Contexts and queues hold one reference each, dropped once by Close
// however often it is called; a closed object refuses every use.
func TestContextQueueLifecycle(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		ctx, err := newContext(r.dev)
		require.NoError(t, err)
		n, err := ctx.referenceCount()
		require.NoError(t, err)
		assert.EqualValues(t, 1, n)
		ctx2, err := UnsafeBorrowContext(ctx.Native())
		require.NoError(t, err)
		n, _ = ctx.referenceCount()
		assert.EqualValues(t, 2, n)
		assert.Equal(t, ctx.Native(), ctx2.Native())
		assert.Equal(t, []*device{r.dev}, ctx2.s.devices, "a borrowed context finds its devices")
		require.NoError(t, ctx2.Close())
		assert.NoError(t, ctx2.Close(), "a second close does nothing")
		_, err = ctx2.referenceCount()
		assert.ErrorIs(t, err, usm.ErrValue)
		assert.Zero(t, ctx2.Native())
		n, _ = ctx.referenceCount()
		assert.EqualValues(t, 1, n, "the reference count dropped once")

		// Adopting takes over a reference the sender took, as SYCL's
		// context::getNative() does, and Close gives it back once.
		l, err := lib()
		require.NoError(t, err)
		require.NoError(t, l.RetainContext(clapi.Context(ctx.Native())))
		ctx3, err := UnsafeAdoptContext(ctx.Native())
		require.NoError(t, err)
		n, _ = ctx.referenceCount()
		assert.EqualValues(t, 2, n, "adopting takes no reference of its own")
		assert.Equal(t, []*device{r.dev}, ctx3.s.devices, "an adopted context finds its devices")
		require.NoError(t, ctx3.Close())
		assert.NoError(t, ctx3.Close())
		n, _ = ctx.referenceCount()
		assert.EqualValues(t, 1, n, "Close gave the adopted reference back once")

		q, err := ctx.newQueue(r.dev)
		require.NoError(t, err)
		require.NoError(t, q.Wait())
		assert.Same(t, r.dev, q.device)
		_, err = ctx.newQueue(nil)
		assert.ErrorIs(t, err, usm.ErrValue)
		require.NoError(t, q.Close())
		assert.NoError(t, q.Close())
		assert.ErrorIs(t, q.Wait(), usm.ErrValue)
		assert.Zero(t, q.Native())
		require.NoError(t, ctx.Close())
		assert.NoError(t, ctx.Close())
		_, err = ctx.newQueue(r.dev)
		assert.ErrorIs(t, err, usm.ErrValue)

		// A Backend's context and queues are closed by the Backend only.
		assert.ErrorIs(t, r.ctx.Close(), usm.ErrValue)
		assert.ErrorIs(t, r.q.Close(), usm.ErrValue)
		assert.NoError(t, r.q.Wait(), "still open")
		assert.NotZero(t, r.ctx.Native())
	})
}

// A cl_context from SYCL's get_native: a borrowed Context classifies the
// USM of its platform exactly as the backend does, but knows only the SVM
// allocated through itself.
func TestBorrowedContextQueries(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		a, err := r.b.Alloc(r.local, usm.KindShared, 4096)
		require.NoError(t, err)
		defer a.Free()
		bc, err := UnsafeBorrowContext(r.ctx.Native())
		require.NoError(t, err)
		defer bc.Close()
		for _, p := range []uintptr{a.Pointer(), a.Pointer() + 4095, a.Pointer() + 4096, 0} {
			want := r.b.QueryPointer(p)
			if r.mem == svmMemory {
				want = usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
			}
			assert.Equal(t, want, bc.QueryPointer(p), "%#x", p)
		}
		if r.mem == usmMemory {
			assert.Equal(t, usm.PointerInfo{Kind: usm.KindShared, Device: r.local, Base: a.Pointer(), Size: 4096}, bc.QueryPointer(a.Pointer()+7))
		}
	})
}

// A native cl_command_queue from SYCL: get_native(queue) returns it
// retained, so the receiver adopts that reference; a queue the caller keeps
// owning is borrowed with a reference of our own. Either way clFinish runs
// on the native handle and the reference counts come out even.
func TestNativeQueueHandover(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		owner, err := r.ctx.newQueue(r.dev)
		require.NoError(t, err)
		defer owner.Close()
		h := owner.Native()
		refs := func() uint32 { n, err := owner.referenceCount(); require.NoError(t, err); return n }
		require.EqualValues(t, 1, refs())

		borrowed, err := UnsafeBorrowQueue(h)
		require.NoError(t, err)
		assert.EqualValues(t, 2, refs())
		assert.Same(t, r.dev, borrowed.device, "the device is found from the native queue")
		require.NoError(t, borrowed.Wait())
		require.NoError(t, borrowed.Close())
		assert.EqualValues(t, 1, refs())

		l, _ := lib()
		require.NoError(t, l.RetainCommandQueue(clapi.Queue(h))) // what get_native does
		assert.EqualValues(t, 2, refs())
		adopted, err := UnsafeAdoptQueue(h)
		require.NoError(t, err)
		assert.EqualValues(t, 2, refs(), "adopting takes over the reference")
		require.NoError(t, adopted.Wait())
		require.NoError(t, adopted.Close())
		assert.NoError(t, adopted.Close(), "a second release does nothing")
		assert.EqualValues(t, 1, refs())
		require.NoError(t, owner.Wait(), "the owner's queue still works")
	})
}

// What a SYCL runtime's make_context and make_queue are handed: a queue's
// context (Queue.Context) and the queue itself (Queue.Clone), each with a
// reference of its own that Close gives back once, and the context's
// devices (NativeDevices). A closed queue gives neither.
func TestHandlesForSYCL(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		q, err := r.ctx.newQueue(r.dev)
		require.NoError(t, err)
		ctxRefs := func() uint32 { n, err := r.ctx.referenceCount(); require.NoError(t, err); return n }
		qRefs := func() uint32 { n, err := q.referenceCount(); require.NoError(t, err); return n }
		c0, q0 := ctxRefs(), qRefs()

		c, err := q.Context()
		require.NoError(t, err)
		assert.Equal(t, r.ctx.Native(), c.Native(), "the queue's own context")
		assert.Equal(t, c0+1, ctxRefs(), "with a reference of its own")
		assert.Equal(t, []*device{r.dev}, c.s.devices, "its devices are found")
		devs, err := c.NativeDevices()
		require.NoError(t, err)
		assert.Equal(t, []uintptr{uintptr(r.dev.id)}, devs)
		require.NoError(t, c.Close())
		assert.NoError(t, c.Close())
		assert.Equal(t, c0, ctxRefs(), "Close gave it back once")
		_, err = c.NativeDevices()
		assert.ErrorIs(t, err, usm.ErrValue, "a closed context has no devices to give")

		cl, err := q.Clone()
		require.NoError(t, err)
		assert.Equal(t, q.Native(), cl.Native(), "the same native queue")
		assert.Equal(t, q0+1, qRefs(), "with a reference of its own")
		assert.Same(t, r.dev, cl.device)
		require.NoError(t, q.Close())
		require.NoError(t, cl.Wait(), "the clone outlives the queue it was made from")
		_, err = q.Context()
		assert.ErrorIs(t, err, usm.ErrValue, "a closed queue has no context to give")
		_, err = q.Clone()
		assert.ErrorIs(t, err, usm.ErrValue, "nor a clone")
		require.NoError(t, cl.Close())

		var nilCtx *Context
		_, err = nilCtx.NativeDevices()
		assert.ErrorIs(t, err, usm.ErrValue)
	})
}
