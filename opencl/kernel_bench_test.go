package opencl

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// BenchmarkLaunchEmpty: the launch of an empty kernel over one work-item,
// waited for and its event released, from Go through usm.Kernel ("go")
// beside the same launch of the same program's kernel written in C
// against the runtime (clEnqueueNDRangeKernel, clWaitForEvents,
// clReleaseEvent: "c-enqueue", testdata/launchpeer.c of internal/testutil),
// on each OpenCL runtime.
func BenchmarkLaunchEmpty(b *testing.B) {
	benchEach(b, func(b *testing.B, r rt) {
		p, k := testutil.BuildKernel(b, r.q, kernelSrc, "empty")
		testutil.BenchLaunch(b, k, r.q)
		b.Run("c-enqueue", func(b *testing.B) {
			peer, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, testutil.BuildLaunchPeer(b))
			require.NoError(b, err)
			cl, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, clapi.SONAMEs...)
			require.NoError(b, err)
			var launch, enqueue, wait, release ffi.Fn
			require.NoError(b, peer.Resolve(ffi.Required(&launch, "peer_cl_launch")))
			require.NoError(b, cl.Resolve(ffi.Required(&enqueue, "clEnqueueNDRangeKernel"),
				ffi.Required(&wait, "clWaitForEvents"), ffi.Required(&release, "clReleaseEvent")))
			l, _ := lib()
			raw, err := l.CreateKernel(clapi.Program(p.(*program).h.Raw()), []byte("empty\x00"))
			require.NoError(b, err)
			defer l.ReleaseKernel(raw)
			b.ReportAllocs()
			b.ResetTimer()
			if rc := int32(launch.Call(uintptr(enqueue), uintptr(wait), uintptr(release), r.q.Native(), uintptr(raw), uintptr(b.N))); rc != 0 {
				b.Fatal(clapi.Status(rc))
			}
		})
	})
}

// A launch allocates nothing in Go with cgo once the kernel and the event
// table have grown to the launches in flight; without cgo, only purego's
// argument slices.
func TestKernelLaunchAllocatesNothing(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		_, k := testutil.BuildKernel(t, r.q, kernelSrc, "fill")
		yp, _ := floats(t, r, 64)
		n := testutil.LaunchAllocs(t, k, r.q, usm.NDRange(64), usm.Pointer(yp), usm.Scalar(float32(2)))
		if cgoEnabled {
			require.Zero(t, n)
		} else {
			// purego's SyscallN allocates its argument slice: one per
			// native call (the pointer's query, two arguments, the
			// enqueue, the wait, the release).
			require.LessOrEqual(t, n, 6.0)
		}
		require.NoError(t, r.q.Wait())
	})
}
