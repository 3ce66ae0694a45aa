package levelzero

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// BenchmarkLaunchEmpty: the launch of an empty kernel (one work-item),
// waited for and its event released, from Go through usm.Kernel ("go")
// beside the same launch written in C against the loader
// (zeCommandListAppendLaunchKernel, zeEventHostSynchronize,
// zeEventHostReset: "c-append", testdata/launchpeer.c of
// internal/testutil), on the Backend's immediate list of device 0. The
// fake driver runs the kernel on the host, so this is the cost of the
// calls through the loader, as docs/native.md says of the other fake
// figures.
func BenchmarkLaunchEmpty(b *testing.B) {
	bk := newBackend(b)
	q, err := bk.Queue(0)
	require.NoError(b, err)
	p, k := testutil.BuildKernel(b, q, usm.ProgramSource{SPIRV: testutil.SPIRV(b)}, "empty")
	testutil.BenchLaunch(b, k, q)
	b.Run("c-append", func(b *testing.B) {
		peer, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, testutil.BuildLaunchPeer(b))
		require.NoError(b, err)
		ze, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, zeapi.Loader)
		require.NoError(b, err)
		var launch, appendFn, sync, reset ffi.Fn
		require.NoError(b, peer.Resolve(ffi.Required(&launch, "peer_ze_launch")))
		require.NoError(b, ze.Resolve(ffi.Required(&appendFn, "zeCommandListAppendLaunchKernel"),
			ffi.Required(&sync, "zeEventHostSynchronize"), ffi.Required(&reset, "zeEventHostReset")))
		raw, _, err := api.KernelCreate(zeapi.Module(p.(*program).h.Raw()), []byte("empty\x00"))
		require.NoError(b, err)
		defer func() { require.NoError(b, api.KernelDestroy(raw)) }()
		require.NoError(b, api.KernelSetGroupSize(raw, 1, 1, 1))
		ctx, err := bk.Context(0)
		require.NoError(b, err)
		ev := hostEvent(b, ctx)
		b.ReportAllocs()
		b.ResetTimer()
		if rc := Status(uint32(launch.Call(uintptr(appendFn), uintptr(sync), uintptr(reset), q.(*Queue).Native(), uintptr(raw), ev.h.Raw(), uintptr(b.N)))); rc != zeapi.Success {
			b.Fatal(rc)
		}
	})
}

// A launch allocates nothing in Go with cgo once the kernel, the event
// table and the context's launch events have grown to the launches in
// flight; without cgo, only purego's argument slices.
func TestKernelLaunchAllocatesNothing(t *testing.T) {
	b := newBackend(t)
	q, err := b.Queue(0)
	require.NoError(t, err)
	_, k := testutil.BuildKernel(t, q, usm.ProgramSource{SPIRV: testutil.SPIRV(t)}, "fill")
	yp, _ := floats(t, b, 0, 64)
	n := testutil.LaunchAllocs(t, k, q, usm.NDRange(64), usm.Pointer(yp), usm.Scalar(float32(2)))
	if cgoEnabled {
		require.Zero(t, n)
	} else {
		// purego's SyscallN allocates its argument slice: one per native
		// call (the pointer's query, two arguments set, the append, the
		// wait, the reset).
		require.LessOrEqual(t, n, 6.0)
	}
}
