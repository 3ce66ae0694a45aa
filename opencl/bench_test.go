package opencl

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// benchEach runs fn per runtime, skipping (never failing) when a runtime
// is absent outside CI, like the tests.
func benchEach(b *testing.B, fn func(b *testing.B, r rt)) {
	for _, r := range runtimes {
		b.Run(r.name, func(b *testing.B) { fn(b, find(b, r)) })
	}
}

var copySizes = []struct {
	name string
	n    uintptr
}{{"1MiB", 1 << 20}, {"16MiB", 16 << 20}, {"256MiB", 256 << 20}}

// Host memory -> shared USM (SVM on PoCL) through Backend.Copy, beside Go's
// copy of the same bytes into the same destination, and the runtime's own
// blocking copy for reference.
func BenchmarkCopyHostToShared(b *testing.B) {
	benchEach(b, func(b *testing.B, r rt) {
		for _, sz := range copySizes {
			b.Run(sz.name, func(b *testing.B) {
				a, err := r.b.Alloc(r.local, usm.KindShared, sz.n)
				require.NoError(b, err)
				defer a.Free()
				src := make([]byte, sz.n)
				for i := range src {
					src[i] = byte(i)
				}
				dst := a.Bytes()
				copy(dst, src) // fault both buffers in before timing
				b.Run("go-copy", func(b *testing.B) {
					b.SetBytes(int64(sz.n))
					for b.Loop() {
						copy(dst, src)
					}
				})
				b.Run("backend", func(b *testing.B) {
					b.SetBytes(int64(sz.n))
					for b.Loop() {
						if err := r.b.Copy(a.Pointer(), addr(src), sz.n); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run("c-memcpy", func(b *testing.B) {
					memcpy := libcMemcpy(b)
					b.SetBytes(int64(sz.n))
					for b.Loop() {
						ffi.Fn(memcpy).Call(a.Pointer(), addr(src), sz.n)
					}
				})
				b.Run("runtime-memcpy", func(b *testing.B) {
					b.SetBytes(int64(sz.n))
					for b.Loop() {
						var err error
						if r.mem == usmMemory {
							err = r.q.memcpy(true, a.Pointer(), addr(src), sz.n)
						} else {
							err = r.q.svmMemcpy(true, a.Pointer(), addr(src), sz.n)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	})
}

// Device USM -> host USM on the Intel runtime (the copy a kDLCPU export of
// device memory makes), beside Go's copy between two host buffers of the
// same size.
func BenchmarkCopyDeviceToHost(b *testing.B) {
	r := find(b, runtimes[1])
	for _, sz := range copySizes {
		b.Run(sz.name, func(b *testing.B) {
			dev, err := r.b.Alloc(r.local, usm.KindDevice, sz.n)
			require.NoError(b, err)
			defer dev.Free()
			host, err := r.b.Alloc(r.local, usm.KindHost, sz.n)
			require.NoError(b, err)
			defer host.Free()
			require.NoError(b, r.q.memFill(dev.Pointer(), []byte{1}, sz.n, false))
			require.NoError(b, r.q.Wait())
			// Go's copy reads a buffer of the same size with real contents:
			// never-written memory maps the kernel's one zero page, which
			// stays in the cache and would make the peer a cache benchmark.
			src := make([]byte, sz.n)
			for i := range src {
				src[i] = byte(i)
			}
			copy(host.Bytes(), src) // fault both buffers in before timing
			b.Run("go-copy", func(b *testing.B) {
				b.SetBytes(int64(sz.n))
				dst := host.Bytes()
				for b.Loop() {
					copy(dst, src)
				}
			})
			b.Run("backend", func(b *testing.B) {
				b.SetBytes(int64(sz.n))
				for b.Loop() {
					if err := r.b.Copy(host.Pointer(), dev.Pointer(), sz.n); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// Queue.Wait (what export and SUAI call) against a bare clFinish on the
// same idle queue.
func BenchmarkQueueSync(b *testing.B) {
	benchEach(b, func(b *testing.B, r rt) {
		h := clapi.Queue(r.q.Native())
		l, _ := lib()
		b.Run("raw-clFinish", func(b *testing.B) {
			for b.Loop() {
				if err := l.Finish(h); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Queue.Wait", func(b *testing.B) {
			for b.Loop() {
				if err := r.q.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// Backend.QueryPointer on a live allocation (interior pointer) and on
// memory the backend does not know.
func BenchmarkQueryPointer(b *testing.B) {
	benchEach(b, func(b *testing.B, r rt) {
		a, err := r.b.Alloc(r.local, usm.KindShared, 1<<16)
		require.NoError(b, err)
		defer a.Free()
		foreign := cmem.Alloc(64)
		defer cmem.Free(foreign, 64)
		for _, tc := range []struct {
			name string
			p    uintptr
			want usm.Kind
		}{{"known", a.Pointer() + 100, a.Kind()}, {"unknown", foreign, usm.KindUnknown}} {
			b.Run(tc.name, func(b *testing.B) {
				for b.Loop() {
					if r.b.QueryPointer(tc.p).Kind != tc.want {
						b.Fatal("wrong kind")
					}
				}
			})
		}
		// USM the context did not allocate (a dpctl array's, say): every
		// fact comes from the runtime, one clGetMemAllocInfoINTEL call
		// each (kind, base, size; the device too in a context of several
		// devices). This is the extent check's cost per SUAI import.
		ctx := r.b.devs[r.local].plat.ctx
		if ctx.s.platform.usmFuncs().CanQuery() {
			b.Run("runtime", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if ctx.queryForeign(a.Pointer()+100).Kind != a.Kind() {
						b.Fatal("wrong kind")
					}
				}
			})
			// The same three calls from a C loop (testdata/launchpeer.c
			// of internal/testutil): the runtime's own cost, the floor of
			// "runtime" and of the extent check in every SUAI import.
			b.Run("runtime-c", func(b *testing.B) {
				if len(ctx.s.devices) != 1 {
					b.Skip("the peer asks what a context of one device is asked")
				}
				peer, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, testutil.BuildLaunchPeer(b))
				require.NoError(b, err)
				cl, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, clapi.SONAMEs...)
				require.NoError(b, err)
				var query, getExt ffi.Fn
				require.NoError(b, peer.Resolve(ffi.Required(&query, "peer_cl_alloc_info")))
				require.NoError(b, cl.Resolve(ffi.Required(&getExt, "clGetExtensionFunctionAddressForPlatform")))
				name := "clGetMemAllocInfoINTEL\x00"
				info := getExt.Call2(uintptr(ctx.s.platform.id), uintptr(unsafe.Pointer(unsafe.StringData(name))))
				require.NotZero(b, info)
				b.ResetTimer()
				if rc := int32(query.Call(info, ctx.h.Raw(), a.Pointer()+100, uintptr(b.N))); rc != 0 {
					b.Fatal("clGetMemAllocInfoINTEL:", rc)
				}
			})
		}
	})
}

// The hand-off of memory a producer queue is still writing (a copy of
// 64 MiB of shared USM pending on it) to a consumer queue of the same
// context: OrderBefore (marker + barrier, the host does not wait) beside
// a host wait on the producer (clFinish, what a hand-off did before), and
// the pending copy alone. Each iteration enqueues the copy, times the
// hand-off only, and drains both queues outside the timer.
func BenchmarkOrderBefore(b *testing.B) {
	benchEach(b, func(b *testing.B, r rt) {
		const n = 64 << 20
		p, err := r.ctx.newQueue(r.dev)
		require.NoError(b, err)
		defer p.Close()
		c, err := r.ctx.newQueue(r.dev)
		require.NoError(b, err)
		defer c.Close()
		var bufs [2]uintptr
		for i := range bufs {
			a, err := r.b.Alloc(r.local, usm.KindShared, n)
			require.NoError(b, err)
			defer a.Free()
			clear(a.Bytes()) // fault the pages in before timing
			bufs[i] = a.Pointer()
		}
		pending := func(b *testing.B) {
			if err := p.copyAsync(r, bufs[0], bufs[1], n); err != nil {
				b.Fatal(err)
			}
		}
		drain := func(b *testing.B) {
			if err := p.Wait(); err != nil {
				b.Fatal(err)
			}
			if err := c.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		for _, m := range []struct {
			name    string
			timed   bool // the pending work's enqueue is timed too
			handoff func() error
		}{
			{"pending-work-alone", true, p.Wait},
			{"order-on-device", false, func() error { return p.OrderBefore(c) }},
			{"host-wait", false, p.Wait},
		} {
			b.Run(m.name, func(b *testing.B) {
				for b.Loop() {
					if !m.timed {
						b.StopTimer()
					}
					pending(b)
					b.StartTimer()
					if err := m.handoff(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					drain(b)
					b.StartTimer()
				}
			})
		}
	})
}

// libcMemcpy is the C library's memcpy, the peer of large host copies
// (called through purego, whose ~100 ns is nothing beside a MiB).
func libcMemcpy(b *testing.B) uintptr {
	memcpyOnce.Do(func() {
		lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, "libc.so.6")
		if err == nil {
			var fn ffi.Fn
			fn, err = lib.Lookup("memcpy")
			memcpyFn = uintptr(fn)
		}
		memcpyErr = err
	})
	if memcpyErr != nil {
		b.Skip("no libc memcpy:", memcpyErr)
	}
	return memcpyFn
}

var (
	memcpyOnce sync.Once
	memcpyFn   uintptr
	memcpyErr  error
)

// The fixed cost of a small copy: Backend.Copy of 4 KiB beside the
// runtime's own enqueue of the same copy followed by clFinish, host ->
// shared on each runtime and device -> host on Intel's (USM).
func BenchmarkCopyFixedCost(b *testing.B) {
	const n = 4 << 10
	benchEach(b, func(b *testing.B, r rt) {
		shared, err := r.b.Alloc(r.local, usm.KindShared, n)
		require.NoError(b, err)
		defer shared.Free()
		src := make([]byte, n)
		b.Run("host-to-shared/runtime-enqueue-finish", func(b *testing.B) {
			for b.Loop() {
				var err error
				if r.mem == usmMemory {
					err = r.q.memcpy(false, shared.Pointer(), addr(src), n)
				} else {
					err = r.q.svmMemcpy(false, shared.Pointer(), addr(src), n)
				}
				if err == nil {
					err = r.q.Wait()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("host-to-shared/backend", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := r.b.Copy(shared.Pointer(), addr(src), n); err != nil {
					b.Fatal(err)
				}
			}
		})
		if r.mem != usmMemory {
			return
		}
		dev, err := r.b.Alloc(r.local, usm.KindDevice, n)
		require.NoError(b, err)
		defer dev.Free()
		host, err := r.b.Alloc(r.local, usm.KindHost, n)
		require.NoError(b, err)
		defer host.Free()
		b.Run("device-to-host/runtime-enqueue-finish", func(b *testing.B) {
			for b.Loop() {
				err := r.q.memcpy(false, host.Pointer(), dev.Pointer(), n)
				if err == nil {
					err = r.q.Wait()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("device-to-host/backend", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := r.b.Copy(host.Pointer(), dev.Pointer(), n); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
