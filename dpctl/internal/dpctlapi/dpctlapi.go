// Package dpctlapi binds the subset of dpctl's C library
// libDPCTLSyclInterface.so that package dpctl needs, through internal/ffi. It
// must be the instance the running dpctl loaded (open it with RTLD_NOLOAD
// after `import dpctl`), so that queues, contexts and the device cache are
// shared with dpctl.
//
// Several functions let a C++ exception escape through the C ABI (they
// have no try/catch), which terminates the process. The wrappers here only type the C
// signatures; callers follow the rules: DPCTLUSM_GetPointerType before DPCTLUSM_GetPointerDevice,
// SubmitBarrier + Event_Wait instead of Queue_Wait, free only pointers of
// the same context, delete only owned references, once.
package dpctlapi

import (
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/ffi"
)

// USM types (DPCTLSyclUSMType).
const (
	USMUnknown = 0
	USMDevice  = 1
	USMShared  = 2
	USMHost    = 3
)

// Backends (DPCTLSyclBackendType) and device types (DPCTLSyclDeviceType).
const (
	BackendCUDA      = 1 << 16
	BackendLevelZero = 1 << 17
	BackendOpenCL    = 1 << 18
	BackendHIP       = 1 << 19
	AllBackends      = ((1 << 5) - 1) << 16

	DeviceAccelerator = 1
	DeviceCPU         = 4
	DeviceGPU         = 16
	AllDevices        = (1 << 6) - 1
)

// Aspects (DPCTLSyclAspectType, a plain sequential enum: values checked
// against dpctl 0.22.1's dpctl_sycl_enum_types.h).
const (
	AspectUSMDevice = 12 // usm_device_allocations
	AspectUSMHost   = 13 // usm_host_allocations
	AspectUSMShared = 14 // usm_shared_allocations
)

// API is the resolved symbol table, with a typed Go method per C
// function. Handles (DPCTLSycl*Ref) are uintptr: they are dpctl's, shared
// with Python, and package dpctl owns or borrows them as dpctl's
// rules say (see the package comment).
type API struct {
	path string

	queueCreate, queueCreateForDevice, queueCopy, queueDelete        ffi.Fn
	queueGetContext, queueGetDevice, queueSubmitBarrier, queueMemcpy ffi.Fn
	eventWait, eventDelete                                           ffi.Fn
	usmGetPointerType, usmGetPointerDevice                           ffi.Fn
	mallocShared, mallocDevice, mallocHost, freeWithQueue            ffi.Fn
	contextAreEq, contextDelete, contextGetDevices, deviceHasAspect  ffi.Fn
	deviceDelete, deviceGetParent, deviceGetPlatform, deviceAreEq    ffi.Fn
	deviceGetBackend, deviceGetType, deviceGetName, cstringDelete    ffi.Fn
	platformGetDefaultContext, platformDelete                        ffi.Fn
	mgrGetDevices, mgrGetCachedContext                               ffi.Fn
	vectorSize, vectorGetAt, vectorDelete                            ffi.Fn
	deviceGetVendor, deviceGetDriverVersion, platformGetName         ffi.Fn // optional: a device's description

	native  Native
	interop Interop
	order   Ordering
	kernels Kernels

	gen    Generation
	genWhy string // how the exports differ from a generation's, when GenUnknown
}

// Open finds the first of paths that is already loaded (RTLD_NOLOAD: only
// the instance dpctl loaded will do) and resolves the table. Every symbol
// it requires is called by package dpctl; the error is an *ffi.LibraryError or
// an *ffi.MissingSymbolsError naming all the missing ones, and matches
// errkind.NotAvailable.
func Open(paths ...string) (*API, error) {
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, paths...)
	if err != nil {
		return nil, err
	}
	return Load(lib)
}

// Load resolves the table from an open library, and tells its
// generation from the DPCTL functions the library's file exports
// (generation.go): the name it was opened by must be that file's path.
func Load(lib *ffi.Lib) (*API, error) {
	a := &API{path: lib.Name()}
	err := lib.Resolve(append([]ffi.Symbol{
		ffi.Required(&a.queueCreate, "DPCTLQueue_Create"),
		ffi.Required(&a.queueCreateForDevice, "DPCTLQueue_CreateForDevice"),
		ffi.Required(&a.queueCopy, "DPCTLQueue_Copy"),
		ffi.Required(&a.queueDelete, "DPCTLQueue_Delete"),
		ffi.Required(&a.queueGetContext, "DPCTLQueue_GetContext"),
		ffi.Required(&a.queueGetDevice, "DPCTLQueue_GetDevice"),
		ffi.Required(&a.queueSubmitBarrier, "DPCTLQueue_SubmitBarrier"),
		ffi.Required(&a.queueMemcpy, "DPCTLQueue_Memcpy"),
		ffi.Required(&a.eventWait, "DPCTLEvent_Wait"),
		ffi.Required(&a.eventDelete, "DPCTLEvent_Delete"),
		ffi.Required(&a.usmGetPointerType, "DPCTLUSM_GetPointerType"),
		ffi.Required(&a.usmGetPointerDevice, "DPCTLUSM_GetPointerDevice"),
		ffi.Required(&a.mallocShared, "DPCTLmalloc_shared"),
		ffi.Required(&a.mallocDevice, "DPCTLmalloc_device"),
		ffi.Required(&a.mallocHost, "DPCTLmalloc_host"),
		ffi.Required(&a.freeWithQueue, "DPCTLfree_with_queue"),
		ffi.Required(&a.contextAreEq, "DPCTLContext_AreEq"),
		ffi.Required(&a.contextDelete, "DPCTLContext_Delete"),
		ffi.Required(&a.contextGetDevices, "DPCTLContext_GetDevices"),
		ffi.Required(&a.deviceHasAspect, "DPCTLDevice_HasAspect"),
		ffi.Required(&a.deviceDelete, "DPCTLDevice_Delete"),
		ffi.Required(&a.deviceGetParent, "DPCTLDevice_GetParentDevice"),
		ffi.Required(&a.deviceGetPlatform, "DPCTLDevice_GetPlatform"),
		ffi.Required(&a.deviceAreEq, "DPCTLDevice_AreEq"),
		ffi.Required(&a.deviceGetBackend, "DPCTLDevice_GetBackend"),
		ffi.Required(&a.deviceGetType, "DPCTLDevice_GetDeviceType"),
		ffi.Required(&a.deviceGetName, "DPCTLDevice_GetName"),
		ffi.Required(&a.cstringDelete, "DPCTLCString_Delete"),
		ffi.Required(&a.platformGetDefaultContext, "DPCTLPlatform_GetDefaultContext"),
		ffi.Required(&a.platformDelete, "DPCTLPlatform_Delete"),
		ffi.Required(&a.mgrGetDevices, "DPCTLDeviceMgr_GetDevices"),
		ffi.Required(&a.mgrGetCachedContext, "DPCTLDeviceMgr_GetCachedContext"),
		ffi.Required(&a.vectorSize, "DPCTLDeviceVector_Size"),
		ffi.Required(&a.vectorGetAt, "DPCTLDeviceVector_GetAt"),
		ffi.Required(&a.vectorDelete, "DPCTLDeviceVector_Delete"),
		// Optional: only a device's description needs them.
		ffi.Optional(&a.deviceGetVendor, "DPCTLDevice_GetVendor"),
		ffi.Optional(&a.deviceGetDriverVersion, "DPCTLDevice_GetDriverVersion"),
		ffi.Optional(&a.platformGetName, "DPCTLPlatform_GetName"),
		// Optional: only the extents of allocations need them (native.go).
		ffi.Optional(&a.native.GetBackend, "DPCTLContext_GetBackend"),
		ffi.Optional(&a.native.GetNative, symContextGetNative),
		// Optional: only SYCL contexts made from native ones need them
		// (interop.go).
		ffi.Optional(&a.interop.MakeContext, symMakeContext),
		ffi.Optional(&a.interop.MakeQueue, symMakeQueue),
		ffi.Optional(&a.interop.OperatorNew, symOperatorNew),
		// Optional: without them queues are ordered by a host wait
		// (order.go).
		ffi.Optional(&a.order.submitBarrier, "DPCTLQueue_SubmitBarrier"),
		ffi.Optional(&a.order.submitBarrierForEvents, "DPCTLQueue_SubmitBarrierForEvents"),
		ffi.Optional(&a.order.queueAreEq, "DPCTLQueue_AreEq"),
		ffi.Optional(&a.order.queueIsInOrder, "DPCTLQueue_IsInOrder"),
		ffi.Optional(&a.order.eventDelete, "DPCTLEvent_Delete"),
	}, a.kernelEntries()...)...)
	if err != nil {
		return nil, err
	}
	a.gen, a.genWhy = detectGeneration(a.path)
	a.kernels.gen, a.kernels.lib, a.kernels.genWhy = a.gen, a.path, a.genWhy
	return a, nil
}

// Generation returns the generation of the library's C API and, when it
// is GenUnknown, how its exports differ from the nearest generation's.
func (a *API) Generation() (Generation, string) { return a.gen, a.genWhy }

// Path is the library's file name as it was opened.
func (a *API) Path() string { return a.path }

func cbool(r uintptr) bool { return r&0xff != 0 }
func cint(r uintptr) int   { return int(int32(r)) }

// --- queues and events ---

// WaitFns returns the C entry points of a host wait on a queue
// (DPCTLQueue_SubmitBarrier, DPCTLEvent_Wait, DPCTLEvent_Delete), for C
// code that repeats a wait Go would make.
func (a *API) WaitFns() (barrier, wait, del uintptr) {
	return uintptr(a.queueSubmitBarrier), uintptr(a.eventWait), uintptr(a.eventDelete)
}

// QueueCreate makes a queue on ctx and dev (default handler, properties 0).
func (a *API) QueueCreate(ctx, dev uintptr) uintptr { return a.queueCreate.Call4(ctx, dev, 0, 0) }

// QueueCreateWith makes a queue on ctx and dev with the default handler
// and props (DPCTLQueuePropertyType bits, e.g. QueueInOrder); 0 on failure.
func (a *API) QueueCreateWith(ctx, dev uintptr, props int) uintptr {
	return a.queueCreate.Call4(ctx, dev, 0, uintptr(props))
}

// QueueCreateForDevice makes a queue in dev's cached (default) context,
// with the default handler and props (DPCTLQueuePropertyType bits, e.g.
// QueueInOrder).
func (a *API) QueueCreateForDevice(dev uintptr, props int) uintptr {
	return a.queueCreateForDevice.Call3(dev, 0, uintptr(props))
}
func (a *API) QueueCopy(q uintptr) uintptr       { return a.queueCopy.Call1(q) }
func (a *API) QueueDelete(q uintptr)             { a.queueDelete.Call1(q) }
func (a *API) QueueGetContext(q uintptr) uintptr { return a.queueGetContext.Call1(q) }
func (a *API) QueueGetDevice(q uintptr) uintptr  { return a.queueGetDevice.Call1(q) }

// QueueSubmitBarrier returns the barrier's event, 0 on failure.
func (a *API) QueueSubmitBarrier(q uintptr) uintptr { return a.queueSubmitBarrier.Call1(q) }

// QueueMemcpy returns the copy's event, 0 on failure.
func (a *API) QueueMemcpy(q, dst, src, n uintptr) uintptr {
	return a.queueMemcpy.Call4(q, dst, src, n)
}
func (a *API) EventWait(ev uintptr) { a.eventWait.Call1(ev) }

// QueueBarrierWait submits a barrier to q, waits for its event and
// deletes it, in one crossing into C with cgo: false if the barrier could
// not be submitted (nothing was waited for).
func (a *API) QueueBarrierWait(q uintptr) bool {
	return a.queueSubmitBarrier.Call1Use(a.eventWait, a.eventDelete, q) != 0
}
func (a *API) EventDelete(ev uintptr) { a.eventDelete.Call1(ev) }

// --- USM ---

// USMGetPointerType returns one of the USM* constants. Only for a context
// whose devices have USM (it throws otherwise).
func (a *API) USMGetPointerType(ptr, ctx uintptr) int {
	return cint(a.usmGetPointerType.Call2(ptr, ctx))
}

// USMGetPointerDevice returns a new device ref; only after
// USMGetPointerType said the pointer is USM of ctx.
func (a *API) USMGetPointerDevice(ptr, ctx uintptr) uintptr {
	return a.usmGetPointerDevice.Call2(ptr, ctx)
}
func (a *API) MallocShared(size, q uintptr) uintptr { return a.mallocShared.Call2(size, q) }
func (a *API) MallocDevice(size, q uintptr) uintptr { return a.mallocDevice.Call2(size, q) }
func (a *API) MallocHost(size, q uintptr) uintptr   { return a.mallocHost.Call2(size, q) }
func (a *API) FreeWithQueue(ptr, q uintptr)         { a.freeWithQueue.Call2(ptr, q) }

// --- contexts, devices, platforms ---

func (a *API) ContextAreEq(c1, c2 uintptr) bool      { return cbool(a.contextAreEq.Call2(c1, c2)) }
func (a *API) ContextDelete(ctx uintptr)             { a.contextDelete.Call1(ctx) }
func (a *API) ContextGetDevices(ctx uintptr) uintptr { return a.contextGetDevices.Call1(ctx) }
func (a *API) DeviceHasAspect(dev uintptr, aspect int) bool {
	return cbool(a.deviceHasAspect.Call2(dev, uintptr(aspect)))
}
func (a *API) DeviceDelete(dev uintptr)                  { a.deviceDelete.Call1(dev) }
func (a *API) DeviceGetParentDevice(dev uintptr) uintptr { return a.deviceGetParent.Call1(dev) }
func (a *API) DeviceGetPlatform(dev uintptr) uintptr     { return a.deviceGetPlatform.Call1(dev) }
func (a *API) DeviceAreEq(d1, d2 uintptr) bool           { return cbool(a.deviceAreEq.Call2(d1, d2)) }

// DeviceGetBackend returns one of the Backend* constants.
func (a *API) DeviceGetBackend(dev uintptr) int { return cint(a.deviceGetBackend.Call1(dev)) }

// DeviceGetDeviceType returns one of the Device* constants.
func (a *API) DeviceGetDeviceType(dev uintptr) int { return cint(a.deviceGetType.Call1(dev)) }

// DeviceGetName returns the device's name; the C string dpctl allocates
// for it is deleted here.
func (a *API) DeviceGetName(dev uintptr) string {
	c := a.deviceGetName.Call1(dev)
	if c == 0 {
		return ""
	}
	defer a.cstringDelete.Call1(c)
	return goString(c)
}

// DeviceGetVendor, DeviceGetDriverVersion and PlatformGetName return the
// string dpctl reports ("" where the library lacks the function); the C
// string it allocates is deleted here.
func (a *API) DeviceGetVendor(dev uintptr) string { return a.giveString(a.deviceGetVendor, dev) }
func (a *API) DeviceGetDriverVersion(dev uintptr) string {
	return a.giveString(a.deviceGetDriverVersion, dev)
}
func (a *API) PlatformGetName(p uintptr) string { return a.giveString(a.platformGetName, p) }

// giveString calls fn(arg), a function that gives a C string, and returns
// it as a Go string after deleting the C one.
func (a *API) giveString(fn ffi.Fn, arg uintptr) string {
	if !fn.Present() {
		return ""
	}
	c := fn.Call1(arg)
	if c == 0 {
		return ""
	}
	defer a.cstringDelete.Call1(c)
	return goString(c)
}

func (a *API) PlatformGetDefaultContext(p uintptr) uintptr {
	return a.platformGetDefaultContext.Call1(p)
}
func (a *API) PlatformDelete(p uintptr) { a.platformDelete.Call1(p) }

// --- the device manager and device vectors ---

// DeviceMgrGetDevices returns a new vector of the root devices that match
// mask (Backend* | Device* bits), in sycl::device::get_devices() order.
func (a *API) DeviceMgrGetDevices(mask int) uintptr { return a.mgrGetDevices.Call1(uintptr(mask)) }

// DeviceMgrGetCachedContext returns a new ref to dpctl's cached context of
// dev.
func (a *API) DeviceMgrGetCachedContext(dev uintptr) uintptr { return a.mgrGetCachedContext.Call1(dev) }
func (a *API) DeviceVectorSize(v uintptr) int                { return int(a.vectorSize.Call1(v)) }

// DeviceVectorGetAt returns a new device ref.
func (a *API) DeviceVectorGetAt(v uintptr, i int) uintptr { return a.vectorGetAt.Call2(v, uintptr(i)) }
func (a *API) DeviceVectorDelete(v uintptr)               { a.vectorDelete.Call1(v) }

// goString copies a NUL-terminated C string.
func goString(c uintptr) string {
	n := uintptr(0)
	for *(*byte)(cmem.Ptr(c + n)) != 0 {
		n++
	}
	return string(cmem.Bytes(c, n))
}
