package opencl

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/hugepage"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// The USM layer on the Intel runtime; on PoCL 3.1 it must say "not
// supported" instead of calling NULL entry points.
func TestUSMContext(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		ctx := r.ctx
		if r.mem != usmMemory {
			_, err := ctx.usmAlloc(memHost, nil, 64, 0)
			assert.ErrorIs(t, err, usm.ErrNotSupported)
			assert.ErrorIs(t, r.q.memcpy(true, 1, 2, 3), usm.ErrNotSupported)
			info, err := ctx.allocInfo(0x1000)
			require.NoError(t, err)
			assert.Equal(t, uint32(memUnknown), info.typ)
			return
		}
		const size = 4096
		for _, tc := range []struct {
			name  string
			typ   uint32
			dev   *device
			align uint32
		}{
			{"host", memHost, nil, 0},
			{"device", memDevice, r.dev, 64},
			{"shared", memShared, r.dev, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p, err := ctx.usmAlloc(tc.typ, tc.dev, size, tc.align)
				require.NoError(t, err)
				for _, q := range []uintptr{p, p + 100, p + size - 1} {
					info, err := ctx.allocInfo(q)
					require.NoError(t, err)
					assert.Equal(t, allocInfo{typ: tc.typ, base: p, size: size, dev: tc.dev}, info, "%#x", q)
				}
				// Fill with the runtime, read back through a blocking copy
				// into Go memory.
				require.NoError(t, r.q.memFill(p, []byte{0xab, 0xcd}, size, false))
				got := make([]byte, size)
				require.NoError(t, r.q.memcpy(true, addr(got), p, size))
				assert.Equal(t, bytes.Repeat([]byte{0xab, 0xcd}, size/2), got)
				sevens := bytes.Repeat([]byte{7}, size)
				require.NoError(t, r.q.memcpy(false, p, addr(sevens), size))
				require.NoError(t, r.q.Wait())
				require.NoError(t, r.q.memcpy(true, addr(got), p, size))
				assert.Equal(t, sevens, got)

				assert.ErrorIs(t, ctx.memBlockingFree(p+1), usm.ErrValue, "interior pointer")
				require.NoError(t, ctx.memBlockingFree(p))
				assert.ErrorIs(t, ctx.memBlockingFree(p), usm.ErrValue, "double free")
				info, err := ctx.allocInfo(p)
				require.NoError(t, err)
				assert.Equal(t, uint32(memUnknown), info.typ, "freed memory is unknown")
			})
		}
		t.Run("bad input", func(t *testing.T) {
			_, err := ctx.usmAlloc(memHost, nil, 0, 0)
			assert.ErrorIs(t, err, InvalidBufferSize, "size 0")
			assert.ErrorIs(t, err, usm.ErrValue)
			_, err = ctx.usmAlloc(memShared, r.dev, 64, 3)
			assert.Error(t, err, "alignment not a power of two")
			_, err = ctx.usmAlloc(memDevice, nil, 64, 0)
			assert.ErrorIs(t, err, usm.ErrValue)
			goMem := make([]byte, 64)
			for _, p := range []uintptr{addr(goMem), 1, 0x1000, ^uintptr(0) &^ 0xfff} {
				info, err := ctx.allocInfo(p)
				require.NoError(t, err)
				assert.Equal(t, uint32(memUnknown), info.typ, "%#x", p)
			}
			assert.ErrorIs(t, ctx.memBlockingFree(addr(goMem)), usm.ErrValue)
			assert.ErrorIs(t, ctx.free(0), usm.ErrValue)
			assert.ErrorIs(t, r.q.memFill(0, nil, 8, false), usm.ErrValue)
		})
	})
}

// SVM on both runtimes (Intel's CPU device has fine-grain SVM too).
func TestSVMContext(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		if !r.dev.hasFineGrainSVM() {
			t.Skip("no fine-grain SVM")
		}
		const size = 1 << 16
		p, err := r.ctx.svmAlloc(r.dev, size, 0)
		require.NoError(t, err)
		info, err := r.ctx.allocInfo(p + size/2)
		require.NoError(t, err)
		assert.Equal(t, allocInfo{typ: memShared, base: p, size: size, dev: r.dev, svm: true}, info)
		assert.Equal(t, usm.PointerInfo{Kind: usm.KindShared, Device: r.local, Base: p, Size: size}, r.ctx.QueryPointer(p+1))

		require.NoError(t, r.q.memFill(p, []byte{1, 2, 3, 4}, size, true))
		require.NoError(t, r.q.Wait())
		// Fine-grain: the host reads it directly.
		assert.Equal(t, bytes.Repeat([]byte{1, 2, 3, 4}, size/4), cmem.Bytes(p, size))
		src := bytes.Repeat([]byte{9}, size)
		require.NoError(t, r.q.svmMemcpy(true, p, addr(src), size))
		assert.Equal(t, src, cmem.Bytes(p, size))

		_, err = r.ctx.svmAlloc(r.dev, 0, 0)
		assert.ErrorIs(t, err, InvalidBufferSize)
		assert.ErrorIs(t, r.ctx.svmFree(p+8), usm.ErrValue, "interior pointer")
		require.NoError(t, r.ctx.svmFree(p))
		assert.ErrorIs(t, r.ctx.svmFree(p), usm.ErrValue, "double free")
		assert.ErrorIs(t, r.ctx.free(p), usm.ErrValue, "double free")
	})
}

func TestBackendAllocQueryCopy(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		b := r.b
		const size = 1 << 20
		for _, tc := range []struct {
			ask, want usm.Kind
		}{
			{usm.KindHost, usm.KindHost},
			{usm.KindDevice, usm.KindDevice},
			{usm.KindShared, usm.KindShared},
		} {
			if r.mem == svmMemory {
				tc.want = usm.KindShared // SVM serves every kind as shared
			}
			t.Run(tc.ask.String(), func(t *testing.T) {
				a, err := b.Alloc(r.local, tc.ask, size)
				require.NoError(t, err)
				assert.Equal(t, tc.want, a.Kind())
				assert.Equal(t, r.local, a.Device())
				p := a.Pointer()
				for _, q := range []uintptr{p, p + 1, p + size - 1} {
					info := b.QueryPointer(q)
					assert.Equal(t, usm.PointerInfo{Kind: tc.want, Device: r.local, Base: p, Size: size}, info, "%#x", q)
				}
				assert.Equal(t, usm.KindUnknown, b.QueryPointer(p+size+4096).Kind)

				src := make([]byte, size)
				for i := range src {
					src[i] = byte(i * 7)
				}
				require.NoError(t, b.Copy(p, addr(src), size))
				if tc.want.HostAccessible() {
					assert.Equal(t, src, a.Bytes())
				} else {
					assert.Nil(t, a.Bytes())
				}
				got := make([]byte, size)
				require.NoError(t, b.Copy(addr(got), p, size))
				assert.Equal(t, src, got)
				// Interior, partial copies.
				require.NoError(t, b.Copy(addr(got), p+10, 100))
				assert.Equal(t, src[10:110], got[:100])

				assert.ErrorIs(t, b.Copy(p+1, addr(src), size), usm.ErrValue, "overrun")
				assert.ErrorIs(t, b.Copy(addr(got), p, size+1), usm.ErrValue, "overrun")
				assert.ErrorIs(t, b.Copy(0, p, 1), usm.ErrValue)
				assert.NoError(t, b.Copy(0, 0, 0), "nothing to copy")

				require.NoError(t, a.Free())
				assert.ErrorIs(t, a.Free(), usm.ErrValue, "double free")
				assert.Equal(t, usm.KindUnknown, b.QueryPointer(p).Kind, "freed")
			})
		}
		t.Run("bad input", func(t *testing.T) {
			a, err := b.Alloc(r.local, usm.KindShared, 0)
			require.NoError(t, err, "size 0 gives a valid pointer")
			assert.NotZero(t, a.Pointer())
			assert.Zero(t, a.Size())
			assert.NotEqual(t, usm.KindUnknown, b.QueryPointer(a.Pointer()).Kind)
			require.NoError(t, a.Free())

			_, err = b.Alloc(len(b.Devices()), usm.KindShared, 8)
			assert.ErrorIs(t, err, usm.ErrValue)
			_, err = b.Alloc(-1, usm.KindShared, 8)
			assert.ErrorIs(t, err, usm.ErrValue)
			_, err = b.Alloc(r.local, usm.KindUnknown, 8)
			assert.ErrorIs(t, err, usm.ErrValue)

			goMem := make([]byte, 64)
			for _, p := range []uintptr{0, 1, addr(goMem), ^uintptr(0)} {
				assert.Equal(t, usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}, b.QueryPointer(p), "%#x", p)
			}
			other := make([]byte, 64)
			assert.ErrorIs(t, b.Copy(addr(other), addr(goMem), 64), usm.ErrValue, "neither side is OpenCL memory")
			_, err = b.Queue(99)
			assert.ErrorIs(t, err, usm.ErrValue)
			_, err = b.Context(-1)
			assert.ErrorIs(t, err, usm.ErrValue)
		})
	})
}

// Allocation, query, copy and free from many goroutines (run with -race).
func TestBackendConcurrent(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 8 {
			wg.Go(func() {
				for i := range 20 {
					a, err := r.b.Alloc(r.local, usm.KindShared, uintptr(4096+g*64+i))
					if err != nil {
						errs <- err
						return
					}
					buf := bytes.Repeat([]byte{byte(g)}, 4096)
					if err := r.b.Copy(a.Pointer(), addr(buf), 4096); err != nil {
						errs <- err
					}
					if info := r.b.QueryPointer(a.Pointer() + 17); info.Base != a.Pointer() {
						errs <- assert.AnError
					}
					if q, err := r.b.Queue(r.local); err != nil || q.Wait() != nil {
						errs <- assert.AnError
					}
					if err := a.Free(); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// Close of a backend while other goroutines allocate, copy and free
// through it (run with -race); TestMain checks that nothing leaked.
func TestBackendCloseWhileBusy(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		b, err := New()
		require.NoError(t, err)
		testutil.CloseWhileBusy(t, b, r.local)
	})
}

// TestBackendCPUAllocationsAskForHugePages: on a CPU device, USM of every
// kind the device serves carries MADV_HUGEPAGE on the huge pages wholly
// inside it from hugepage.Threshold on. (That smaller allocations are not
// advised is internal/hugepage's and the host backend's test: a runtime
// that recycles freed memory, as PoCL's malloc does, may hand out memory
// an earlier large allocation had advised.)
func TestBackendCPUAllocationsAskForHugePages(t *testing.T) {
	if _, err := hugepage.Advised(uintptr(unsafe.Pointer(&t))); err != nil {
		t.Skip("the kernel's advice cannot be read here: ", err)
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("kernel without transparent huge pages: ", err)
	}
	each(t, func(t *testing.T, r rt) {
		for _, kind := range []usm.Kind{usm.KindHost, usm.KindShared, usm.KindDevice} {
			for _, size := range []uintptr{hugepage.Threshold, 8<<20 + 4096} {
				a, err := r.b.Alloc(r.local, kind, size)
				if errors.Is(err, usm.ErrNotSupported) {
					continue
				}
				require.NoError(t, err)
				lo, n := hugepage.Span(a.Pointer(), size)
				require.NotZero(t, n)
				for _, p := range []uintptr{lo, lo + n - 1} {
					got, err := hugepage.Advised(p)
					require.NoError(t, err)
					assert.True(t, got, "%v, %d bytes, at 0x%x", kind, size, p)
				}
				require.NoError(t, a.Free())
			}
		}
	})
}

// QueryPointer answers for memory the backend allocated from the facts
// clGetMemAllocInfoINTEL gave when it was made (allocRec.queried); they
// must be what the runtime still reports, at the base and inside, and must
// go with the allocation.
func TestQueryPointerCacheAgreesWithRuntime(t *testing.T) {
	r := find(t, runtimes[1]) // the runtime with USM queries
	ctx := r.b.devs[r.local].plat.ctx
	for _, kind := range []usm.Kind{usm.KindHost, usm.KindDevice, usm.KindShared} {
		t.Run(kind.String(), func(t *testing.T) {
			a, err := r.b.Alloc(r.local, kind, 1000)
			require.NoError(t, err)
			for _, off := range []uintptr{0, 1, 999} {
				p := a.Pointer() + off
				rec, ok := ctx.s.find(p)
				require.True(t, ok)
				require.True(t, rec.known, "the allocation's facts were queried when it was made")
				id, err := ctx.h.RLock("test")
				require.NoError(t, err)
				mi, err := ctx.s.platform.usmFuncs().MemAllocInfo(clapi.Context(id), p, true)
				ctx.h.RUnlock()
				require.NoError(t, err)
				full := allocInfo{typ: mi.Type, base: mi.Base, size: mi.Size, dev: findDevice(mi.Device)}
				require.Equal(t, full, rec.queried)
				// A foreign pointer's query, which leaves out the device
				// query in a context of one device, must find the same.
				require.Len(t, ctx.s.devices, 1)
				asked, err := ctx.runtimeInfo(p)
				require.NoError(t, err)
				require.Equal(t, full, asked)
				got := r.b.QueryPointer(p)
				require.Equal(t, kind, got.Kind)
				require.Equal(t, mi.Base, got.Base)
				require.Equal(t, mi.Size, got.Size)
			}
			p := a.Pointer()
			require.NoError(t, a.Free())
			_, ok := ctx.s.find(p)
			require.False(t, ok, "the facts go with the allocation")
		})
	}
}
