package clapi

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// USM holds one platform's cl_intel_unified_shared_memory entry points,
// fetched with clGetExtensionFunctionAddressForPlatform (the ICD loader does
// not export them). An absent one is zero.
type USM struct {
	hostMemAlloc, deviceMemAlloc, sharedMemAlloc, memBlockingFree ffi.Fn
	getMemAllocInfo, enqueueMemcpy, enqueueMemFill                ffi.Fn
	setKernelArgMemPointer                                        ffi.Fn
}

// strPtr returns the address of a NUL-terminated constant string. Only use
// it with string constants (they live in read-only data for ever).
func strPtr(s string) uintptr {
	if len(s) == 0 || s[len(s)-1] != 0 {
		panic("clapi.strPtr: string must be NUL-terminated: " + s)
	}
	return uintptr(unsafe.Pointer(unsafe.StringData(s)))
}

// USM fetches the USM entry points of a platform. The names are
// NUL-terminated constants so no C string has to be built.
func (l *Lib) USM(p Platform) USM {
	get := func(name string) ffi.Fn {
		return ffi.Fn(l.getExtensionFunctionAddressForPlatform.Call2(uintptr(p), strPtr(name)))
	}
	return USM{
		hostMemAlloc:    get("clHostMemAllocINTEL\x00"),
		deviceMemAlloc:  get("clDeviceMemAllocINTEL\x00"),
		sharedMemAlloc:  get("clSharedMemAllocINTEL\x00"),
		memBlockingFree: get("clMemBlockingFreeINTEL\x00"),
		getMemAllocInfo: get("clGetMemAllocInfoINTEL\x00"),
		enqueueMemcpy:   get("clEnqueueMemcpyINTEL\x00"),
		enqueueMemFill:  get("clEnqueueMemFillINTEL\x00"),
		// Kernels take USM pointers through it (programs.go).
		setKernelArgMemPointer: get("clSetKernelArgMemPointerINTEL\x00"),
	}
}

// Complete reports whether every entry point the bridge's own code calls
// is there: allocation, blocking free, the pointer query and memcpy.
// clEnqueueMemFillINTEL is not required (only EnqueueMemFill uses it).
func (u USM) Complete() bool {
	return u.hostMemAlloc.Present() && u.deviceMemAlloc.Present() && u.sharedMemAlloc.Present() &&
		u.memBlockingFree.Present() && u.getMemAllocInfo.Present() && u.enqueueMemcpy.Present()
}

// CanQuery reports whether clGetMemAllocInfoINTEL is there.
func (u USM) CanQuery() bool { return u.getMemAllocInfo.Present() }

// HostMemAlloc allocates host USM (clHostMemAllocINTEL, no properties).
func (u USM) HostMemAlloc(c Context, size uintptr, alignment uint32) (uintptr, error) {
	var errc int32
	p := u.hostMemAlloc.Call5(uintptr(c), 0, size, uintptr(alignment), uintptr(unsafe.Pointer(&errc)))
	return allocated("clHostMemAllocINTEL", p, errc)
}

// DeviceMemAlloc allocates device USM (clDeviceMemAllocINTEL).
func (u USM) DeviceMemAlloc(c Context, d Device, size uintptr, alignment uint32) (uintptr, error) {
	var errc int32
	p := u.deviceMemAlloc.Call6(uintptr(c), uintptr(d), 0, size, uintptr(alignment), uintptr(unsafe.Pointer(&errc)))
	return allocated("clDeviceMemAllocINTEL", p, errc)
}

// SharedMemAlloc allocates shared USM (clSharedMemAllocINTEL).
func (u USM) SharedMemAlloc(c Context, d Device, size uintptr, alignment uint32) (uintptr, error) {
	var errc int32
	p := u.sharedMemAlloc.Call6(uintptr(c), uintptr(d), 0, size, uintptr(alignment), uintptr(unsafe.Pointer(&errc)))
	return allocated("clSharedMemAllocINTEL", p, errc)
}

func allocated(op string, p uintptr, errc int32) (uintptr, error) {
	if errc != 0 || p == 0 {
		return 0, fail(op, errc, OutOfHostMemory)
	}
	return p, nil
}

// MemBlockingFree frees USM after the commands that may use it
// (clMemBlockingFreeINTEL).
func (u USM) MemBlockingFree(c Context, p uintptr) error {
	return check("clMemBlockingFreeINTEL", u.memBlockingFree.Call2(uintptr(c), p))
}

// MemAllocInfo is what clGetMemAllocInfoINTEL reports about a pointer.
type MemAllocInfo struct {
	Type       uint32 // MemType*INTEL
	Base, Size uintptr
	Device     Device
}

// MemAllocInfo classifies p (interior pointers included). Memory the
// runtime does not know is MemTypeUnknownINTEL with no error; the other
// fields are then zero. The four results share one heap block, so the
// query costs a single allocation. Device is asked only if withDevice: a
// caller that knows the answer (a context of one device) saves a call
// into the runtime.
func (u USM) MemAllocInfo(c Context, p uintptr, withDevice bool) (MemAllocInfo, error) {
	const op = "clGetMemAllocInfoINTEL"
	out := new(struct {
		typ  uint32 // cl_unified_shared_memory_type_intel is a cl_uint
		_    uint32
		base uintptr
		size uintptr
		dev  Device
	})
	if err := check(op, u.getMemAllocInfo.Call6(uintptr(c), p, MemAllocTypeINTEL, 4, uintptr(unsafe.Pointer(&out.typ)), 0)); err != nil {
		return MemAllocInfo{}, err
	}
	if out.typ == MemTypeUnknownINTEL {
		return MemAllocInfo{Type: out.typ}, nil
	}
	if err := check(op, u.getMemAllocInfo.Call6(uintptr(c), p, MemAllocBasePtrINTEL, 8, uintptr(unsafe.Pointer(&out.base)), 0)); err != nil {
		return MemAllocInfo{}, err
	}
	if err := check(op, u.getMemAllocInfo.Call6(uintptr(c), p, MemAllocSizeINTEL, 8, uintptr(unsafe.Pointer(&out.size)), 0)); err != nil {
		return MemAllocInfo{}, err
	}
	if !withDevice {
		return MemAllocInfo{Type: out.typ, Base: out.base, Size: out.size}, nil
	}
	if err := check(op, u.getMemAllocInfo.Call6(uintptr(c), p, MemAllocDeviceINTEL, 8, uintptr(unsafe.Pointer(&out.dev)), 0)); err != nil {
		return MemAllocInfo{}, err
	}
	return MemAllocInfo{Type: out.typ, Base: out.base, Size: out.size, Device: out.dev}, nil
}

// EnqueueMemcpy copies n bytes (clEnqueueMemcpyINTEL, no event).
func (u USM) EnqueueMemcpy(q Queue, blocking bool, dst, src, n uintptr) error {
	return check("clEnqueueMemcpyINTEL", u.enqueueMemcpy.Call8(uintptr(q), boolArg(blocking), dst, src, n, 0, 0, 0))
}

// CanFill reports whether clEnqueueMemFillINTEL is there.
func (u USM) CanFill() bool { return u.enqueueMemFill.Present() }

// EnqueueMemFill enqueues a fill with a repeated, non-empty pattern, which
// the runtime copies (clEnqueueMemFillINTEL). Check CanFill first.
func (u USM) EnqueueMemFill(q Queue, dst uintptr, pattern []byte, n uintptr) error {
	return check("clEnqueueMemFillINTEL", u.enqueueMemFill.Call8(uintptr(q), dst, uintptr(unsafe.Pointer(&pattern[0])), uintptr(len(pattern)), n, 0, 0, 0))
}

// CanSetArgs reports whether clSetKernelArgMemPointerINTEL is there.
func (u USM) CanSetArgs() bool { return u.setKernelArgMemPointer.Present() }

// SetKernelArgMemPointer sets argument i of k to a USM pointer
// (clSetKernelArgMemPointerINTEL). Check CanSetArgs first.
func (u USM) SetKernelArgMemPointer(k Kernel, i uint32, p uintptr) error {
	return check("clSetKernelArgMemPointerINTEL", u.setKernelArgMemPointer.Call3(uintptr(k), uintptr(i), p))
}

// MemType reads CL_MEM_ALLOC_TYPE_INTEL of p into *out, memory the caller
// keeps (a launch's scratch), so the query allocates nothing.
func (u USM) MemType(c Context, p uintptr, out *uint32) error {
	return check("clGetMemAllocInfoINTEL", u.getMemAllocInfo.Call6(uintptr(c), p, MemAllocTypeINTEL, 4, uintptr(unsafe.Pointer(out)), 0))
}
