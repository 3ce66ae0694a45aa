package levelzero

import (
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// Context is a ze_context_handle_t: one a Backend made, or one a SYCL
// runtime handed out (UnsafeBorrowContext). Its methods are safe for
// concurrent use, and Close waits for calls in progress.
type Context struct {
	h      ffi.Handle
	driver *driver // nil for a borrowed context
	owned  bool    // made here, destroyed by Close
	owner  *Backend
	// children counts live allocations, queues, event pools and IPC
	// mappings made or wrapped through this context: destroying the
	// context under them would leave dangling native handles.
	children atomic.Int64
	// memory counts the allocations and IPC mappings among the children.
	memory atomic.Int64
	// progs keeps the programs built in the context (program.go).
	progs progCache
}

// newContext creates a context on the driver.
func newContext(d *driver) (*Context, error) {
	h, err := api.ContextCreate(d.h)
	if err != nil {
		return nil, err
	}
	c := &Context{driver: d, owned: true}
	c.h.Init(uintptr(h), "ze_context_handle_t", liveContexts)
	return c, nil
}

// UnsafeBorrowContext wraps a ze_context_handle_t that a SYCL runtime
// handed out (sycl::get_native on a context), to classify its USM pointers
// with QueryPointer and to borrow its queues. The caller guarantees that
// raw is a live context of a driver of this process's Level Zero loader
// for as long as the Context is used, which is why the function is
// Unsafe: a wrong handle crashes the process. Close only forgets the
// handle; the runtime keeps ownership. The error matches
// usm.ErrNotAvailable when Level Zero is not available.
func UnsafeBorrowContext(raw uintptr) (*Context, error) {
	if err := initialise(); err != nil {
		return nil, err
	}
	if raw == 0 {
		return nil, errValue("levelzero.UnsafeBorrowContext", "NULL context handle")
	}
	c := &Context{}
	c.h.Init(raw, "ze_context_handle_t", nil)
	return c, nil
}

// Native returns the ze_context_handle_t, for handing to other native code
// (a SYCL runtime's make_context, for instance); 0 once closed. The handle
// stays owned by c.
func (c *Context) Native() uintptr {
	if c == nil {
		return 0
	}
	return c.h.Raw()
}

// Close destroys a context made here (zeContextDestroy) or forgets a
// borrowed one. It refuses (usm.ErrValue) while allocations, queues or IPC
// mappings of the context are alive, and for a Backend's context, which
// the Backend's Close releases. A second Close does nothing.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	if c.owner != nil {
		return errValue("levelzero.Context.Close", "the context belongs to its Backend; close the Backend instead")
	}
	return c.close()
}

func (c *Context) close() error {
	if c.h.Raw() != 0 {
		// Its programs and launch events go first: they are children.
		if err := c.progs.close(); err != nil {
			return err
		}
	}
	return c.h.Close(func(raw uintptr) error {
		if n := c.children.Load(); n != 0 {
			return errValue("levelzero.Context.Close", itoa(int(n))+" objects (allocations, queues, event pools, IPC mappings) of the context are still alive")
		}
		if !c.owned {
			return nil // the runtime that made it keeps ownership
		}
		return api.ContextDestroy(zeapi.Context(raw))
	})
}

// lock read-locks a live context and returns its handle; a nil or closed
// context never reaches C.
func (c *Context) lock(op string) (zeapi.Context, error) {
	if c == nil {
		return 0, errValue(op, "nil *levelzero.Context")
	}
	h, err := c.h.RLock(op)
	return zeapi.Context(h), err
}

func (c *Context) unlock() { c.h.RUnlock() }

// checkDevice refuses devices of another driver than the context's: their
// handles would be meaningless to it.
func (c *Context) checkDevice(op string, d *device, optional bool) (zeapi.Device, error) {
	if d == nil {
		if optional {
			return 0, nil
		}
		return 0, errValue(op, "no device")
	}
	if c.driver != nil && d.driver != c.driver {
		return 0, errValue(op, "device "+d.String()+" belongs to another driver than the context")
	}
	return d.h, nil
}

// --- memory ---

// kindOf maps a ze_memory_type_t to a USM kind. Types this package does
// not know (such as HOST_IMPORTED) are host-accessible but not owned by
// the USM allocator, so they are KindUnknown: usmbridge must not treat
// them as USM.
func kindOf(t uint32) usm.Kind {
	switch t {
	case zeapi.MemoryTypeHost:
		return usm.KindHost
	case zeapi.MemoryTypeDevice:
		return usm.KindDevice
	case zeapi.MemoryTypeShared:
		return usm.KindShared
	}
	return usm.KindUnknown
}

// alloc allocates USM of kind with the driver's default alignment
// (alignment 0) or a power of two. Host memory belongs to the context and
// takes no device; shared memory may have none.
func (c *Context) alloc(kind usm.Kind, dev *device, size, alignment uintptr) (uintptr, error) {
	const op = "levelzero.Context.alloc"
	h, err := c.lock(op)
	if err != nil {
		return 0, err
	}
	defer c.unlock()
	dh, err := c.checkDevice(op, dev, kind != usm.KindDevice)
	if err != nil {
		return 0, err
	}
	var p uintptr
	switch kind {
	case usm.KindHost:
		p, err = api.MemAllocHost(h, size, alignment)
	case usm.KindDevice:
		p, err = api.MemAllocDevice(h, dh, size, alignment)
	case usm.KindShared:
		p, err = api.MemAllocShared(h, dh, size, alignment)
	default:
		return 0, errValue(op, "cannot allocate USM of kind "+kind.String())
	}
	if err != nil {
		return 0, err
	}
	liveAllocations.Add(1)
	c.children.Add(1)
	c.memory.Add(1)
	return p, nil
}

// free returns USM to the driver (zeMemFree).
func (c *Context) free(ptr uintptr) error {
	h, err := c.lock("levelzero.Context.free")
	if err != nil {
		return err
	}
	defer c.unlock()
	if err := api.MemFree(h, ptr); err != nil {
		return err
	}
	liveAllocations.Add(-1)
	c.children.Add(-1)
	c.memory.Add(-1)
	return nil
}

// QueryPointer classifies ptr with zeMemGetAllocProperties and reports the
// containing allocation from zeMemGetAddressRange. Device is the index of
// the memory's device among the devices of all drivers, which is its
// index in a Backend; -1 for host memory and for devices no driver
// enumerated. Anything the driver does not know, NULL included, and any
// error, is KindUnknown. Per the specification a context answers for its
// own allocations; Intel's driver looks pointers up driver-wide.
func (c *Context) QueryPointer(ptr uintptr) usm.PointerInfo {
	unknown := usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	if ptr == 0 {
		return unknown
	}
	h, err := c.lock("levelzero.Context.QueryPointer")
	if err != nil {
		return unknown
	}
	defer c.unlock()
	mi, ok := api.MemQuery(h, ptr)
	if !ok || kindOf(mi.Type) == usm.KindUnknown {
		return unknown
	}
	info := usm.PointerInfo{Kind: kindOf(mi.Type), Device: -1}
	if d := findDevice(mi.Device); d != nil {
		info.Device = d.index
	}
	if mi.Base != 0 && mi.Base <= ptr && ptr-mi.Base < max(mi.Size, 1) {
		info.Base, info.Size = mi.Base, mi.Size
	}
	return info
}

// CanQueryPointers reports whether QueryPointer asks the driver about any
// pointer (zeMemGetAllocProperties, which every driver has): true.
func (c *Context) CanQueryPointers() bool { return c != nil }

// errClosedBackend is the error of a Backend method after Close.
func errClosedBackend(op string) error {
	return errkind.New(errkind.Value, op, "the backend is closed")
}
