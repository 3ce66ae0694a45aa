package levelzero

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

func wantDevices() int {
	if n := os.Getenv(devicesEnv); len(n) == 1 && n[0] >= '1' && n[0] <= '4' {
		return int(n[0] - '0')
	}
	return 1
}

// wantCallError checks that err is an *Error naming call and code, and
// that its text says both.
func wantCallError(t *testing.T, err error, call string, code Status) {
	t.Helper()
	var ze *Error
	if !errors.As(err, &ze) {
		t.Fatalf("error %v (%T) is not a *levelzero.Error", err, err)
	}
	if ze.Op != call || ze.Status != code {
		t.Fatalf("error names %s/%v, want %s/%v", ze.Op, ze.Status, call, code)
	}
	if !errors.Is(err, code) {
		t.Errorf("errors.Is(%v, %v) is false", err, code)
	}
	for _, s := range []string{call, code.Name(), fmt.Sprintf("0x%x", uint32(code))} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func TestStatusNames(t *testing.T) {
	for _, c := range []struct {
		r    Status
		text string
		kind *errkind.Kind
	}{
		{zeapi.Success, "ZE_RESULT_SUCCESS (0x0)", nil},
		{zeapi.NotReady, "ZE_RESULT_NOT_READY (0x1)", nil},
		{ErrorUninitialized, "ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)", errkind.NotAvailable},
		{ErrorUnsupportedSize, "ZE_RESULT_ERROR_UNSUPPORTED_SIZE (0x78000009)", errkind.Value},
		{ErrorOutOfDeviceMemory, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (0x70000003)", errkind.Memory},
		{zeapi.ErrorUnsupportedFeature, "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE (0x78000003)", errkind.NotSupported},
		{zeapi.ErrorUnknown, "ZE_RESULT_ERROR_UNKNOWN (0x7ffffffe)", nil},
		{Status(0x12345), "ze_result_t (0x12345)", nil},
	} {
		t.Run(c.text, func(t *testing.T) {
			if got := c.r.Error(); got != c.text {
				t.Errorf("Error() = %q, want %q", got, c.text)
			}
			for _, k := range errkind.All {
				if got, want := errors.Is(c.r, k), k == c.kind; got != want {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", c.r, k, got, want)
				}
			}
			wrapped := fmt.Errorf("outer: %w", &Error{Op: "zeX", Status: c.r})
			if c.kind != nil && !errors.Is(wrapped, c.kind) {
				t.Errorf("wrapped *Error does not match %v", c.kind)
			}
		})
	}
}

func TestDriversAndDevices(t *testing.T) {
	needDriver(t)
	if len(drivers) != 1 {
		t.Fatalf("drivers = %v; want the fake alone", drivers)
	}
	d := drivers[0]
	var uuid [16]byte
	for i := range uuid {
		uuid[i] = byte(0xf0 + i)
	}
	if p := d.props; p.UUID != uuid || p.APIVersion != 0x10004 || p.Version != 0x00010002 || !d.supportsIPC() {
		t.Errorf("driver %v: %+v, ipc %v", d, p, d.supportsIPC())
	}
	if len(d.devices) != wantDevices() {
		t.Fatalf("%d devices, want %d", len(d.devices), wantDevices())
	}
	for i, dev := range d.devices {
		p := dev.props
		if p.Name != fmt.Sprintf("usmbridge fake GPU %d", i) || p.Type != deviceTypeGPU || p.VendorID != 0x8086 ||
			!bytes.HasPrefix(p.UUID[:], []byte("fakeze-device-")) || p.UUID[14] != byte('0'+i) || p.MaxMemAllocSize != 1<<32 {
			t.Errorf("device %d: %+v", i, p)
		}
		if dev.driver != d || dev.index != i || dev.String() != fmt.Sprintf("level_zero:gpu %q", p.Name) || findDevice(dev.h) != dev {
			t.Errorf("device %d: driver %p index %d string %q", i, dev.driver, dev.index, dev)
		}
	}
	// The init path and optional symbols follow the loader: 1.8.12 has
	// none of the three; the fake is told the loader's version.
	s := mustFake(t)
	t.Logf("init path %s; loader passed API %s to the driver; absent entry points %v",
		initPath, apiString(uint32(s.LoaderVersion)), api.Absent())
	if s.LoaderVersion < 0x10006 && (api.HasCommandListHostSynchronize() || api.HasPutIpcHandle()) {
		t.Errorf("loader passes API %#x but exports 1.6 entry points", s.LoaderVersion)
	}
	if api.HasInitDrivers() != (initPath == "zeInitDrivers") {
		t.Errorf("init path %q while zeInitDrivers present = %v", initPath, api.HasInitDrivers())
	}
}

// TestAllocKinds allocates every kind and checks what the driver reports
// for the base pointer, an interior pointer and the freed pointer.
func TestAllocKinds(t *testing.T) {
	needDriver(t)
	d := drivers[0]
	ctx, err := newContext(d)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	dev := d.devices[len(d.devices)-1]
	for _, c := range []struct {
		name  string
		alloc func(size uintptr) (uintptr, error)
		kind  usm.Kind
		dev   *device
	}{
		{"host", func(n uintptr) (uintptr, error) { return ctx.alloc(usm.KindHost, nil, n, 0) }, usm.KindHost, nil},
		{"device", func(n uintptr) (uintptr, error) { return ctx.alloc(usm.KindDevice, dev, n, 256) }, usm.KindDevice, dev},
		{"shared", func(n uintptr) (uintptr, error) { return ctx.alloc(usm.KindShared, dev, n, 0) }, usm.KindShared, dev},
		{"shared-no-device", func(n uintptr) (uintptr, error) { return ctx.alloc(usm.KindShared, nil, n, 4096) }, usm.KindShared, nil},
	} {
		for _, size := range []uintptr{1, 100, 1 << 20} {
			t.Run(fmt.Sprintf("%s/%d", c.name, size), func(t *testing.T) {
				p, err := c.alloc(size)
				if err != nil {
					t.Fatal(err)
				}
				wantDev := -1
				if c.dev != nil {
					wantDev = c.dev.index
				}
				for _, q := range []uintptr{p, p + size/2, p + size - 1} {
					ap, err := ctx.allocProperties(q)
					if err != nil || kindOf(ap.Type) != c.kind || findDevice(ap.Device) != c.dev || ap.ID == 0 || ap.PageSize != 4096 {
						t.Errorf("allocProperties(base+%d) = %+v, %v", q-p, ap, err)
					}
					base, n, err := ctx.addressRange(q)
					if err != nil || base != p || n != size {
						t.Errorf("addressRange(base+%d) = %#x, %d, %v; want %#x, %d", q-p, base, n, err, p, size)
					}
					if info := ctx.QueryPointer(q); info != (usm.PointerInfo{Kind: c.kind, Device: wantDev, Base: p, Size: size}) {
						t.Errorf("QueryPointer(base+%d) = %+v", q-p, info)
					}
				}
				if err := ctx.free(p); err != nil {
					t.Fatal(err)
				}
				if ap, err := ctx.allocProperties(p); err != nil || ap.Type != zeapi.MemoryTypeUnknown || ap.Device != 0 {
					t.Errorf("freed pointer: %+v, %v", ap, err)
				}
				if info := ctx.QueryPointer(p); info.Kind != usm.KindUnknown {
					t.Errorf("QueryPointer of a freed pointer = %+v", info)
				}
			})
		}
	}
}

// TestBadInput covers foreign pointers, invalid sizes and used-up
// objects: each gives a typed error naming the call and the code, or
// KindUnknown, and nothing reaches C through a dead handle.
func TestBadInput(t *testing.T) {
	b := newBackend(t)
	ctx, _ := b.Context(0)
	dev := b.devs[0].dev
	goMem := make([]byte, 64)
	goPtr := uintptr(unsafe.Pointer(&goMem[0]))
	cPtr := cmem.Alloc(64)
	defer cmem.Free(cPtr, 64)

	t.Run("foreign pointers are KindUnknown", func(t *testing.T) {
		for _, p := range []uintptr{0, 1, goPtr, cPtr, ^uintptr(0)} {
			if info := b.QueryPointer(p); info.Kind != usm.KindUnknown || info.Device != -1 || info.HasExtent() {
				t.Errorf("QueryPointer(%#x) = %+v", p, info)
			}
			if ap, err := ctx.allocProperties(p); err != nil || ap.Type != zeapi.MemoryTypeUnknown {
				t.Errorf("allocProperties(%#x) = %+v, %v", p, ap, err)
			}
			if info := ctx.QueryPointer(p); info.Kind != usm.KindUnknown || info.Device != -1 || info.HasExtent() {
				t.Errorf("Context.QueryPointer(%#x) = %+v", p, info)
			}
		}
		_, _, err := ctx.addressRange(goPtr)
		wantCallError(t, err, "zeMemGetAddressRange", zeapi.ErrorUnknown)
	})
	for _, c := range []struct {
		name string
		do   func() error
		call string
		code Status
		kind *errkind.Kind
	}{
		{"size 0", func() error { _, err := ctx.alloc(usm.KindDevice, dev, 0, 0); return err }, "zeMemAllocDevice", ErrorUnsupportedSize, errkind.Value},
		{"alignment 3", func() error { _, err := ctx.alloc(usm.KindHost, nil, 64, 3); return err }, "zeMemAllocHost", zeapi.ErrorUnsupportedAlignment, errkind.Value},
		{"too large", func() error { _, err := ctx.alloc(usm.KindShared, dev, 1<<50, 0); return err }, "zeMemAllocShared", ErrorOutOfDeviceMemory, errkind.Memory},
		{"too large through the backend", func() error { _, err := b.Alloc(0, usm.KindDevice, 1<<50); return err }, "zeMemAllocDevice", ErrorOutOfDeviceMemory, errkind.Memory},
		{"free Go memory", func() error { return ctx.free(goPtr) }, "zeMemFree", zeapi.ErrorInvalidArgument, errkind.Value},
		{"IPC of Go memory", func() error { _, err := b.GetIPCHandle(goPtr); return err }, "zeMemGetIpcHandle", zeapi.ErrorInvalidArgument, errkind.Value},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			wantCallError(t, err, c.call, c.code)
			if !errors.Is(err, c.kind) {
				t.Errorf("%v does not match %v", err, c.kind)
			}
		})
	}
	t.Run("dead and nil objects", func(t *testing.T) {
		var nilCtx *Context
		if _, err := nilCtx.alloc(usm.KindHost, nil, 64, 0); !errors.Is(err, usm.ErrValue) {
			t.Errorf("nil context: %v", err)
		}
		if _, err := nilCtx.UnsafeBorrowQueue(1); !errors.Is(err, usm.ErrValue) {
			t.Errorf("nil context: %v", err)
		}
		if nilCtx.QueryPointer(1).Kind != usm.KindUnknown || nilCtx.Native() != 0 || nilCtx.Close() != nil {
			t.Error("a nil context is neither usable nor a crash")
		}
		var nilQ *Queue
		if err := nilQ.Wait(); !errors.Is(err, usm.ErrValue) {
			t.Errorf("nil queue: %v", err)
		}
		if nilQ.Native() != 0 || nilQ.Close() != nil {
			t.Error("a nil queue is neither usable nor a crash")
		}
		c2, err := newContext(drivers[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := c2.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c2.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := c2.alloc(usm.KindHost, nil, 64, 0); !errors.Is(err, usm.ErrValue) || !strings.Contains(err.Error(), "closed") {
			t.Errorf("closed context: %v", err)
		}
		if c2.Native() != 0 {
			t.Error("a closed context still hands out its handle")
		}
		l, err := newImmediateList(ctx, dev, zeapi.QueueModeDefault)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := l.appendBarrier(nil); !errors.Is(err, usm.ErrValue) {
			t.Errorf("closed list: %v", err)
		}
		if err := l.Wait(); !errors.Is(err, usm.ErrValue) {
			t.Errorf("closed list: %v", err)
		}
		var nilEv *event
		if err := nilEv.hostSignal(); !errors.Is(err, usm.ErrValue) {
			t.Errorf("nil event: %v", err)
		}
		bq, _ := b.Queue(0)
		if err := bq.(*Queue).Close(); !errors.Is(err, usm.ErrValue) {
			t.Errorf("closing a Backend's queue: %v", err)
		}
		if err := ctx.Close(); !errors.Is(err, usm.ErrValue) {
			t.Errorf("closing a Backend's context: %v", err)
		}
		must(t, bq.Wait()) // both still work
	})
	t.Run("context with live children", func(t *testing.T) {
		c2, err := newContext(drivers[0])
		if err != nil {
			t.Fatal(err)
		}
		p, err := c2.alloc(usm.KindHost, nil, 64, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := c2.Close(); !errors.Is(err, usm.ErrValue) {
			t.Errorf("Close with a live allocation: %v", err)
		}
		if err := c2.free(p); err != nil {
			t.Fatal(err)
		}
		if err := c2.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("backend arguments", func(t *testing.T) {
		if _, err := b.Alloc(99, usm.KindShared, 8); !errors.Is(err, usm.ErrValue) {
			t.Errorf("Alloc on device 99: %v", err)
		}
		if _, err := b.Alloc(0, usm.KindUnknown, 8); !errors.Is(err, usm.ErrValue) {
			t.Errorf("Alloc of KindUnknown: %v", err)
		}
		if err := b.Copy(0, goPtr, 8); !errors.Is(err, usm.ErrValue) {
			t.Errorf("Copy to NULL: %v", err)
		}
		if _, err := b.Queue(-1); !errors.Is(err, usm.ErrValue) {
			t.Errorf("Queue(-1): %v", err)
		}
		if _, err := b.Context(len(b.Devices())); !errors.Is(err, usm.ErrValue) {
			t.Errorf("Context past the last device: %v", err)
		}
		if _, err := b.OpenIPCHandle(-1, IPCHandle{}); !errors.Is(err, usm.ErrValue) {
			t.Errorf("OpenIPCHandle(-1): %v", err)
		}
	})
}

// fill writes a recognisable pattern to host-accessible memory.
func fill(p, n uintptr, seed byte) {
	b := cmem.Bytes(p, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}

// TestCommandListsAndQueues: what a SYCL runtime hands out, made here
// through the loader directly. A command queue that executed a regular
// list, waited on through UnsafeBorrowQueue, and an immediate list with
// events.
func TestCommandListsAndQueues(t *testing.T) {
	b := newBackend(t)
	ctx, _ := b.Context(0)
	dev := b.devs[0].dev
	const n = 4096
	src, err := ctx.alloc(usm.KindShared, dev, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.free(src)
	dst, err := ctx.alloc(usm.KindDevice, dev, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.free(dst)
	back, err := ctx.alloc(usm.KindHost, nil, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.free(back)
	fill(src, n, 3)

	t.Run("regular list on a borrowed queue", func(t *testing.T) {
		zc := zeapi.Context(ctx.Native())
		rq, err := api.CommandQueueCreate(zc, dev.h, zeapi.QueueModeAsynchronous)
		if err != nil {
			t.Fatal(err)
		}
		defer api.CommandQueueDestroy(rq)
		rl, err := api.CommandListCreate(zc, dev.h)
		if err != nil {
			t.Fatal(err)
		}
		defer api.CommandListDestroy(rl)
		clear(cmem.Bytes(back, n))
		must(t, api.AppendMemoryCopy(rl, dst, src, n, 0, nil))
		must(t, api.AppendBarrier(rl, 0, nil))
		must(t, api.AppendMemoryCopy(rl, back, dst, n, 0, nil))
		if !bytes.Equal(cmem.Bytes(back, n), make([]byte, n)) {
			t.Fatal("a regular list ran before it was executed")
		}
		must(t, api.CommandListClose(rl))
		q, err := ctx.UnsafeBorrowQueue(uintptr(rq))
		if err != nil {
			t.Fatal(err)
		}
		if q.Native() != uintptr(rq) {
			t.Errorf("Native() = %#x, want %#x", q.Native(), rq)
		}
		must(t, api.CommandQueueExecute(rq, []zeapi.CommandList{rl}))
		must(t, q.Wait())
		if !bytes.Equal(cmem.Bytes(back, n), cmem.Bytes(src, n)) {
			t.Fatal("data did not arrive")
		}
		if err := q.appendBarrier(nil); !errors.Is(err, usm.ErrValue) {
			t.Errorf("appending to a command queue: %v", err)
		}
		must(t, api.CommandListReset(rl))
		must(t, api.AppendMemoryFill(rl, back, []byte{0xab, 0xcd}, n, 0, nil))
		must(t, api.CommandListClose(rl))
		must(t, api.CommandQueueExecute(rq, []zeapi.CommandList{rl}))
		must(t, q.Wait())
		if got := cmem.Bytes(back, n); got[0] != 0xab || got[1] != 0xcd || got[n-1] != 0xcd {
			t.Fatalf("fill: % x", got[:4])
		}
		must(t, q.Close())
		must(t, q.Close())
		if err := q.Wait(); !errors.Is(err, usm.ErrValue) {
			t.Errorf("Wait after Close: %v", err)
		}
		must(t, api.CommandQueueSynchronize(rq, zeapi.Poll)) // the native queue is still alive
	})
	t.Run("immediate list with events", func(t *testing.T) {
		l, err := newImmediateList(ctx, dev, zeapi.QueueModeAsynchronous)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		pool, err := newEventPool(ctx, 2, true, dev)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.close()
		copied, err := pool.newEvent(0)
		if err != nil {
			t.Fatal(err)
		}
		defer copied.close()
		gate, err := pool.newEvent(1)
		if err != nil {
			t.Fatal(err)
		}
		defer gate.close()
		if _, err := pool.newEvent(2); !errors.Is(err, usm.ErrValue) {
			t.Errorf("event outside the pool: %v", err)
		}
		clear(cmem.Bytes(back, n))
		must(t, l.appendCopy(back, src, n, copied))
		must(t, copied.hostSynchronize(zeapi.Infinite))
		if ok, err := copied.signalled(); !ok || err != nil {
			t.Errorf("signalled = %v, %v", ok, err)
		}
		if !bytes.Equal(cmem.Bytes(back, n), cmem.Bytes(src, n)) {
			t.Fatal("data did not arrive")
		}
		must(t, gate.hostSignal())
		must(t, l.appendBarrier(nil, gate)) // waits on a signalled event: returns
		must(t, l.Wait())
		if err := pool.close(); !errors.Is(err, usm.ErrValue) {
			t.Errorf("closing a pool with live events: %v", err)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestEventAcrossGoroutines: a wait in one goroutine is released by a
// host signal from another, and timeouts report NOT_READY.
func TestEventAcrossGoroutines(t *testing.T) {
	b := newBackend(t)
	ctx, _ := b.Context(0)
	ev := hostEvent(t, ctx)
	wantCallError(t, ev.hostSynchronize(zeapi.Poll), "zeEventHostSynchronize", zeapi.NotReady)
	wantCallError(t, ev.hostSynchronize(uint64(time.Millisecond)), "zeEventHostSynchronize", zeapi.NotReady)
	start := time.Now()
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = ev.hostSignal()
	}()
	must(t, ev.hostSynchronize(zeapi.Infinite))
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Errorf("wait returned after %v, before the signal", d)
	}
	must(t, ev.hostReset())
	if ok, err := ev.signalled(); ok || err != nil {
		t.Errorf("after reset: %v, %v", ok, err)
	}
}

// TestNativeHandleSync synchronises handles as a SYCL runtime would hand
// them over: a context, a command queue, and an immediate command list.
func TestNativeHandleSync(t *testing.T) {
	b := newBackend(t)
	ctx, _ := b.Context(0)
	dev := b.devs[0].dev
	rq, err := api.CommandQueueCreate(zeapi.Context(ctx.Native()), dev.h, zeapi.QueueModeDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer api.CommandQueueDestroy(rq)
	il, err := newImmediateList(ctx, dev, zeapi.QueueModeDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer il.Close()

	nq, err := ctx.UnsafeBorrowQueue(uintptr(rq))
	if err != nil {
		t.Fatal(err)
	}
	var wq usm.Queue = nq
	must(t, wq.Wait())
	must(t, nq.Close())
	must(t, api.CommandQueueSynchronize(rq, zeapi.Poll)) // the native queue is still alive

	before := mustFake(t)
	nl, err := ctx.UnsafeBorrowImmediateList(il.Native())
	if err != nil {
		t.Fatal(err)
	}
	wq = nl
	for range 3 {
		must(t, wq.Wait())
	}
	during := mustFake(t)
	if api.HasCommandListHostSynchronize() {
		if during.Pools != before.Pools {
			t.Errorf("zeCommandListHostSynchronize path created event pools")
		}
	} else if during.Pools != before.Pools+1 || during.Events != before.Events+1 {
		t.Errorf("barrier fallback: pools %d→%d, events %d→%d; want one of each, reused", before.Pools, during.Pools, before.Events, during.Events)
	}
	must(t, nl.Close())
	if after := mustFake(t); after.objects() != before.objects() {
		t.Errorf("after Close: %+v, want %+v", after.objects(), before.objects())
	}
	must(t, il.appendBarrier(nil)) // the native list is still alive
	if _, err := ctx.UnsafeBorrowQueue(0); !errors.Is(err, usm.ErrValue) {
		t.Errorf("NULL queue: %v", err)
	}
	if _, err := ctx.UnsafeBorrowImmediateList(0); !errors.Is(err, usm.ErrValue) {
		t.Errorf("NULL list: %v", err)
	}

	// The context as SYCL's get_native would hand it out: its pointer
	// queries answer like the backend's, its queues can be borrowed, and
	// Close only forgets it, after the queues borrowed through it.
	a, err := b.Alloc(wantDevices()-1, usm.KindShared, 96)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	bc, err := UnsafeBorrowContext(ctx.Native())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []uintptr{a.Pointer(), a.Pointer() + 95, a.Pointer() + 96, 0} {
		if got, want := bc.QueryPointer(p), b.QueryPointer(p); got != want {
			t.Errorf("borrowed context: QueryPointer(%#x) = %+v, backend says %+v", p, got, want)
		}
	}
	if info := bc.QueryPointer(a.Pointer()); info.Kind != usm.KindShared || info.Device != wantDevices()-1 || info.Base != a.Pointer() || info.Size != 96 {
		t.Errorf("borrowed context: QueryPointer = %+v", info)
	}
	bl, err := bc.UnsafeBorrowImmediateList(il.Native())
	if err != nil {
		t.Fatal(err)
	}
	must(t, bl.Wait())
	if err := bc.Close(); !errors.Is(err, usm.ErrValue) {
		t.Errorf("closing a context with a borrowed queue: %v", err)
	}
	must(t, bl.Close())
	must(t, bc.Close())
	must(t, bc.Close())
	if bc.Native() != 0 || bc.QueryPointer(a.Pointer()).Kind != usm.KindUnknown {
		t.Error("a closed context still answers")
	}
	if b.QueryPointer(a.Pointer()).Kind != usm.KindShared {
		t.Error("closing the borrowed context closed the backend's")
	}
	if _, err := UnsafeBorrowContext(0); !errors.Is(err, usm.ErrValue) {
		t.Errorf("NULL context: %v", err)
	}
}

func TestIPC(t *testing.T) {
	b := newBackend(t)
	const n = 1024
	a, err := b.Alloc(0, usm.KindDevice, n)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	p := a.Pointer()
	fill(p, n, 9) // the fake's device memory is host memory

	h, err := b.GetIPCHandle(p)
	if err != nil {
		t.Fatal(err)
	}
	wire := h.Bytes()
	h2, err := IPCHandleFromBytes(wire)
	if err != nil || !bytes.Equal(h2.Bytes(), wire) {
		t.Fatalf("IPCHandleFromBytes: %v", err)
	}
	m, err := b.OpenIPCHandle(0, h2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cmem.Bytes(m.Pointer(), n), cmem.Bytes(p, n)) {
		t.Error("mapped memory differs")
	}
	if s := mustFake(t); s.IPC != 1 {
		t.Errorf("driver reports %d open mappings", s.IPC)
	}
	if err := b.Close(); !errors.Is(err, usm.ErrValue) {
		t.Errorf("closing the backend under a mapping: %v", err)
	}
	must(t, m.Close())
	must(t, m.Close())
	if m.Pointer() != 0 {
		t.Error("pointer after Close")
	}
	if err := b.PutIPCHandle(h); api.HasPutIpcHandle() {
		must(t, err)
	} else if !errors.Is(err, usm.ErrNotSupported) {
		t.Errorf("PutIPCHandle without the symbol: %v", err)
	}
	if err := b.PutIPCHandle(h2); !errors.Is(err, usm.ErrValue) {
		t.Errorf("PutIPCHandle of a handle rebuilt from bytes: %v", err)
	}

	_, err = b.GetIPCHandle(p + 8)
	wantCallError(t, err, "zeMemGetIpcHandle", zeapi.ErrorInvalidArgument)
	bad := make([]byte, 64)
	copy(bad, "not a handle")
	hb, _ := IPCHandleFromBytes(bad)
	_, err = b.OpenIPCHandle(0, hb)
	wantCallError(t, err, "zeMemOpenIpcHandle", zeapi.ErrorInvalidArgument)
	if _, err := IPCHandleFromBytes(bad[:10]); !errors.Is(err, usm.ErrValue) {
		t.Errorf("short handle: %v", err)
	}
}

// TestFailHalfway breaks multi-step operations at each step and checks
// that the error names the failing call and that nothing stays behind.
func TestFailHalfway(t *testing.T) {
	needDriver(t)
	for _, c := range []struct {
		call string
		code Status
	}{
		{"zeContextCreate", ErrorOutOfHostMemory},
		{"zeCommandListCreateImmediate", ErrorOutOfHostMemory},
		{"zeEventPoolCreate", ErrorOutOfDeviceMemory},
		{"zeEventCreate", ErrorOutOfHostMemory},
	} {
		t.Run("New/"+c.call, func(t *testing.T) {
			before := mustFake(t)
			failNext(t, c.call, c.code)
			b, err := New()
			if err == nil {
				b.Close()
				t.Fatal("New succeeded")
			}
			wantCallError(t, err, c.call, c.code)
			if !errors.Is(err, usm.ErrMemory) {
				t.Errorf("%v does not match ErrMemory", err)
			}
			if after := mustFake(t); after.objects() != before.objects() || after.ArmedFailures != 0 {
				t.Errorf("after a failed New the driver holds %+v, before %+v", after, before)
			}
		})
	}
	b := newBackend(t)
	ctx, _ := b.Context(0)
	dev := b.devs[0].dev
	t.Run("Copy", func(t *testing.T) {
		a, err := b.Alloc(0, usm.KindShared, 256)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		src := make([]byte, 256)
		src[0] = 42
		failNext(t, "zeCommandListAppendMemoryCopy", ErrorDeviceLost)
		err = b.Copy(a.Pointer(), uintptr(unsafe.Pointer(&src[0])), 256)
		wantCallError(t, err, "zeCommandListAppendMemoryCopy", ErrorDeviceLost)
		// The device's event was not left signalled: the next copy works
		// and really waits.
		must(t, b.Copy(a.Pointer(), uintptr(unsafe.Pointer(&src[0])), 256))
		if a.Bytes()[0] != 42 {
			t.Error("copy after a failure did not arrive")
		}
	})
	t.Run("barrier fallback", func(t *testing.T) {
		if api.HasCommandListHostSynchronize() {
			t.Skip("the loader has zeCommandListHostSynchronize; no fallback to break")
		}
		il, err := newImmediateList(ctx, dev, zeapi.QueueModeDefault)
		if err != nil {
			t.Fatal(err)
		}
		defer il.Close()
		before := mustFake(t)
		failNext(t, "zeEventCreate", ErrorOutOfHostMemory)
		wantCallError(t, il.Wait(), "zeEventCreate", ErrorOutOfHostMemory)
		if after := mustFake(t); after.objects() != before.objects() {
			t.Errorf("failed fallback left %+v, before %+v", after.objects(), before.objects())
		}
		failNext(t, "zeCommandListAppendBarrier", ErrorDeviceLost)
		wantCallError(t, il.Wait(), "zeCommandListAppendBarrier", ErrorDeviceLost)
		must(t, il.Wait())
	})
	t.Run("Alloc", func(t *testing.T) {
		failNext(t, "zeMemAllocShared", ErrorOutOfDeviceMemory)
		_, err := b.Alloc(0, usm.KindShared, 64)
		wantCallError(t, err, "zeMemAllocShared", ErrorOutOfDeviceMemory)
		if !errors.Is(err, usm.ErrMemory) {
			t.Errorf("%v does not match ErrMemory", err)
		}
	})
}

// TestBackendRegistry uses the backend through usm.Registry: selectors,
// SUAI and DLPack export and import as kDLOneAPI.
func TestBackendRegistry(t *testing.T) {
	b := newBackend(t)
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host, b)
	devs := reg.Devices()
	if len(devs) != wantDevices()+1 || devs[0].Backend != syclobj.LevelZero || devs[len(devs)-1].Backend != syclobj.Host {
		t.Fatalf("global order %v: level_zero devices must come first", devs)
	}
	for i := range wantDevices() {
		sel, err := syclobj.ParseSelector(fmt.Sprintf("level_zero:gpu:%d", i))
		if err != nil {
			t.Fatal(err)
		}
		got, local, err := reg.Select(sel)
		if err != nil || got != usm.Backend(b) || local != i {
			t.Errorf("%v → %v, %d, %v", sel, got, local, err)
		}
	}
	for _, kind := range []usm.Kind{usm.KindShared, usm.KindHost, usm.KindDevice} {
		t.Run(kind.String(), func(t *testing.T) {
			dev := wantDevices() - 1
			const rows, cols = 3, 5
			alloc, err := b.Alloc(dev, kind, rows*cols*4)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float32, rows*cols)
			for i := range want {
				want[i] = float32(i) + 0.25
			}
			must(t, b.Copy(alloc.Pointer(), uintptr(unsafe.Pointer(&want[0])), rows*cols*4))
			info := b.QueryPointer(alloc.Pointer() + 4)
			wantDev := dev
			if kind == usm.KindHost {
				wantDev = -1
			}
			if info.Kind != kind || info.Device != wantDev || info.Base != alloc.Pointer() || info.Size != rows*cols*4 {
				t.Errorf("QueryPointer = %+v", info)
			}
			if be, li := reg.Lookup(alloc.Pointer()); be != usm.Backend(b) || li.Kind != kind {
				t.Errorf("Registry.Lookup = %v, %+v", be, li)
			}
			arr, err := reg.NewArray(alloc, dtype.Float32, []int64{rows, cols})
			if err != nil {
				t.Fatal(err)
			}
			if arr.DLDevice != (dlpack.Device{Type: dlpack.OneAPI, ID: int32(dev)}) {
				t.Errorf("DLDevice %v, want kDLOneAPI %d", arr.DLDevice, dev)
			}
			suai, err := arr.SUAI()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(suai["syclobj"]) != fmt.Sprintf("level_zero:gpu:%d", dev) {
				t.Errorf("syclobj %v", suai["syclobj"])
			}
			parsed, err := reg.Parse(suai)
			if err != nil || parsed.Memory.Kind != kind || parsed.Backend != usm.Backend(b) {
				t.Fatalf("Parse: %+v, %v", parsed, err)
			}
			if _, err := reg.Bind(usm.Interface{Shape: []int64{rows, cols + 1}, DType: dtype.Float32, Data: alloc.Pointer(), Syclobj: parsed.Syclobj, Version: usm.Version1}); !errors.Is(err, usm.ErrValue) {
				t.Errorf("an array larger than its allocation was accepted: %v", err)
			}

			m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
			if err != nil {
				t.Fatal(err)
			}
			must(t, alloc.Free()) // the export keeps the memory alive
			if !alloc.Live() {
				t.Fatal("export did not keep the allocation")
			}
			tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			if tn.DLDevice != arr.DLDevice || tn.Data != alloc.Pointer() || tn.Memory.Kind != kind || tn.Backend != usm.Backend(b) {
				t.Errorf("imported %+v", tn.Array)
			}
			got := make([]float32, rows*cols)
			must(t, b.Copy(uintptr(unsafe.Pointer(&got[0])), tn.Data, rows*cols*4))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("data %v, want %v", got, want)
			}
			if kind == usm.KindDevice {
				// To the host, device USM goes through a copy.
				cpuDev := dlpack.Device{Type: dlpack.CPU}
				hm, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}, Device: &cpuDev})
				if err != nil {
					t.Fatal(err)
				}
				ht, err := dlpack.Import(hm, dlpack.ImportOptions{Registry: reg})
				if err != nil {
					t.Fatal(err)
				}
				raw, err := ht.Bytes()
				if err != nil || !ht.IsCopied() || *(*float32)(unsafe.Pointer(&raw[4])) != want[1] {
					t.Errorf("host copy: copied %v, %v", ht.IsCopied(), err)
				}
				ht.Release()
			}
			tn.Release()
			if alloc.Live() {
				t.Error("allocation outlived its last DLPack reference")
			}
		})
	}
}

// TestConcurrentCopies runs copies on every device from several
// goroutines (run with -race in CI).
func TestConcurrentCopies(t *testing.T) {
	b := newBackend(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := g % wantDevices()
			a, err := b.Alloc(dev, usm.KindDevice, 4096)
			if err != nil {
				errs <- err
				return
			}
			defer a.Free()
			src := bytes.Repeat([]byte{byte(g)}, 4096)
			dst := make([]byte, 4096)
			for range 50 {
				if err := b.Copy(a.Pointer(), uintptr(unsafe.Pointer(&src[0])), 4096); err != nil {
					errs <- err
					return
				}
				if err := b.Copy(uintptr(unsafe.Pointer(&dst[0])), a.Pointer(), 4096); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(src, dst) {
					errs <- fmt.Errorf("goroutine %d: data mixed up", g)
					return
				}
				q, _ := b.Queue(dev)
				if err := q.Wait(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestLoadedLibraries checks that the configuration really is what the
// process was started with: the fake driver is loaded, and the validation
// layer exactly when it was asked for.
func TestLoadedLibraries(t *testing.T) {
	needDriver(t)
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(maps, []byte(fakePath)) {
		t.Errorf("fake driver %s is not mapped", fakePath)
	}
	want := os.Getenv("ZE_ENABLE_VALIDATION_LAYER") == "1"
	if got := bytes.Contains(maps, []byte("libze_validation_layer.so")); got != want {
		t.Errorf("validation layer loaded = %v, want %v", got, want)
	}
	t.Logf("config %q: fake %s, validation layer %v, intercept %q", os.Getenv(childEnv), fakePath, want, os.Getenv("ZE_ENABLE_LOADER_INTERCEPT"))
}

// TestCloseWhileBusy closes a backend while other goroutines allocate,
// copy and free through it (run with -race); TestMain checks that nothing
// leaked.
func TestCloseWhileBusy(t *testing.T) {
	needDriver(t)
	b, err := New()
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseWhileBusy(t, b, wantDevices()-1)
}

// A filter selector naming the other device of the driver binds host USM,
// which belongs to the driver's one context and so to both devices, and
// refuses device and shared USM of the first device, naming both
// (RATIONALE.md, "A filter selector binds memory of its device's
// context"): dpctl would put it on the named device unchecked.
func TestSelectorOfAnotherDevice(t *testing.T) {
	b := newBackend(t)
	if wantDevices() < 2 {
		t.Logf("%d fake device: nothing to name but the allocating one", wantDevices())
		return
	}
	reg := usm.NewRegistry(b)
	sels := make([]syclobj.Selector, 2)
	for i := range sels {
		var err error
		sels[i], err = reg.SelectorFor(b, i)
		if err != nil {
			t.Fatal(err)
		}
	}
	names := b.Devices()
	for _, kind := range []usm.Kind{usm.KindDevice, usm.KindShared, usm.KindHost} {
		t.Run(kind.String(), func(t *testing.T) {
			alloc, err := b.Alloc(0, kind, 64)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { must(t, alloc.Free()) }()
			in := usm.Interface{Shape: []int64{16}, DType: dtype.Float32, Data: alloc.Pointer(), Version: usm.Version1, Syclobj: sels[0]}
			arr, err := reg.Bind(in)
			if err != nil || arr.Device != 0 {
				t.Fatalf("bound with its own device's selector: %+v, %v", arr, err)
			}
			in.Syclobj = sels[1]
			arr, err = reg.Bind(in)
			if kind == usm.KindHost {
				if err != nil || arr.Device != 1 || arr.DLDevice != (dlpack.Device{Type: dlpack.OneAPI, ID: 1}) {
					t.Fatalf("host USM with the other device of its context: %+v, %v; want it on device 1", arr, err)
				}
				return
			}
			var be *usm.BindingError
			if !errors.As(err, &be) || !errors.Is(err, usm.ErrValue) {
				t.Fatalf("%s USM of device 0 named by %v: %+v, %v; want a BindingError", kind, sels[1], arr, err)
			}
			for i, sel := range sels {
				if want := sel.String() + " " + strconv.Quote(names[i].Name); !strings.Contains(err.Error(), want) {
					t.Errorf("%v does not name %s", err, want)
				}
			}
		})
	}
}
