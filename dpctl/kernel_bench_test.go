package dpctl_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// BenchmarkLaunchEmpty: the launch of an empty kernel over one work-item,
// waited for and its event deleted, from Go through usm.Kernel on the
// OpenCL CPU device's queue ("go"), beside the same launch written in C
// against dpctl's library (DPCTLQueue_SubmitRange, DPCTLEvent_Wait,
// DPCTLEvent_Delete: "c-submit", testdata/launchpeer.c of
// internal/testutil) on the same queue and kernel bundle.
func BenchmarkLaunchEmpty(b *testing.B) {
	_, bk := loaded(b)
	q, err := bk.Queue(oclCPU(b, bk))
	require.NoError(b, err)
	p, k := testutil.BuildKernel(b, q, kernelSrc, "empty")
	testutil.BenchLaunch(b, k, q)
	b.Run("c-submit", func(b *testing.B) {
		peer, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, testutil.BuildLaunchPeer(b))
		require.NoError(b, err)
		lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, bk.API().Path())
		require.NoError(b, err)
		var launch, submit, wait, del, getKernel, delKernel ffi.Fn
		require.NoError(b, peer.Resolve(ffi.Required(&launch, "peer_dpctl_launch")))
		require.NoError(b, lib.Resolve(ffi.Required(&submit, "DPCTLQueue_SubmitRange"), ffi.Required(&wait, "DPCTLEvent_Wait"),
			ffi.Required(&del, "DPCTLEvent_Delete"), ffi.Required(&getKernel, "DPCTLKernelBundle_GetKernel"),
			ffi.Required(&delKernel, "DPCTLKernel_Delete")))
		name := []byte("empty\x00")
		kr := getKernel.Call(dpctl.ProgramBundle(p), uintptr(unsafe.Pointer(&name[0])))
		require.NotZero(b, kr)
		defer delKernel.Call(kr)
		b.ReportAllocs()
		b.ResetTimer()
		if rc := int32(launch.Call(uintptr(submit), uintptr(wait), uintptr(del), kr, q.(*dpctl.Queue).Ref(), uintptr(b.N))); rc != 0 {
			b.Fatal("DPCTLQueue_SubmitRange failed")
		}
	})
}

// BenchmarkQueueWait: a host wait on an idle out-of-order queue of the
// OpenCL CPU device (as dpnp's queues are), through Queue.Wait ("go": a
// barrier and its event, which every wait of usmbridge's on a dpctl
// queue is, among them the one before an Array hands out its
// __sycl_usm_array_interface__), beside DPCTLQueue_Wait called from C
// ("c-queue-wait", testdata/launchpeer.c of internal/testutil), which
// dpnp's property calls. The difference is what the SUAI an Array
// produces costs over dpnp's own.
func BenchmarkQueueWait(b *testing.B) {
	_, bk := loaded(b)
	r := bk.API().QueueCreateForDevice(bk.DeviceRef(oclCPU(b, bk)), 0)
	require.NotZero(b, r)
	q := bk.OwnQueue(r)
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := q.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("c-queue-wait", func(b *testing.B) {
		peer, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, testutil.BuildLaunchPeer(b))
		require.NoError(b, err)
		lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, bk.API().Path())
		require.NoError(b, err)
		var loop, wait ffi.Fn
		require.NoError(b, peer.Resolve(ffi.Required(&loop, "peer_dpctl_queue_wait")))
		require.NoError(b, lib.Resolve(ffi.Required(&wait, "DPCTLQueue_Wait")))
		b.ResetTimer()
		loop.Call(uintptr(wait), q.Ref(), uintptr(b.N))
	})
}
