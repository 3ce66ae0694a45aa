// Package cmem manages memory outside the Go heap for structures that C code
// reads (DLPack tensors, shape and stride arrays): the garbage collector
// never moves or frees it, and the cgo pointer rules do not apply, so it
// can be handed to foreign code in both cgo modes.
//
// Small blocks come from size-classed free lists carved out of mmap'd
// arenas, so an allocation costs a few tens of nanoseconds and no call into
// libc; larger blocks are mapped individually. Live counters let tests prove
// that everything handed out came back.
package cmem

import (
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Ptr converts an address of memory outside the Go heap to an
// unsafe.Pointer. It must not be used for Go heap addresses.
func Ptr(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// Move copies n bytes from src to dst, both outside the Go heap (the
// ranges may overlap). It is never inlined: go1.26's compiler, lowering
// a copy between two such views inlined into a caller whose addresses it
// can relate (host.Copy(p+4, p, n)), stops with an internal compiler error
// ("disjointTypes: one of arguments is not a pointer"), which a user of a
// backend's Copy would meet as a build failure.
//
//go:noinline
func Move(dst, src, n uintptr) {
	copy(Bytes(dst, n), Bytes(src, n))
}

// Bytes views n bytes at p (outside the Go heap) as a slice.
func Bytes(p, n uintptr) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(Ptr(p)), n)
}

const (
	minClassShift = 8  // 256 B
	maxClassShift = 12 // 4 KiB
	numClasses    = maxClassShift - minClassShift + 1
	arenaSize     = 64 << 10
)

type class struct {
	mu   sync.Mutex
	free []uintptr
}

var (
	classes    [numClasses]class
	liveBlocks atomic.Int64
	liveBytes  atomic.Int64
	mapped     atomic.Int64 // bytes of arenas and large mappings
	largeMu    sync.Mutex
	large      = map[uintptr][]byte{}
)

func classOf(n uintptr) (int, uintptr) {
	size := uintptr(1) << minClassShift
	for c := 0; c < numClasses; c++ {
		if n <= size {
			return c, size
		}
		size <<= 1
	}
	return -1, 0
}

// Alloc returns n zeroed bytes outside the Go heap, or 0 if the system is
// out of memory. Free it with Free(p, n) using the same n.
func Alloc(n uintptr) uintptr {
	if n == 0 {
		n = 1
	}
	c, size := classOf(n)
	if c < 0 {
		return allocLarge(n)
	}
	cl := &classes[c]
	cl.mu.Lock()
	if len(cl.free) == 0 {
		arena, err := syscall.Mmap(-1, 0, arenaSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			cl.mu.Unlock()
			return 0
		}
		mapped.Add(arenaSize)
		base := uintptr(unsafe.Pointer(&arena[0]))
		for off := uintptr(arenaSize) - size; ; off -= size {
			cl.free = append(cl.free, base+off)
			if off == 0 {
				break
			}
		}
	}
	p := cl.free[len(cl.free)-1]
	cl.free = cl.free[:len(cl.free)-1]
	cl.mu.Unlock()
	clear(Bytes(p, size))
	liveBlocks.Add(1)
	liveBytes.Add(int64(size))
	return p
}

func allocLarge(n uintptr) uintptr {
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return 0
	}
	p := uintptr(unsafe.Pointer(&b[0]))
	largeMu.Lock()
	large[p] = b
	largeMu.Unlock()
	mapped.Add(int64(len(b)))
	liveBlocks.Add(1)
	liveBytes.Add(int64(len(b)))
	return p
}

// Free returns a block from Alloc(n).
func Free(p, n uintptr) {
	if p == 0 {
		return
	}
	if n == 0 {
		n = 1
	}
	c, size := classOf(n)
	if c < 0 {
		largeMu.Lock()
		b, ok := large[p]
		delete(large, p)
		largeMu.Unlock()
		if ok {
			liveBlocks.Add(-1)
			liveBytes.Add(-int64(len(b)))
			mapped.Add(-int64(len(b)))
			_ = syscall.Munmap(b)
		}
		return
	}
	cl := &classes[c]
	cl.mu.Lock()
	cl.free = append(cl.free, p)
	cl.mu.Unlock()
	liveBlocks.Add(-1)
	liveBytes.Add(-int64(size))
}

// Stats reports the blocks and bytes currently handed out, and the bytes
// mapped from the system (arenas are kept for reuse).
type Stats struct {
	LiveBlocks, LiveBytes, MappedBytes int64
}

// Snapshot returns the current counters.
func Snapshot() Stats {
	return Stats{LiveBlocks: liveBlocks.Load(), LiveBytes: liveBytes.Load(), MappedBytes: mapped.Load()}
}

// Permanent returns n zeroed bytes outside the Go heap that live as long as
// the process and are not counted by Snapshot: records that C code keeps
// a pointer to for ever (a table, shared counters), which leak checks must
// not mistake for a leak. It panics if the system is out of memory, which
// at the first use of such a record leaves nothing sensible to do.
func Permanent(n uintptr) uintptr {
	b, err := syscall.Mmap(-1, 0, int(max(n, 1)), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		panic("cmem: cannot map process-lifetime memory: " + err.Error())
	}
	return uintptr(unsafe.Pointer(&b[0]))
}
