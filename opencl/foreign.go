package opencl

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
)

// Contexts made elsewhere (a SYCL runtime's), entered through a native
// handle so that the allocations in them can be measured.

// clContextDevices is CL_CONTEXT_DEVICES (cl_context_info).
const clContextDevices = 0x1081

// maxForeignDevices bounds the devices read from a foreign context: a
// context of more root devices than any machine has is not a context.
const maxForeignDevices = 64

// UnsafeAdoptContext takes over one reference to a native cl_context, such
// as the one SYCL's context::getNative() returns on the OpenCL backend
// (DPC++ retains the context before handing it out): Release of the
// returned Context drops that reference, and so does UnsafeAdoptContext
// itself when it fails after the loader is up. The Context answers
// pointer queries (MemAllocInfo, AddressRange) about the context's USM,
// wherever it was allocated; SVM allocated by other code stays unknown
// (SVM has no query). The caller guarantees h is a live cl_context of this
// process's ICD loader; a wrong value crashes the runtime, which is why
// the function is Unsafe.
func UnsafeAdoptContext(h uintptr) (*Context, error) {
	const op = "opencl.UnsafeAdoptContext"
	if h == 0 {
		return nil, errkind.New(errkind.Value, op, "NULL cl_context")
	}
	l, err := lib()
	if err != nil {
		return nil, err
	}
	c, err := foreignContext(h)
	if err != nil {
		call(l.ReleaseContext, h)
		return nil, err
	}
	live.contexts.Add(1)
	return c, nil
}

// foreignContext reads a foreign context's devices and platform. Devices
// this package did not enumerate (sub-devices) are left out of Devices;
// the platform comes from the first device either way, so its USM entry
// points are fetched once per platform, not per context.
func foreignContext(h uintptr) (*Context, error) {
	l, _ := lib()
	ids := new([maxForeignDevices]uintptr)
	var size uintptr
	if err := check("clGetContextInfo", call(l.GetContextInfo, h, clContextDevices, unsafe.Sizeof(*ids), uintptr(unsafe.Pointer(&ids[0])), uintptr(unsafe.Pointer(&size)))); err != nil {
		return nil, err
	}
	n := int(size / unsafe.Sizeof(ids[0]))
	if n == 0 {
		return nil, errkind.New(errkind.Value, "opencl.UnsafeAdoptContext", "the context has no devices")
	}
	var devs []Device
	var plat *platform
	for _, id := range ids[:n] {
		if d, ok := findDevice(id); ok {
			devs = append(devs, d)
			if plat == nil {
				plat = d.d.platform
			}
		}
	}
	if plat == nil {
		var pid uintptr
		if err := check("clGetDeviceInfo", call(l.GetDeviceInfo, ids[0], clapi.DevicePlatform, unsafe.Sizeof(pid), uintptr(unsafe.Pointer(&pid)), 0)); err != nil {
			return nil, err
		}
		plat = findPlatform(pid)
	}
	return &Context{h: handle{id: h}, s: &ctxState{platform: plat, devices: devs, queues: map[*Queue]struct{}{}}}, nil
}

// findPlatform returns the enumerated platform with id pid, or a bare one
// (no info, USM entry points fetched on use) for a platform the loader
// did not list to this package.
func findPlatform(pid uintptr) *platform {
	ps, _ := platformsOnce()
	for _, p := range ps {
		if p.p.id == pid {
			return p.p
		}
	}
	return &platform{id: pid}
}

// AddressRange returns the base and size of the allocation containing ptr
// (interior pointers included): for USM, clGetMemAllocInfoINTEL's base
// and size, two queries; for SVM allocated through this Context's
// cl_context by this package, the registered extent. Memory the context
// does not know is 0, 0 and no error. It is the extent half of
// MemAllocInfo for callers that know the kind already.
func (c *Context) AddressRange(ptr uintptr) (base, size uintptr, err error) {
	if c == nil {
		return 0, 0, errZero("context")
	}
	id, err := c.h.acquire("context")
	if err != nil {
		return 0, 0, err
	}
	defer c.h.mu.RUnlock()
	if r, ok := c.s.find(ptr); ok && r.svm {
		return r.base, r.size, nil
	}
	f := c.s.platform.usmFuncs()
	if f.GetMemAllocInfo == 0 || ptr == 0 {
		return 0, 0, nil
	}
	out := new([2]uintptr) // base, size: one heap block for both
	if err := check("clGetMemAllocInfoINTEL", call(f.GetMemAllocInfo, id, ptr, clapi.MemAllocBasePtrINTEL, unsafe.Sizeof(out[0]), uintptr(unsafe.Pointer(&out[0])), 0)); err != nil {
		return 0, 0, err
	}
	if out[0] == 0 {
		return 0, 0, nil
	}
	if err := check("clGetMemAllocInfoINTEL", call(f.GetMemAllocInfo, id, ptr, clapi.MemAllocSizeINTEL, unsafe.Sizeof(out[1]), uintptr(unsafe.Pointer(&out[1])), 0)); err != nil {
		return 0, 0, err
	}
	return out[0], out[1], nil
}
