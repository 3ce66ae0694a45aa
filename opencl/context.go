package opencl

import (
	"slices"
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/spans"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
)

// Context is one reference to a cl_context. Every Context value owns
// exactly one OpenCL reference: NewContext creates it, Retain makes a second
// Context holding a second reference, and each must be released. Close
// drops the reference once, after calls in progress; a second Close of
// the same Context does nothing, so the reference count is never touched
// twice.
//
// Allocations made through a context (USM or SVM) are registered with the
// cl_context and shared by every Context referring to it.
type Context struct {
	h ffi.Handle
	s *ctxState
}

type ctxState struct {
	platform *platform
	devices  []Device

	mu     sync.Mutex
	allocs spans.Set[allocRec]
	queues map[*Queue]struct{} // live queues made with NewQueue
}

// MemType is the kind of a pointer, as clGetMemAllocInfoINTEL reports it.
type MemType uint32

// Memory types (CL_MEM_TYPE_*_INTEL).
const (
	MemUnknown MemType = clapi.MemTypeUnknownINTEL
	MemHost    MemType = clapi.MemTypeHostINTEL
	MemDevice  MemType = clapi.MemTypeDeviceINTEL
	MemShared  MemType = clapi.MemTypeSharedINTEL
)

func (t MemType) String() string {
	switch t {
	case MemUnknown:
		return "unknown"
	case MemHost:
		return "host"
	case MemDevice:
		return "device"
	case MemShared:
		return "shared"
	}
	return "MemType(0x" + strconv.FormatUint(uint64(t), 16) + ")"
}

type allocRec struct {
	base, size uintptr
	typ        MemType
	dev        Device // zero for host USM
	svm        bool
}

func (r allocRec) Span() (base, size uintptr) { return r.base, r.size }

// AllocInfo describes the allocation a pointer belongs to.
type AllocInfo struct {
	Type MemType
	Base uintptr // start of the allocation; 0 when Type is MemUnknown
	Size uintptr
	// Device the allocation is bound to; zero for host USM. A cl_device_id
	// that is not a root device known to this process also gives zero.
	Device Device
	// SVM is true for clSVMAlloc memory, which this package registers
	// itself (SVM has no query); Type is then MemShared.
	SVM bool
}

// NewContext creates a context for devices of one platform.
func NewContext(devices ...Device) (*Context, error) {
	if len(devices) == 0 {
		return nil, errkind.New(errkind.Value, "opencl.NewContext", "no devices")
	}
	plat := devices[0].d
	ids := make([]clapi.Device, len(devices))
	for i, d := range devices {
		if d.d == nil {
			return nil, errZero("device")
		}
		if d.d.platform != plat.platform {
			return nil, errkind.New(errkind.Value, "opencl.NewContext", "devices of different platforms ("+plat.platform.info.Name+", "+d.d.platform.info.Name+") cannot share a context")
		}
		ids[i] = d.d.id
	}
	l, err := lib()
	if err != nil {
		return nil, err
	}
	id, err := l.CreateContext(plat.platform.id, ids)
	if err != nil {
		return nil, err
	}
	c := &Context{s: &ctxState{platform: plat.platform, devices: slices.Clone(devices), queues: map[*Queue]struct{}{}}}
	c.h.Init(uintptr(id), "cl_context", liveContexts)
	return c, nil
}

// Native returns the cl_context (0 after Close). The handle stays
// owned by c.
func (c *Context) Native() uintptr {
	if c == nil {
		return 0
	}
	return c.h.Raw()
}

// Devices returns the context's devices.
func (c *Context) Devices() []Device {
	if c == nil {
		return nil
	}
	return slices.Clone(c.s.devices)
}

// Platform returns the context's platform.
func (c *Context) Platform() Platform {
	if c == nil {
		return Platform{}
	}
	return Platform{c.s.platform}
}

// Retain returns a second Context for the same cl_context, holding its own
// reference (clRetainContext).
func (c *Context) Retain() (*Context, error) {
	if c == nil {
		return nil, errZero("context")
	}
	id, err := c.h.RLock("opencl.Context")
	if err != nil {
		return nil, err
	}
	defer c.h.RUnlock()
	l, _ := lib()
	if err := l.RetainContext(clapi.Context(id)); err != nil {
		return nil, err
	}
	c2 := &Context{s: c.s}
	c2.h.Init(id, "cl_context", liveContexts)
	return c2, nil
}

// ReferenceCount returns CL_CONTEXT_REFERENCE_COUNT (for tests and
// diagnostics; the value is stale as soon as it is returned).
func (c *Context) ReferenceCount() (uint32, error) {
	if c == nil {
		return 0, errZero("context")
	}
	id, err := c.h.RLock("opencl.Context")
	if err != nil {
		return 0, err
	}
	defer c.h.RUnlock()
	l, _ := lib()
	return l.ContextReferenceCount(clapi.Context(id))
}

// Close drops this Context's reference. Allocations stay valid while any
// Context of the cl_context lives; the runtime frees the context (and, per
// the USM specification, the allocations) when the last reference goes.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	return c.h.Close(func(id uintptr) error {
		l, _ := lib()
		return l.ReleaseContext(clapi.Context(id))
	})
}

// --- allocation registry ---

func (s *ctxState) register(r allocRec) {
	s.mu.Lock()
	s.allocs.Insert(r)
	s.mu.Unlock()
	liveAllocations.Add(1)
}

// find returns the allocation containing p (interior pointers included).
func (s *ctxState) find(p uintptr) (allocRec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocs.Find(p)
}

// take removes the allocation whose base is p.
func (s *ctxState) take(p uintptr) (allocRec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocs.Remove(p)
}

func (s *ctxState) put(r allocRec) { // undo take after a failed free
	s.mu.Lock()
	s.allocs.Insert(r)
	s.mu.Unlock()
}

// Allocations returns the number of live allocations made through the
// cl_context.
func (c *Context) Allocations() int {
	if c == nil {
		return 0
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.allocs.Len()
}

// --- USM ---

func (c *Context) usm(op string) (uintptr, clapi.USM, error) {
	if c == nil {
		return 0, clapi.USM{}, errZero("context")
	}
	f := c.s.platform.usmFuncs()
	if !f.Complete() {
		c2 := errkind.New(errkind.NotSupported, op, "platform "+strconv.Quote(c.s.platform.info.Name)+" does not provide cl_intel_unified_shared_memory")
		return 0, f, c2
	}
	id, err := c.h.RLock("opencl.Context")
	return id, f, err
}

func (c *Context) hasDevice(d Device) bool {
	return d.d != nil && slices.ContainsFunc(c.s.devices, func(x Device) bool { return x.d == d.d })
}

// HostMemAlloc allocates host USM (clHostMemAllocINTEL). alignment 0 is
// the runtime default; a size of 0 is refused by the runtime with
// CL_INVALID_BUFFER_SIZE.
func (c *Context) HostMemAlloc(size uintptr, alignment uint32) (uintptr, error) {
	return c.usmAlloc("clHostMemAllocINTEL", MemHost, Device{}, size, alignment)
}

// DeviceMemAlloc allocates device USM (clDeviceMemAllocINTEL).
func (c *Context) DeviceMemAlloc(dev Device, size uintptr, alignment uint32) (uintptr, error) {
	return c.usmAlloc("clDeviceMemAllocINTEL", MemDevice, dev, size, alignment)
}

// SharedMemAlloc allocates shared USM (clSharedMemAllocINTEL) associated
// with dev.
func (c *Context) SharedMemAlloc(dev Device, size uintptr, alignment uint32) (uintptr, error) {
	return c.usmAlloc("clSharedMemAllocINTEL", MemShared, dev, size, alignment)
}

func (c *Context) usmAlloc(op string, typ MemType, dev Device, size uintptr, alignment uint32) (uintptr, error) {
	id, f, err := c.usm(op)
	if err != nil {
		return 0, err
	}
	defer c.h.RUnlock()
	if (typ != MemHost || dev.d != nil) && !c.hasDevice(dev) {
		return 0, errkind.New(errkind.Value, op, "device "+dev.String()+" is not in the context")
	}
	var p uintptr
	switch typ {
	case MemHost:
		p, err = f.HostMemAlloc(clapi.Context(id), size, alignment)
	case MemDevice:
		p, err = f.DeviceMemAlloc(clapi.Context(id), dev.d.id, size, alignment)
	case MemShared:
		p, err = f.SharedMemAlloc(clapi.Context(id), dev.d.id, size, alignment)
	}
	if err != nil {
		return 0, err
	}
	c.s.register(allocRec{base: p, size: size, typ: typ, dev: dev})
	return p, nil
}

// MemBlockingFree frees USM allocated through this context with
// clMemBlockingFreeINTEL, which first waits for enqueued commands that may
// use it. Only base pointers of live allocations of this context are
// passed to the runtime: anything else (an interior pointer, a second free,
// foreign memory) is a usm.ErrValue error, because runtimes do not promise
// to survive a bad pointer.
func (c *Context) MemBlockingFree(ptr uintptr) error {
	id, f, err := c.usm("clMemBlockingFreeINTEL")
	if err != nil {
		return err
	}
	defer c.h.RUnlock()
	r, ok := c.s.take(ptr)
	if !ok || r.svm {
		if ok {
			c.s.put(r)
		}
		return errkind.New(errkind.Value, "clMemBlockingFreeINTEL", "0x"+strconv.FormatUint(uint64(ptr), 16)+" is not the base of a live USM allocation of this context")
	}
	if err := f.MemBlockingFree(clapi.Context(id), ptr); err != nil {
		c.s.put(r)
		return err
	}
	liveAllocations.Add(-1)
	return nil
}

// MemAllocInfo classifies ptr: for memory of the platform's USM, what
// clGetMemAllocInfoINTEL reports (interior pointers included; foreign
// memory is MemUnknown, never an error); for SVM memory allocated through
// this context, the registered extent with Type MemShared and SVM set.
func (c *Context) MemAllocInfo(ptr uintptr) (AllocInfo, error) {
	if c == nil {
		return AllocInfo{}, errZero("context")
	}
	if r, ok := c.s.find(ptr); ok && r.svm {
		return AllocInfo{Type: MemShared, Base: r.base, Size: r.size, Device: r.dev, SVM: true}, nil
	}
	f := c.s.platform.usmFuncs()
	if !f.CanQuery() {
		return AllocInfo{Type: MemUnknown}, nil
	}
	id, err := c.h.RLock("opencl.Context")
	if err != nil {
		return AllocInfo{}, err
	}
	defer c.h.RUnlock()
	mi, err := f.MemAllocInfo(clapi.Context(id), ptr)
	if err != nil {
		return AllocInfo{}, err
	}
	info := AllocInfo{Type: MemType(mi.Type), Base: mi.Base, Size: mi.Size}
	info.Device, _ = findDevice(mi.Device)
	return info, nil
}

// --- SVM ---

// SVMFlags are cl_svm_mem_flags.
type SVMFlags uint64

// SVM allocation flags.
const (
	SVMReadWrite       SVMFlags = clapi.MemReadWrite
	SVMFineGrain       SVMFlags = clapi.MemSVMFineGrainBuffer
	SVMAtomicsFlag     SVMFlags = clapi.MemSVMAtomics
	SVMFineGrainShared          = SVMReadWrite | SVMFineGrain
)

// SVMAlloc allocates shared virtual memory (clSVMAlloc, OpenCL 2.0) and
// registers it, since SVM has no pointer query; dev is recorded as the
// device the memory is meant for. Use SVMFineGrainShared for memory the
// host may touch without map/unmap. A size of 0 is refused.
func (c *Context) SVMAlloc(dev Device, flags SVMFlags, size uintptr, alignment uint32) (uintptr, error) {
	if c == nil {
		return 0, errZero("context")
	}
	l, err := lib()
	if err != nil {
		return 0, err
	}
	if !l.HasSVM() {
		return 0, errkind.New(errkind.NotSupported, "clSVMAlloc", "the OpenCL loader has no SVM entry points (OpenCL < 2.0)")
	}
	if !c.hasDevice(dev) {
		return 0, errkind.New(errkind.Value, "clSVMAlloc", "device "+dev.String()+" is not in the context")
	}
	if size == 0 {
		// clSVMAlloc returns NULL without a status for size 0; say why.
		return 0, &Error{Op: "clSVMAlloc", Status: InvalidBufferSize}
	}
	id, err := c.h.RLock("opencl.Context")
	if err != nil {
		return 0, err
	}
	defer c.h.RUnlock()
	p := l.SVMAlloc(clapi.Context(id), uint64(flags), size, alignment)
	if p == 0 {
		return 0, errkind.New(errkind.Memory, "clSVMAlloc", "returned NULL for "+strconv.FormatUint(uint64(size), 10)+" bytes with flags 0x"+strconv.FormatUint(uint64(flags), 16))
	}
	c.s.register(allocRec{base: p, size: size, typ: MemShared, dev: dev, svm: true})
	return p, nil
}

// SVMFree frees SVM allocated through this context. clSVMFree does not wait
// for commands that use the memory, so SVMFree first finishes every live
// queue made from this context, which gives it the semantics of
// clMemBlockingFreeINTEL for those queues. Unknown pointers are refused
// (usm.ErrValue) without calling the runtime.
func (c *Context) SVMFree(ptr uintptr) error {
	if c == nil {
		return errZero("context")
	}
	r, ok := c.s.take(ptr)
	if !ok || !r.svm {
		if ok {
			c.s.put(r)
		}
		return errkind.New(errkind.Value, "clSVMFree", "0x"+strconv.FormatUint(uint64(ptr), 16)+" is not the base of a live SVM allocation of this context")
	}
	c.s.finishQueues()
	id, err := c.h.RLock("opencl.Context")
	if err != nil {
		c.s.put(r)
		return err
	}
	defer c.h.RUnlock()
	l, _ := lib()
	l.SVMFree(clapi.Context(id), ptr)
	liveAllocations.Add(-1)
	return nil
}

// Free frees any allocation made through the context, USM or SVM.
func (c *Context) Free(ptr uintptr) error {
	if c == nil {
		return errZero("context")
	}
	r, ok := c.s.find(ptr)
	switch {
	case !ok || r.base != ptr:
		return errkind.New(errkind.Value, "opencl.Context.Free", "0x"+strconv.FormatUint(uint64(ptr), 16)+" is not the base of a live allocation of this context")
	case r.svm:
		return c.SVMFree(ptr)
	}
	return c.MemBlockingFree(ptr)
}

func (s *ctxState) finishQueues() {
	s.mu.Lock()
	qs := make([]*Queue, 0, len(s.queues))
	for q := range s.queues {
		qs = append(qs, q)
	}
	s.mu.Unlock()
	for _, q := range qs {
		_ = q.Finish() // a queue released meanwhile has nothing left to wait for
	}
}
