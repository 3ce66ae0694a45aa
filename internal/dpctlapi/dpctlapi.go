// Package dpctlapi binds the subset of dpctl's C library
// libDPCTLSyclInterface.so that pybridge needs, through internal/ffi. It
// must be the instance the running dpctl loaded (open it with RTLD_NOLOAD
// after `import dpctl`), so that queues, contexts and the device cache are
// shared with dpctl.
//
// Several functions let a C++ exception escape through the C ABI (they
// have no try/catch), which terminates the process. The wrappers here are raw; callers
// follow the rules: DPCTLUSM_GetPointerType before DPCTLUSM_GetPointerDevice,
// SubmitBarrier + Event_Wait instead of Queue_Wait, free only pointers of
// the same context, delete only owned references, once.
package dpctlapi

import (
	"strings"

	"github.com/usmbridge/usmbridge/internal/errkind"
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

// API is the resolved symbol table.
type API struct {
	Handle uintptr
	Path   string

	QueueCreate, QueueCreateForDevice, QueueCopy, QueueDelete        uintptr
	QueueGetContext, QueueGetDevice, QueueSubmitBarrier, QueueMemcpy uintptr
	EventWait, EventDelete                                           uintptr
	USMGetPointerType, USMGetPointerDevice                           uintptr
	MallocShared, MallocDevice, MallocHost, FreeWithQueue            uintptr
	ContextAreEq, ContextDelete, ContextGetDevices, DeviceHasAspect  uintptr
	DeviceDelete, DeviceGetParent, DeviceGetPlatform, DeviceAreEq    uintptr
	DeviceGetBackend, DeviceGetType, DeviceGetName, CStringDelete    uintptr
	PlatformGetDefaultContext, PlatformDelete                        uintptr
	MgrGetDevices, MgrGetPosition, MgrGetCachedContext               uintptr
	VectorSize, VectorGetAt, VectorDelete                            uintptr
	FilterSelectorCreate, DeviceCreateFromSelector, SelectorDelete   uintptr
}

// Load resolves the symbols from an open handle of the library.
func Load(handle uintptr, path string) (*API, error) {
	a := &API{Handle: handle, Path: path}
	var missing []string
	for _, s := range []struct {
		p    *uintptr
		name string
	}{
		{&a.QueueCreate, "DPCTLQueue_Create"}, {&a.QueueCreateForDevice, "DPCTLQueue_CreateForDevice"},
		{&a.QueueCopy, "DPCTLQueue_Copy"}, {&a.QueueDelete, "DPCTLQueue_Delete"},
		{&a.QueueGetContext, "DPCTLQueue_GetContext"}, {&a.QueueGetDevice, "DPCTLQueue_GetDevice"},
		{&a.QueueSubmitBarrier, "DPCTLQueue_SubmitBarrier"}, {&a.QueueMemcpy, "DPCTLQueue_Memcpy"},
		{&a.EventWait, "DPCTLEvent_Wait"}, {&a.EventDelete, "DPCTLEvent_Delete"},
		{&a.USMGetPointerType, "DPCTLUSM_GetPointerType"}, {&a.USMGetPointerDevice, "DPCTLUSM_GetPointerDevice"},
		{&a.MallocShared, "DPCTLmalloc_shared"}, {&a.MallocDevice, "DPCTLmalloc_device"},
		{&a.MallocHost, "DPCTLmalloc_host"}, {&a.FreeWithQueue, "DPCTLfree_with_queue"},
		{&a.ContextAreEq, "DPCTLContext_AreEq"}, {&a.ContextDelete, "DPCTLContext_Delete"},
		{&a.ContextGetDevices, "DPCTLContext_GetDevices"}, {&a.DeviceHasAspect, "DPCTLDevice_HasAspect"},
		{&a.DeviceDelete, "DPCTLDevice_Delete"}, {&a.DeviceGetParent, "DPCTLDevice_GetParentDevice"},
		{&a.DeviceGetPlatform, "DPCTLDevice_GetPlatform"}, {&a.DeviceAreEq, "DPCTLDevice_AreEq"},
		{&a.DeviceGetBackend, "DPCTLDevice_GetBackend"}, {&a.DeviceGetType, "DPCTLDevice_GetDeviceType"},
		{&a.DeviceGetName, "DPCTLDevice_GetName"}, {&a.CStringDelete, "DPCTLCString_Delete"},
		{&a.PlatformGetDefaultContext, "DPCTLPlatform_GetDefaultContext"}, {&a.PlatformDelete, "DPCTLPlatform_Delete"},
		{&a.MgrGetDevices, "DPCTLDeviceMgr_GetDevices"}, {&a.MgrGetPosition, "DPCTLDeviceMgr_GetPositionInDevices"},
		{&a.MgrGetCachedContext, "DPCTLDeviceMgr_GetCachedContext"},
		{&a.VectorSize, "DPCTLDeviceVector_Size"}, {&a.VectorGetAt, "DPCTLDeviceVector_GetAt"},
		{&a.VectorDelete, "DPCTLDeviceVector_Delete"},
		{&a.FilterSelectorCreate, "DPCTLFilterSelector_Create"},
		{&a.DeviceCreateFromSelector, "DPCTLDevice_CreateFromSelector"},
		{&a.SelectorDelete, "DPCTLDeviceSelector_Delete"},
	} {
		addr, err := ffi.Sym(handle, s.name)
		if err != nil {
			missing = append(missing, s.name)
			continue
		}
		*s.p = addr
	}
	if len(missing) > 0 {
		return nil, errkind.New(errkind.NotAvailable, "dpctlapi.Load", path+" lacks "+strings.Join(missing, ", "))
	}
	return a, nil
}

// Call is ffi.Call, for brevity.
func Call(fn uintptr, args ...uintptr) uintptr { return ffi.Call(fn, args...) }

// Bool converts a C bool result.
func Bool(r uintptr) bool { return r&0xff != 0 }

// Int converts a C int result.
func Int(r uintptr) int { return int(int32(r)) }
