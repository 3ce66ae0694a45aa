package opencl_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/usm"
)

func TestDevices(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		info := r.dev.Info()
		t.Logf("%s: %q by %q, %s, driver %s, platform %q %s, SVM caps %#x, USM %q %+v",
			r.name, info.Name, info.Vendor, info.Version, info.DriverVersion,
			r.dev.Platform().Name(), r.dev.Platform().Info().Version, info.SVM, info.USMExtension, info.USM)
		assert.NotEmpty(t, info.Name)
		assert.NotEmpty(t, info.Vendor)
		assert.True(t, strings.HasPrefix(info.Version, "OpenCL "), info.Version)
		assert.NotEmpty(t, info.Extensions)
		assert.Equal(t, opencl.TypeCPU, info.Type&opencl.TypeCPU)
		assert.Equal(t, r.mem, r.b.Memory(r.local), "memory model of %s", r.name)
		pi := r.dev.Platform().Info()
		assert.Contains(t, pi.Extensions, "cl_khr_icd")
		switch r.mem {
		case opencl.USM:
			assert.True(t, r.dev.SupportsUSM())
			assert.Contains(t, []string{"cl_intel_unified_shared_memory", "cl_intel_unified_shared_memory_preview"}, info.USMExtension)
			assert.NotZero(t, info.USM.Host)
			assert.NotZero(t, info.USM.Device)
			assert.NotZero(t, info.USM.SingleDeviceShared)
		case opencl.FineGrainSVM:
			assert.False(t, r.dev.SupportsUSM(), "PoCL 3.1 has no USM")
			assert.Empty(t, info.USMExtension)
			assert.True(t, r.dev.SupportsFineGrainSVM())
		}
	})
}

// With no ICD the loader reports CL_PLATFORM_NOT_FOUND_KHR, which must be
// "runtime not available". The loader reads OCL_ICD_VENDORS once per
// process, so this runs the test binary again with an empty vendor
// directory.
func TestNoPlatform(t *testing.T) {
	_, err := opencl.Platforms()
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
		c *opencl.Context
		q *opencl.Queue
		e *opencl.Event
		d opencl.Device
		p opencl.Platform
	)
	assert.NoError(t, c.Close(), "closing nothing does nothing")
	assert.ErrorIs(t, q.Finish(), usm.ErrValue)
	assert.NoError(t, q.Close())
	assert.ErrorIs(t, e.Wait(), usm.ErrValue)
	assert.False(t, d.Valid())
	assert.False(t, d.SupportsUSM())
	assert.Zero(t, d.Native())
	_, err := p.Devices()
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = opencl.NewContext()
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = opencl.NewContext(d)
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = opencl.UnsafeAdoptQueue(0)
	assert.ErrorIs(t, err, usm.ErrValue)
}

func TestContextQueueEventLifecycle(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		ctx, err := opencl.NewContext(r.dev)
		require.NoError(t, err)
		n, err := ctx.ReferenceCount()
		require.NoError(t, err)
		assert.EqualValues(t, 1, n)
		ctx2, err := ctx.Retain()
		require.NoError(t, err)
		n, _ = ctx.ReferenceCount()
		assert.EqualValues(t, 2, n)
		assert.Equal(t, ctx.Native(), ctx2.Native())
		require.NoError(t, ctx2.Close())
		assert.NoError(t, ctx2.Close(), "a second release does nothing")
		_, err = ctx2.ReferenceCount()
		assert.ErrorIs(t, err, usm.ErrValue)
		n, _ = ctx.ReferenceCount()
		assert.EqualValues(t, 1, n)

		q, err := ctx.NewQueue(r.dev)
		require.NoError(t, err)
		require.NoError(t, q.Flush())
		require.NoError(t, q.Finish())
		require.NoError(t, q.Wait())
		assert.Equal(t, r.dev, q.Device())
		ev, err := q.EnqueueMarker()
		require.NoError(t, err)
		require.NoError(t, ev.Wait())
		st, err := ev.Status()
		require.NoError(t, err)
		assert.Equal(t, opencl.Complete, st)
		require.NoError(t, ev.Close())
		assert.NoError(t, ev.Close())
		assert.ErrorIs(t, ev.Wait(), usm.ErrValue)

		_, err = ctx.NewQueue(opencl.Device{})
		assert.ErrorIs(t, err, usm.ErrValue)
		require.NoError(t, q.Close())
		assert.NoError(t, q.Close())
		assert.ErrorIs(t, q.Finish(), usm.ErrValue)
		assert.Zero(t, q.Native())
		require.NoError(t, ctx.Close())
		assert.NoError(t, ctx.Close())
		_, err = ctx.NewQueue(r.dev)
		assert.ErrorIs(t, err, usm.ErrValue)
	})
}

// A native cl_command_queue from SYCL: get_native(queue) returns it
// retained, so the receiver adopts that reference; a queue the caller keeps
// owning is borrowed with a reference of our own. Either way clFinish runs
// on the native handle and the reference counts come out even.
func TestNativeQueueHandover(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		owner, err := r.ctx.NewQueue(r.dev)
		require.NoError(t, err)
		defer owner.Close()
		h := owner.Native()
		refs := func() uint32 { n, err := owner.ReferenceCount(); require.NoError(t, err); return n }
		require.EqualValues(t, 1, refs())

		borrowed, err := opencl.UnsafeBorrowQueue(h)
		require.NoError(t, err)
		assert.EqualValues(t, 2, refs())
		assert.Equal(t, r.dev, borrowed.Device(), "the device is found from the native queue")
		require.NoError(t, borrowed.Wait())
		require.NoError(t, borrowed.Close())
		assert.EqualValues(t, 1, refs())

		require.NoError(t, opencl.RawRetainQueue(h)) // what get_native does
		assert.EqualValues(t, 2, refs())
		adopted, err := opencl.UnsafeAdoptQueue(h)
		require.NoError(t, err)
		assert.EqualValues(t, 2, refs(), "adopting takes over the reference")
		require.NoError(t, adopted.Finish())
		require.NoError(t, adopted.Close())
		assert.NoError(t, adopted.Close(), "a second release does nothing")
		assert.EqualValues(t, 1, refs())
		require.NoError(t, owner.Finish(), "the owner's queue still works")
	})
}
