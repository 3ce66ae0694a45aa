package usm

import (
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/refcount"
	"github.com/usmbridge/usmbridge/internal/spans"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// Kind is the USM allocation kind of a pointer, as SYCL reports it.
type Kind uint8

const (
	KindUnknown Kind = iota // not an allocation of this backend/context
	KindHost                // host memory, accessible from host and devices
	KindDevice              // device memory, not host-accessible
	KindShared              // migrates between host and device; host-accessible
)

var kindNames = [...]string{"unknown", "host", "device", "shared"}

// String returns dpctl's usm_type name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// HostAccessible reports whether the host may read and write the memory
// directly (after synchronising the queues that use it).
func (k Kind) HostAccessible() bool { return k == KindHost || k == KindShared }

// PointerInfo is what a backend knows about a pointer.
type PointerInfo struct {
	Kind   Kind
	Device int     // backend-local device index; -1 if none (host memory) or unknown
	Base   uintptr // start of the containing allocation; 0 if the runtime cannot tell
	Size   uintptr // size of the containing allocation; meaningful only if Base != 0
}

// HasExtent reports whether Base and Size describe the containing allocation.
func (p PointerInfo) HasExtent() bool { return p.Base != 0 }

// Backend is a source of USM memory: usmbridge's cpu backend, OpenCL, Level
// Zero, dpctl's runtime, or a backend written outside this module. Every
// method is safe for concurrent use.
//
// What the registry, the typed copies and dlpack ask of a backend beyond
// this interface is found by method name (as io.Copy finds WriterTo); a
// backend offers what its runtime can:
//
//	Alloc(device int, kind Kind, size uintptr) (*Allocation, error)          // Allocator; wrap with NewAllocation
//	Copy(dst, src, n uintptr) error                                           // typed and DLPack copies; returns when done
//	Queue(device int) (Queue, error)                                          // the queue arrays on the device get
//	QueryPointerInContextOf(ptr uintptr, device int) PointerInfo              // devices with contexts of their own
//	BindRef(ref syclobj.Obj, ptr uintptr) (PointerInfo, Queue, bool, error)   // SYCL context and queue refs
//	DLPackDevice(device int) (DLDevice, error)                                // its own kDLOneAPI numbering,
//	LocalDevice(d DLDevice) (device int, ok bool)                             // and its inverse
//	DescribeDevice(device int) Device                                         // vendor, platform, USM kinds, programs (Device)
//
// and its queues may have OrderBefore(consumer Queue) error, which Order
// uses, Idle() bool, true when no work can ever be pending on the queue (a
// host queue that finishes every command before it returns): an export of
// an array bound to it need not wait (pyext's Arrays then export in C
// alone), and BuildProgram(src ProgramSource) (Program, error), which
// BuildProgram uses: the queue's runtime builds programs for its context
// and device, whose kernels run on its queues (kernel.go). Each method's contract is documented where usm asserts it (the
// unexported interfaces of backend.go and order.go).
type Backend interface {
	// Name is the backend as filter selectors name it.
	Name() syclobj.Backend
	// Devices lists the backend's root devices in backend order.
	Devices() []syclobj.Device
	// QueryPointer classifies ptr. It never crashes on foreign pointers:
	// memory the backend does not know is KindUnknown.
	QueryPointer(ptr uintptr) PointerInfo
}

// Allocator is implemented by backends that can allocate.
type Allocator interface {
	// Alloc returns size bytes of the given kind on a backend-local device
	// (for KindHost, the device whose context the memory belongs to).
	Alloc(device int, kind Kind, size uintptr) (*Allocation, error)
}

// copier is implemented by backends that can copy between their pointers
// and host memory (every backend of this module): the typed copies use it.
// Copy returns when the bytes have arrived. The optional interfaces are
// unexported and declared where they are asserted: a backend has them by
// its methods (RATIONALE.md, "A public API sized to its users");
// backends_test.go checks each backend of the module against them.
type copier interface {
	Copy(dst, src, n uintptr) error
}

// Queue is something that can be waited on: a SYCL queue, an OpenCL command
// queue, a Level Zero queue or immediate command list.
type Queue interface {
	// Wait returns when all work submitted to the queue has completed.
	Wait() error
}

// queueProvider is implemented by backends that have a default queue per
// device, which binding gives arrays so that export can synchronise before
// handing memory out.
type queueProvider interface {
	Queue(device int) (Queue, error)
}

// refBinder is implemented by backends that understand SYCL context and
// queue references (the dpctl backend). BindRef checks that ptr is a USM
// pointer of the context ref names, with dpctl's rules, and reports which
// device and queue the memory then belongs to. ok is false if the backend
// does not recognise ref at all.
type refBinder interface {
	BindRef(ref syclobj.Obj, ptr uintptr) (info PointerInfo, q Queue, ok bool, err error)
}

// contextQuerier is implemented by backends whose devices do not all
// share one context (OpenCL: one per platform; Level Zero: one per
// driver; dpctl: each device's cached default context). It classifies
// ptr in the context that device's memory belongs to, which is the
// context a filter selector naming the device binds to, as dpctl's
// SyclQueue(filter) does: KindUnknown when that context does not know
// ptr, even if another context of the backend does. A backend without it
// has one context for all its devices, and QueryPointer answers for it.
type contextQuerier interface {
	QueryPointerInContextOf(ptr uintptr, device int) PointerInfo
}

// dlpackDevicer is implemented by backends whose kDLOneAPI device ids are
// not the registry's global index (the dpctl backend numbers devices as
// sycl::device::get_devices() does).
type dlpackDevicer interface {
	DLPackDevice(device int) (DLDevice, error)
	// LocalDevice maps a kDLOneAPI device back; ok is false if the id is
	// not one of this backend's devices.
	LocalDevice(d DLDevice) (device int, ok bool)
}

// Owner keeps memory alive. Retain adds a reference and reports false if the
// memory is already gone; Release drops one. Release must be safe to call
// from any goroutine or foreign thread.
type Owner interface {
	Retain() bool
	Release()
}

// Allocation is USM memory allocated through a backend. It is reference
// counted: Free drops the owner's reference, and the memory is returned to
// the backend when the last reference (e.g. a DLPack export) is released.
type Allocation struct {
	ptr, size uintptr
	kind      Kind
	device    int
	backend   Backend
	free      func() error
	refs      refcount.Count
	freed     atomic.Bool // Free has been called
	freeErr   atomic.Pointer[error]
	listed    bool // in owners (see NewAllocation)
}

// NewAllocation is how a backend hands out memory it allocated: size
// bytes at ptr, of the given kind, on the backend-local device (-1 for
// none), which free returns to the backend. A backend's Alloc method
// calls it, and so does a backend written outside this module; a program
// binding memory it got some other way uses Registry.Bind and sets the
// array's Owner itself.
//
// The Allocation holds one reference, which Free drops; free is called
// exactly once, when the last reference goes (an export may hold one
// after Free), and its error is Free's when Free dropped the last one.
// While it is live the allocation is listed under b (a non-nil,
// comparable Backend, such as a pointer), so that Registry.Parse and Bind
// make it the Owner of arrays whose pointer lies in it: b's QueryPointer
// must then report ptr..ptr+size as b's memory.
func NewAllocation(b Backend, ptr, size uintptr, kind Kind, device int, free func() error) *Allocation {
	a := &Allocation{ptr: ptr, size: size, kind: kind, device: device, backend: b, free: free}
	a.refs.Init()
	a.listed = owners.add(a)
	return a
}

// owners lists the live allocations of each backend by address: what
// Registry.Parse and Bind consult to find who keeps a pointer's memory
// alive (see Array.Owner).
var owners ownerTable

type ownerTable struct {
	mu  sync.RWMutex
	byB map[Backend]*spans.Set[ownerSpan]
}

type ownerSpan struct{ a *Allocation }

func (s ownerSpan) Span() (base, size uintptr) { return s.a.ptr, s.a.size }

// add lists a; false (not listed) for a nil or non-comparable backend, or
// memory that overlaps an allocation already listed for the backend (a
// backend that wraps the same memory twice: neither is then a safe answer
// for the overlap, and the first stays).
func (t *ownerTable) add(a *Allocation) bool {
	if a.backend == nil || !reflect.TypeOf(a.backend).Comparable() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	set := t.byB[a.backend]
	if set == nil {
		if t.byB == nil {
			t.byB = map[Backend]*spans.Set[ownerSpan]{}
		}
		set = &spans.Set[ownerSpan]{}
		t.byB[a.backend] = set
	}
	if _, ok := set.Find(a.ptr); ok {
		return false
	}
	if _, ok := set.Find(a.ptr + max(a.size, 1) - 1); ok {
		return false
	}
	set.Insert(ownerSpan{a})
	return true
}

// remove unlists a before its memory goes back to the backend, so that no
// lookup finds it once the address can be reused.
func (t *ownerTable) remove(a *Allocation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if set := t.byB[a.backend]; set != nil {
		set.Remove(a.ptr)
	}
}

// find returns b's live allocation containing ptr, or nil.
func (t *ownerTable) find(b Backend, ptr uintptr) *Allocation {
	if b == nil || !reflect.TypeOf(b).Comparable() {
		return nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if set := t.byB[b]; set != nil {
		if s, ok := set.Find(ptr); ok {
			return s.a
		}
	}
	return nil
}

// Pointer returns the allocation's base address.
func (a *Allocation) Pointer() uintptr { return a.ptr }

// Size returns the size in bytes that was asked for.
func (a *Allocation) Size() uintptr { return a.size }

// Kind returns the USM kind.
func (a *Allocation) Kind() Kind { return a.kind }

// Device returns the backend-local device the memory was allocated on, or
// -1 where the runtime binds host memory to no device.
func (a *Allocation) Device() int { return a.device }

// Backend returns the backend that owns the memory.
func (a *Allocation) Backend() Backend { return a.backend }

// Bytes returns the memory as a byte slice for host-accessible kinds, nil
// otherwise. The slice is valid until the allocation is released; it points
// outside the Go heap.
func (a *Allocation) Bytes() []byte {
	if !a.kind.HostAccessible() || a.size == 0 {
		return nil
	}
	return cmem.Bytes(a.ptr, a.size)
}

// Retain adds a reference; false if the memory has already been returned.
func (a *Allocation) Retain() bool { return a.refs.Retain() }

// Release drops a reference and frees the memory when none remain.
func (a *Allocation) Release() {
	if a.refs.Release() {
		if a.listed {
			owners.remove(a)
		}
		if err := a.free(); err != nil {
			a.freeErr.Store(&err)
		}
	}
}

// Free gives up the owner's reference. Memory still referenced by exports
// stays valid until they are released. A second Free is an ErrValue error;
// an error from the backend's free is returned if it ran now.
func (a *Allocation) Free() error {
	if !a.freed.CompareAndSwap(false, true) {
		return errkind.New(errkind.Value, "usm.Allocation.Free", "allocation at "+hex(a.ptr)+" was already freed")
	}
	a.Release()
	if p := a.freeErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Live reports whether the memory has not been returned yet.
func (a *Allocation) Live() bool { return a.refs.Live() }

func hex(p uintptr) string { return "0x" + strconv.FormatUint(uint64(p), 16) }
