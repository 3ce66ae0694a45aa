package levelzero

import (
	"testing"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// The benchmarks run against the fake driver through the real loader, so
// they measure usmbridge's overhead (FFI, locking, argument marshalling)
// and the loader's dispatch, not a GPU. Each has its baseline beside it in
// the same run; compare ratios, not absolute numbers.

func BenchmarkQueryPointer(b *testing.B) {
	be := newBackend(b)
	a, err := be.Alloc(0, usm.KindShared, 4096)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Free()
	p := a.Pointer() + 100
	b.Run("levelzero.Backend.QueryPointer", func(b *testing.B) {
		for b.Loop() {
			if be.QueryPointer(p).Kind != usm.KindShared {
				b.Fatal("wrong kind")
			}
		}
	})
	ctx, _ := be.Context(0)
	b.Run("raw-zeMemGetAllocProperties", func(b *testing.B) {
		// One typed call into the loader: the floor of what a query can
		// cost from Go.
		h := zeapi.Context(ctx.h.Raw())
		for b.Loop() {
			if _, err := api.MemAllocProperties(h, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	host := new(cpu.Backend)
	ha, err := host.AllocHost(4096)
	if err != nil {
		b.Fatal(err)
	}
	defer ha.Free()
	b.Run("cpu.Backend.QueryPointer", func(b *testing.B) {
		// Pure Go lookup: what a query costs without any FFI.
		for b.Loop() {
			if host.QueryPointer(ha.Pointer()+100).Kind != usm.KindHost {
				b.Fatal("wrong kind")
			}
		}
	})
}

func BenchmarkCopy(b *testing.B) {
	be := newBackend(b)
	for _, size := range []struct {
		name string
		n    uintptr
	}{{"1MiB", 1 << 20}, {"16MiB", 16 << 20}} {
		src, err := be.Alloc(0, usm.KindShared, size.n)
		if err != nil {
			b.Fatal(err)
		}
		dst, err := be.Alloc(0, usm.KindDevice, size.n)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(size.name+"/levelzero.Backend.Copy", func(b *testing.B) {
			b.SetBytes(int64(size.n))
			for b.Loop() {
				if err := be.Copy(dst.Pointer(), src.Pointer(), size.n); err != nil {
					b.Fatal(err)
				}
			}
		})
		gs, gd := make([]byte, size.n), make([]byte, size.n)
		b.Run(size.name+"/go-copy", func(b *testing.B) {
			b.SetBytes(int64(size.n))
			for b.Loop() {
				copy(gd, gs)
			}
		})
		src.Free()
		dst.Free()
	}
}

func BenchmarkSync(b *testing.B) {
	be := newBackend(b)
	ctx, _ := be.Context(0)
	dev := be.devs[0].dev
	rq, err := api.CommandQueueCreate(zeapi.Context(ctx.Native()), dev.h, zeapi.QueueModeDefault)
	if err != nil {
		b.Fatal(err)
	}
	defer api.CommandQueueDestroy(rq)
	il, err := newImmediateList(ctx, dev, zeapi.QueueModeDefault)
	if err != nil {
		b.Fatal(err)
	}
	defer il.Close()
	nq, _ := ctx.UnsafeBorrowQueue(uintptr(rq))
	defer nq.Close()
	nl, _ := ctx.UnsafeBorrowImmediateList(il.Native())
	defer nl.Close()

	b.Run("raw-zeCommandQueueSynchronize", func(b *testing.B) {
		for b.Loop() {
			_ = api.CommandQueueSynchronize(rq, zeapi.Infinite)
		}
	})
	b.Run("native-queue.Wait", func(b *testing.B) {
		for b.Loop() {
			if err := nq.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	name := "native-immediate-list.Wait(barrier+event)"
	if api.HasCommandListHostSynchronize() {
		name = "native-immediate-list.Wait(zeCommandListHostSynchronize)"
	}
	b.Run(name, func(b *testing.B) {
		for b.Loop() {
			if err := nl.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("backend-queue.Wait", func(b *testing.B) {
		bq, _ := be.Queue(0)
		for b.Loop() {
			if err := bq.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
