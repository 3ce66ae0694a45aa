package cpu

import (
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/hugepage"
	"github.com/usmbridge/usmbridge/internal/live"
	"github.com/usmbridge/usmbridge/internal/spans"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// Backend is the host backend. Programs use Default, the process's one,
// which pybridge also gives dlpack.Export for host copies; new(Backend) is an empty host backend
// of its own (its own allocations and pointer ownership, as the module's
// tests use for isolation), ready to use.
type Backend struct {
	mu      sync.RWMutex
	regions spans.Set[region]
	bytes   uintptr // sum of region sizes
}

type region struct {
	base, size uintptr
	mapping    []byte // for munmap
}

func (r region) Span() (base, size uintptr) { return r.base, r.size }

var (
	_ usm.Backend   = (*Backend)(nil)
	_ usm.Allocator = (*Backend)(nil)
	// Copy and Queue serve the usm registry, typed copies and dlpack:
	// usm's backends_test.go checks them against the interfaces there.
)

// Default returns the process-wide host backend.
var Default = sync.OnceValue(func() *Backend { return new(Backend) })

// Name returns syclobj.Host.
func (b *Backend) Name() syclobj.Backend { return syclobj.Host }

// deviceName is the name of the backend's one device (Devices()[0].Name).
const deviceName = "usmbridge host (mmap)"

// Devices returns the backend's single host device.
func (b *Backend) Devices() []syclobj.Device {
	return []syclobj.Device{{Backend: syclobj.Host, Type: syclobj.HostDevice, Name: deviceName}}
}

// DescribeDevice says what the host device is, for usm.Registry's Device
// values: memory of every kind is served as host memory (KindHost), and
// no program builds (its memory is computed on in Go).
func (b *Backend) DescribeDevice(device int) usm.Device {
	if device != 0 {
		return usm.Device{}
	}
	return usm.Device{Vendor: "usmbridge", Platform: "usmbridge host", USM: []usm.Kind{usm.KindHost}}
}

// QueryPointer reports KindHost with the allocation's base and size for any
// pointer into a live allocation of b (interior pointers included), and
// KindUnknown otherwise.
func (b *Backend) QueryPointer(ptr uintptr) usm.PointerInfo {
	b.mu.RLock()
	r, ok := b.regions.Find(ptr)
	b.mu.RUnlock()
	if !ok {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	return usm.PointerInfo{Kind: usm.KindHost, Device: 0, Base: r.base, Size: r.size}
}

// Alloc maps size bytes of zeroed host memory. Every kind is served with
// host memory, which the allocation reports as usm.KindHost. A size of 0
// still returns a distinct valid pointer, as dpctl requires of empty arrays.
// An allocation of hugepage.Threshold (4 MiB) or more is advised to use
// transparent huge pages, NumPy's rule for its arrays.
func (b *Backend) Alloc(device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	if device != 0 {
		return nil, errkind.New(errkind.Value, "cpu.Alloc", "no device "+strconv.Itoa(device)+" (the host backend has device 0 only)")
	}
	if size > 1<<47 {
		return nil, errkind.New(errkind.Memory, "cpu.Alloc", "size "+strconv.FormatUint(uint64(size), 10)+" exceeds the address space")
	}
	m, err := syscall.Mmap(-1, 0, int(max(size, 1)), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, errkind.Wrap(errkind.Memory, "cpu.Alloc", "mmap of "+strconv.FormatUint(uint64(size), 10)+" bytes failed", err)
	}
	r := region{base: uintptr(unsafe.Pointer(&m[0])), size: size, mapping: m}
	// Large allocations get huge pages, as NumPy's arrays do (the advice
	// is only a hint: memory the kernel cannot back with them is as valid).
	_ = hugepage.Advise(r.base, size)
	b.mu.Lock()
	b.regions.Insert(r)
	b.bytes += size
	b.mu.Unlock()
	liveAllocations.Add(1)
	liveBytes.Add(int64(size))
	return usm.NewAllocation(b, r.base, size, usm.KindHost, 0, func() error { return b.free(r.base) }), nil
}

// AllocHost is Alloc(0, usm.KindHost, size).
func (b *Backend) AllocHost(size uintptr) (*usm.Allocation, error) {
	return b.Alloc(0, usm.KindHost, size)
}

func (b *Backend) free(base uintptr) error {
	b.mu.Lock()
	r, found := b.regions.Remove(base)
	if !found {
		b.mu.Unlock()
		return errkind.New(errkind.Value, "cpu.Free", "pointer 0x"+strconv.FormatUint(uint64(base), 16)+" is not an allocation of this backend")
	}
	b.bytes -= r.size
	b.mu.Unlock()
	liveAllocations.Add(-1)
	liveBytes.Add(-int64(r.size))
	if err := syscall.Munmap(r.mapping); err != nil {
		return errkind.Wrap(errkind.Value, "cpu.Free", "munmap failed", err)
	}
	return nil
}

// Copy copies n bytes between host pointers (overlap allowed). Both ranges
// must be non-NULL, and a range that starts in an allocation of b must end
// in it (an error otherwise); the backend cannot check memory it did not
// allocate.
func (b *Backend) Copy(dst, src, n uintptr) error {
	if n == 0 {
		return nil
	}
	if dst == 0 || src == 0 {
		return errkind.New(errkind.Value, "cpu.Copy", "NULL pointer")
	}
	for _, p := range [...]uintptr{dst, src} {
		b.mu.RLock()
		r, ok := b.regions.Find(p)
		b.mu.RUnlock()
		if ok && !spans.Holds(r.base, r.size, p, n) {
			return errkind.New(errkind.Value, "cpu.Copy", strconv.FormatUint(uint64(n), 10)+" bytes at 0x"+strconv.FormatUint(uint64(p), 16)+
				" overrun the allocation [0x"+strconv.FormatUint(uint64(r.base), 16)+", +"+strconv.FormatUint(uint64(r.size), 10)+")")
		}
	}
	cmem.Move(dst, src, n)
	return nil
}

// Queue returns the backend's queue, which is always idle: every operation
// completes before it returns.
func (b *Backend) Queue(device int) (usm.Queue, error) {
	if device != 0 {
		return nil, errkind.New(errkind.Value, "cpu.Queue", "no device "+strconv.Itoa(device))
	}
	return syncQueue{}, nil
}

type syncQueue struct{}

func (syncQueue) Wait() error { return nil }

// String names the queue in messages (usm.BuildProgram's: it builds no
// kernels).
func (syncQueue) String() string { return "the host backend's queue (package cpu)" }

// Idle reports that no work is ever pending (usm.Backend's documentation:
// an export of an array on this queue need not wait, nor enter Go).
func (syncQueue) Idle() bool { return true }

// stats reports the live allocations of b and their total size, for this
// package's tests; Live counts those of every host backend of the process.
func (b *Backend) stats() (allocations int, bytes uintptr) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.regions.Len(), b.bytes
}

var (
	counters        = live.NewSet("cpu", "allocations", "bytes")
	liveAllocations = counters.Counter("allocations")
	liveBytes       = counters.Counter("bytes")
)

// Live returns the allocations of every host backend of the process that
// are alive ("allocations") and their total size ("bytes"). A program (or
// test) that freed everything it allocated sees only zeros.
func Live() map[string]int64 { return counters.Snapshot() }
