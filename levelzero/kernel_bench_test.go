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
// (testdata/launchpeer.c of internal/testutil, "c-append"), on the
// Backend's immediate list of device 0. That list is synchronous: a
// launch is done when its append returns, so neither side makes an event
// (zeCommandListAppendLaunchKernel alone in C). "async/..." is the same
// on an asynchronous immediate list, where each launch signals an event
// (in C: the append signalling one event, zeEventHostSynchronize,
// zeEventHostReset). The fake driver runs the kernel on the host, so
// this is the cost of the calls through the loader, as docs/native.md
// says of the other fake figures.
func BenchmarkLaunchEmpty(b *testing.B) {
	bk := newBackend(b)
	q, err := bk.Queue(0)
	require.NoError(b, err)
	p, k := testutil.BuildKernel(b, q, usm.ProgramSource{SPIRV: testutil.SPIRV(b)}, "empty")
	ctx, err := bk.Context(0)
	require.NoError(b, err)
	async, err := newImmediateList(ctx, bk.devs[0].dev, zeapi.QueueModeAsynchronous)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, async.Close()) })
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
	b.Cleanup(func() { require.NoError(b, api.KernelDestroy(raw)) })
	require.NoError(b, api.KernelSetGroupSize(raw, 1, 1, 1))
	ev := hostEvent(b, ctx)
	cAppend := func(list *Queue, ev uintptr) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			if rc := Status(uint32(launch.Call(uintptr(appendFn), uintptr(sync), uintptr(reset), list.Native(), uintptr(raw), ev, uintptr(b.N)))); rc != zeapi.Success {
				b.Fatal(rc)
			}
		}
	}
	testutil.BenchLaunch(b, k, q)
	b.Run("c-append", cAppend(q.(*Queue), 0))
	b.Run("async", func(b *testing.B) {
		testutil.BenchLaunch(b, k, async)
		b.Run("c-append", cAppend(async, ev.h.Raw()))
	})
}

// A launch allocates nothing in Go with cgo once the kernel, the event
// table and the context's launch events have grown to the launches in
// flight; without cgo, only purego's argument slices, one per native
// call: the pointer's check and the append (arguments unchanged since the
// last launch are not set again; the Backend's list is synchronous, so
// there is no event to reset or wait for), and on an asynchronous list
// the event's reset and wait.
func TestKernelLaunchAllocatesNothing(t *testing.T) {
	b := newBackend(t)
	q, err := b.Queue(0)
	require.NoError(t, err)
	_, k := testutil.BuildKernel(t, q, usm.ProgramSource{SPIRV: testutil.SPIRV(t)}, "fill")
	yp, _ := floats(t, b, 0, 64)
	n := testutil.LaunchAllocs(t, k, q, usm.NDRange(64), usm.Pointer(yp), usm.Scalar(float32(2)))
	ctx, err := b.Context(0)
	require.NoError(t, err)
	async, err := newImmediateList(ctx, b.devs[0].dev, zeapi.QueueModeAsynchronous)
	require.NoError(t, err)
	defer func() { require.NoError(t, async.Close()) }()
	na := testutil.LaunchAllocs(t, k, async, usm.NDRange(64), usm.Pointer(yp), usm.Scalar(float32(2)))
	if cgoEnabled {
		require.Zero(t, n)
		require.Zero(t, na, "on an asynchronous list, with an event")
	} else {
		require.LessOrEqual(t, n, 2.0)
		require.LessOrEqual(t, na, 4.0, "and the event's reset and wait")
	}
}
