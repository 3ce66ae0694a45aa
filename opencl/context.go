package opencl

import (
	"slices"
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/spans"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// Context is one reference to a cl_context: one a Backend made, or one a
// SYCL runtime handed out (UnsafeBorrowContext). Close drops the reference
// once, after calls in progress; a second Close does nothing, so the
// reference count is never touched twice, and any use after Close is a
// usm.ErrValue error instead of a call with a dangling handle.
type Context struct {
	h     ffi.Handle
	s     *ctxState
	owner *Backend // set for a Backend's context, which only its Close releases
}

// ctxState is what usmbridge knows about one cl_context: its platform and
// devices, and the memory and queues made through it.
type ctxState struct {
	platform *platform // nil if the context's devices are unknown
	devices  []*device

	mu     sync.Mutex
	allocs spans.Set[allocRec]
	queues map[*Queue]struct{} // live queues made with newQueue
	progs  progCache           // programs built through those queues (program.go)
}

// clGetMemAllocInfoINTEL memory types.
const (
	memUnknown = clapi.MemTypeUnknownINTEL
	memHost    = clapi.MemTypeHostINTEL
	memDevice  = clapi.MemTypeDeviceINTEL
	memShared  = clapi.MemTypeSharedINTEL
)

type allocRec struct {
	base, size uintptr
	typ        uint32  // mem* above
	dev        *device // nil for host USM
	svm        bool
	// queried is what clGetMemAllocInfoINTEL reported for the allocation
	// when it was made (known is then true): the facts of memory this
	// context allocated do not change while it lives, so QueryPointer
	// replays them instead of asking the runtime again.
	queried allocInfo
	known   bool
}

func (r allocRec) Span() (base, size uintptr) { return r.base, r.size }

// allocInfo describes the allocation a pointer belongs to.
type allocInfo struct {
	typ        uint32 // mem* above
	base, size uintptr
	// dev is the device the allocation is bound to; nil for host USM and
	// for a cl_device_id that is not a root device known to this process.
	dev *device
	// svm is true for clSVMAlloc memory, which this package registers
	// itself (SVM has no query); typ is then memShared.
	svm bool
}

// newContext creates a context for devices of one platform.
func newContext(devices ...*device) (*Context, error) {
	const op = "opencl.newContext"
	if len(devices) == 0 {
		return nil, errkind.New(errkind.Value, op, "no devices")
	}
	plat := devices[0].platform
	ids := make([]clapi.Device, len(devices))
	for i, d := range devices {
		if d.platform != plat {
			return nil, errkind.New(errkind.Value, op, "devices of different platforms ("+plat.info.name+", "+d.platform.info.name+") cannot share a context")
		}
		ids[i] = d.id
	}
	l, err := lib()
	if err != nil {
		return nil, err
	}
	id, err := l.CreateContext(plat.id, ids)
	if err != nil {
		return nil, err
	}
	c := &Context{s: newCtxState(plat, slices.Clone(devices))}
	c.h.Init(uintptr(id), "cl_context", liveContexts)
	made.add(id, c.s)
	return c, nil
}

// made lists the contexts this package created, by native handle, while
// they live: a program built through a queue from elsewhere on one of
// them takes the SVM this package allocated there (program.go).
var made madeContexts

type madeContexts struct {
	mu sync.Mutex
	m  map[clapi.Context]*ctxState
}

func (m *madeContexts) add(id clapi.Context, s *ctxState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[clapi.Context]*ctxState{}
	}
	m.m[id] = s
}

// remove unlists the context id, if s is its records: another Context
// over the same handle (UnsafeBorrowContext) closing leaves it listed.
func (m *madeContexts) remove(id clapi.Context, s *ctxState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m[id] == s {
		delete(m.m, id)
	}
}

// state returns the records of a live context this package made, or nil.
func (m *madeContexts) state(id clapi.Context) *ctxState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[id]
}

func newCtxState(p *platform, devs []*device) *ctxState {
	return &ctxState{platform: p, devices: devs, queues: map[*Queue]struct{}{}}
}

// UnsafeBorrowContext wraps a native cl_context, such as one SYCL's
// get_native(context) returned to the caller, to classify pointers with
// QueryPointer. It takes a reference of its own (clRetainContext), so the
// Context stays valid even if the owner lets go first, and its Close drops
// only that reference. The caller guarantees h is a live cl_context of
// this process's ICD loader; a wrong value crashes the runtime, which is
// why the function is Unsafe. The error matches usm.ErrNotAvailable
// without an OpenCL runtime.
func UnsafeBorrowContext(h uintptr) (*Context, error) {
	return wrapContext("opencl.UnsafeBorrowContext", h, true)
}

// UnsafeAdoptContext takes over one reference to a native cl_context, such
// as the one SYCL's context::getNative() returns on the OpenCL backend
// (it retains the context before handing it out): Close drops that
// reference, and so does UnsafeAdoptContext itself when it fails after the
// loader is up, so the caller never has to release h. The contract on h
// is UnsafeBorrowContext's.
func UnsafeAdoptContext(h uintptr) (*Context, error) {
	return wrapContext("opencl.UnsafeAdoptContext", h, false)
}

func wrapContext(op string, h uintptr, retain bool) (*Context, error) {
	if h == 0 {
		return nil, errkind.New(errkind.Value, op, "NULL cl_context")
	}
	l, err := lib()
	if err != nil {
		return nil, err
	}
	var ids []clapi.Device
	if _, err = platforms(); err == nil {
		ids, err = l.ContextDevices(clapi.Context(h))
	}
	if err == nil && retain {
		err = l.RetainContext(clapi.Context(h))
	}
	if err != nil {
		if !retain {
			_ = l.ReleaseContext(clapi.Context(h)) // the adopted reference is ours to drop
		}
		return nil, err
	}
	var devs []*device
	var plat *platform
	for _, id := range ids {
		if d := findDevice(id); d != nil {
			devs, plat = append(devs, d), d.platform
		}
	}
	c := &Context{s: newCtxState(plat, devs)}
	c.h.Init(h, "cl_context", liveContexts)
	return c, nil
}

// Native returns the cl_context, for handing to other native code (a
// SYCL runtime's make_context, for instance); 0 once closed. The
// reference stays owned by c.
func (c *Context) Native() uintptr {
	if c == nil {
		return 0
	}
	return c.h.Raw()
}

// NativeDevices returns the cl_device_id of each device of the context,
// in the context's order (CL_CONTEXT_DEVICES), for native code that pairs
// them with its own devices (a SYCL runtime's). They are valid while the
// context lives.
func (c *Context) NativeDevices() ([]uintptr, error) {
	const op = "opencl.Context.NativeDevices"
	if c == nil {
		return nil, errkind.New(errkind.Value, op, "nil *opencl.Context")
	}
	id, err := c.h.RLock(op)
	if err != nil {
		return nil, err
	}
	defer c.h.RUnlock()
	l, _ := lib()
	ids, err := l.ContextDevices(clapi.Context(id))
	if err != nil {
		return nil, err
	}
	out := make([]uintptr, len(ids))
	for i, d := range ids {
		out[i] = uintptr(d)
	}
	return out, nil
}

// Close drops this Context's reference (clReleaseContext) once. The
// runtime frees the context, and with it the USM allocated in it, when
// the last reference goes. A Backend's context is released by the
// Backend's Close; its own Close refuses (usm.ErrValue).
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	if c.owner != nil {
		return errkind.New(errkind.Value, "opencl.Context.Close", "the context belongs to its Backend; close the Backend instead")
	}
	return c.close()
}

func (c *Context) close() error {
	return c.h.Close(func(id uintptr) error {
		l, _ := lib()
		if err := l.ReleaseContext(clapi.Context(id)); err != nil {
			return err
		}
		made.remove(clapi.Context(id), c.s)
		return nil
	})
}

// referenceCount returns CL_CONTEXT_REFERENCE_COUNT (for tests and
// diagnostics; the value is stale as soon as it is returned).
func (c *Context) referenceCount() (uint32, error) {
	id, err := c.h.RLock("opencl.Context.referenceCount")
	if err != nil {
		return 0, err
	}
	defer c.h.RUnlock()
	l, _ := lib()
	return l.ContextReferenceCount(clapi.Context(id))
}

// QueryPointer classifies ptr: USM of the context's platform as
// clGetMemAllocInfoINTEL reports it (interior pointers included, with
// base and size), SVM allocated through this Context as KindShared with
// its registered extent, anything else, and any error, KindUnknown.
// Device is the index of the memory's device among the devices of all
// platforms, which is its index in a Backend; -1 for host memory and for
// devices no platform listed.
func (c *Context) QueryPointer(ptr uintptr) usm.PointerInfo {
	unknown := usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	if c == nil || ptr == 0 {
		return unknown
	}
	ai, err := c.allocInfo(ptr)
	return c.pointerInfo(ptr, ai, err)
}

// CanQueryPointers reports whether QueryPointer asks the runtime about
// pointers it did not allocate (cl_intel_unified_shared_memory's
// clGetMemAllocInfoINTEL): without it only this context's own SVM is
// known, and KindUnknown says nothing about other memory.
func (c *Context) CanQueryPointers() bool {
	return c != nil && c.s.platform != nil && c.s.platform.usmFuncs().CanQuery()
}

// queryForeign is QueryPointer for a pointer the caller found in none of
// the context's records (Backend.locate): only the runtime is asked.
func (c *Context) queryForeign(ptr uintptr) usm.PointerInfo {
	if c == nil || ptr == 0 {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	ai, err := c.runtimeInfo(ptr)
	return c.pointerInfo(ptr, ai, err)
}

// pointerInfo turns what allocInfo or runtimeInfo found into QueryPointer's
// answer.
func (c *Context) pointerInfo(ptr uintptr, ai allocInfo, err error) usm.PointerInfo {
	unknown := usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	if err != nil {
		return unknown
	}
	pi := usm.PointerInfo{Device: -1, Base: ai.base, Size: ai.size}
	switch ai.typ {
	case memHost:
		pi.Kind = usm.KindHost
	case memDevice:
		pi.Kind = usm.KindDevice
	case memShared:
		pi.Kind = usm.KindShared
	default:
		return unknown
	}
	dev := ai.dev
	if dev == nil {
		// Host USM has no device; report the one it was allocated for
		// through this context, so arrays on it use that device's queue.
		if r, ok := c.s.find(ptr); ok {
			dev = r.dev
		}
	}
	if dev != nil {
		pi.Device = dev.index
	}
	return pi
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

// allocations returns the number of live allocations made through the
// cl_context.
func (s *ctxState) allocations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocs.Len()
}

func (s *ctxState) hasDevice(d *device) bool {
	return d != nil && slices.Contains(s.devices, d)
}

// --- USM ---

func (c *Context) usm(op string) (clapi.Context, clapi.USM, error) {
	if c.s.platform == nil || !c.s.platform.usmFuncs().Complete() {
		name := "the context's platform"
		if c.s.platform != nil {
			name = "platform " + strconv.Quote(c.s.platform.info.name)
		}
		return 0, clapi.USM{}, errkind.New(errkind.NotSupported, op, name+" does not provide cl_intel_unified_shared_memory")
	}
	id, err := c.h.RLock(op)
	return clapi.Context(id), c.s.platform.usmFuncs(), err
}

// usmAlloc allocates USM of type typ (memHost, memDevice or memShared)
// for dev, a device of the context (optional for host USM, which is not
// bound to a device: dev is only recorded). alignment 0 is the runtime
// default; a size of 0 is refused by the runtime with
// CL_INVALID_BUFFER_SIZE.
func (c *Context) usmAlloc(typ uint32, dev *device, size uintptr, alignment uint32) (uintptr, error) {
	op := "clSharedMemAllocINTEL"
	switch typ {
	case memHost:
		op = "clHostMemAllocINTEL"
	case memDevice:
		op = "clDeviceMemAllocINTEL"
	}
	id, f, err := c.usm(op)
	if err != nil {
		return 0, err
	}
	defer c.h.RUnlock()
	if (typ != memHost || dev != nil) && !c.s.hasDevice(dev) {
		return 0, errkind.New(errkind.Value, op, "device "+dev.String()+" is not in the context")
	}
	var p uintptr
	switch typ {
	case memHost:
		p, err = f.HostMemAlloc(id, size, alignment)
	case memDevice:
		p, err = f.DeviceMemAlloc(id, dev.id, size, alignment)
	case memShared:
		p, err = f.SharedMemAlloc(id, dev.id, size, alignment)
	}
	if err != nil {
		return 0, err
	}
	rec := allocRec{base: p, size: size, typ: typ, dev: dev}
	if f.CanQuery() {
		if mi, err := f.MemAllocInfo(id, p, true); err == nil && mi.Type == typ && mi.Base == p && mi.Size >= size {
			rec.queried = allocInfo{typ: mi.Type, base: mi.Base, size: mi.Size, dev: findDevice(mi.Device)}
			rec.known = true
		}
	}
	c.s.register(rec)
	return p, nil
}

// memBlockingFree frees USM allocated through this context with
// clMemBlockingFreeINTEL, which first waits for enqueued commands that may
// use it. Only base pointers of live allocations of this context are
// passed to the runtime: anything else (an interior pointer, a second free,
// foreign memory) is a usm.ErrValue error, because runtimes do not promise
// to survive a bad pointer.
func (c *Context) memBlockingFree(ptr uintptr) error {
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
	if err := f.MemBlockingFree(id, ptr); err != nil {
		c.s.put(r)
		return err
	}
	liveAllocations.Add(-1)
	return nil
}

// allocInfo classifies ptr: for memory of the platform's USM, what
// clGetMemAllocInfoINTEL reports (interior pointers included; foreign
// memory is memUnknown, never an error); for SVM memory allocated through
// this context, the registered extent with typ memShared and svm set; for
// USM this context allocated, what the runtime reported when it was made
// (allocRec.queried), without asking again.
func (c *Context) allocInfo(ptr uintptr) (allocInfo, error) {
	if r, ok := c.s.find(ptr); ok && r.svm {
		return allocInfo{typ: memShared, base: r.base, size: r.size, dev: r.dev, svm: true}, nil
	} else if ok && r.known {
		return r.queried, nil
	}
	return c.runtimeInfo(ptr)
}

// runtimeInfo is what clGetMemAllocInfoINTEL reports about ptr
// (memUnknown where the platform has no USM queries).
func (c *Context) runtimeInfo(ptr uintptr) (allocInfo, error) {
	if c.s.platform == nil || !c.s.platform.usmFuncs().CanQuery() {
		return allocInfo{typ: memUnknown}, nil
	}
	id, err := c.h.RLock("opencl.Context.QueryPointer")
	if err != nil {
		return allocInfo{}, err
	}
	defer c.h.RUnlock()
	// In a context of one device, device and shared USM can only be that
	// device's, and host USM has none: the device query is left out.
	single := len(c.s.devices) == 1
	mi, err := c.s.platform.usmFuncs().MemAllocInfo(clapi.Context(id), ptr, !single)
	if err != nil {
		return allocInfo{}, err
	}
	ai := allocInfo{typ: mi.Type, base: mi.Base, size: mi.Size, dev: findDevice(mi.Device)}
	if single && (mi.Type == memDevice || mi.Type == memShared) {
		ai.dev = c.s.devices[0]
	}
	return ai, nil
}

// --- SVM ---

// svmFineGrainShared are the cl_svm_mem_flags of memory the host may
// touch without map/unmap.
const svmFineGrainShared = clapi.MemReadWrite | clapi.MemSVMFineGrainBuffer

// svmAlloc allocates fine-grain shared virtual memory (clSVMAlloc, OpenCL
// 2.0) and registers it, since SVM has no pointer query; dev is recorded
// as the device the memory is meant for. A size of 0 is refused.
func (c *Context) svmAlloc(dev *device, size uintptr, alignment uint32) (uintptr, error) {
	l, err := lib()
	if err != nil {
		return 0, err
	}
	if !l.HasSVM() {
		return 0, errkind.New(errkind.NotSupported, "clSVMAlloc", "the OpenCL loader has no SVM entry points (OpenCL < 2.0)")
	}
	if !c.s.hasDevice(dev) {
		return 0, errkind.New(errkind.Value, "clSVMAlloc", "device "+dev.String()+" is not in the context")
	}
	if size == 0 {
		// clSVMAlloc returns NULL without a status for size 0; say why.
		return 0, &Error{Op: "clSVMAlloc", Status: InvalidBufferSize}
	}
	id, err := c.h.RLock("clSVMAlloc")
	if err != nil {
		return 0, err
	}
	defer c.h.RUnlock()
	p := l.SVMAlloc(clapi.Context(id), svmFineGrainShared, size, alignment)
	if p == 0 {
		return 0, errkind.New(errkind.Memory, "clSVMAlloc", "returned NULL for "+strconv.FormatUint(uint64(size), 10)+" bytes of fine-grain SVM")
	}
	c.s.register(allocRec{base: p, size: size, typ: memShared, dev: dev, svm: true})
	return p, nil
}

// svmFree frees SVM allocated through this context. clSVMFree does not
// wait for commands that use the memory, so svmFree first finishes every
// live queue made from this context, which gives it the semantics of
// clMemBlockingFreeINTEL for those queues. Unknown pointers are refused
// (usm.ErrValue) without calling the runtime.
func (c *Context) svmFree(ptr uintptr) error {
	// The context is held before the record goes, as memBlockingFree
	// does: a Close that sees no allocation left then waits for this free
	// to finish instead of closing the context under it.
	id, err := c.h.RLock("clSVMFree")
	if err != nil {
		return err
	}
	defer c.h.RUnlock()
	r, ok := c.s.take(ptr)
	if !ok || !r.svm {
		if ok {
			c.s.put(r)
		}
		return errkind.New(errkind.Value, "clSVMFree", "0x"+strconv.FormatUint(uint64(ptr), 16)+" is not the base of a live SVM allocation of this context")
	}
	c.s.finishQueues()
	l, _ := lib()
	l.SVMFree(clapi.Context(id), ptr)
	liveAllocations.Add(-1)
	return nil
}

// free frees any allocation made through the context, USM or SVM.
func (c *Context) free(ptr uintptr) error {
	r, ok := c.s.find(ptr)
	switch {
	case !ok || r.base != ptr:
		return errkind.New(errkind.Value, "opencl.Context.free", "0x"+strconv.FormatUint(uint64(ptr), 16)+" is not the base of a live allocation of this context")
	case r.svm:
		return c.svmFree(ptr)
	}
	return c.memBlockingFree(ptr)
}

func (s *ctxState) finishQueues() {
	s.mu.Lock()
	qs := make([]*Queue, 0, len(s.queues))
	for q := range s.queues {
		qs = append(qs, q)
	}
	s.mu.Unlock()
	for _, q := range qs {
		_ = q.Wait() // a queue closed meanwhile has nothing left to wait for
	}
}
