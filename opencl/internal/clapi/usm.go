package clapi

import (
	"sync"
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
// fields are then zero. The calls' rows and their results share one heap
// block (allocInfoBlock) taken from a pool, so the query allocates nothing
// in the steady state, and costs one crossing into C. Device is asked
// only if withDevice: a caller that knows the answer (a context of one
// device) saves a call into the runtime.
func (u USM) MemAllocInfo(c Context, p uintptr, withDevice bool) (MemAllocInfo, error) {
	const op = "clGetMemAllocInfoINTEL"
	b := allocInfoBlocks.Get().(*allocInfoBlock)
	defer allocInfoBlocks.Put(b)
	b.typ, b.base, b.size, b.dev = 0, 0, 0, 0 // a row not asked for reads as zero
	// The facts in one crossing into C (ffi.Fn.Status6Each): the kind,
	// then base and size (and the device), which the runtime answers with
	// NULL and 0, not an error, for memory it does not know.
	b.args = [ffi.MaxStatusCalls][6]uintptr{
		{uintptr(c), p, MemAllocTypeINTEL, 4, uintptr(unsafe.Pointer(&b.typ)), 0},
		{uintptr(c), p, MemAllocBasePtrINTEL, 8, uintptr(unsafe.Pointer(&b.base)), 0},
		{uintptr(c), p, MemAllocSizeINTEL, 8, uintptr(unsafe.Pointer(&b.size)), 0},
		{uintptr(c), p, MemAllocDeviceINTEL, 8, uintptr(unsafe.Pointer(&b.dev)), 0},
	}
	n := 3
	if withDevice {
		n = 4
	}
	at, s := u.getMemAllocInfo.Status6Each(&b.args, n)
	switch {
	case at == 0:
		return MemAllocInfo{}, check(op, uintptr(uint32(s)))
	case b.typ == MemTypeUnknownINTEL: // whatever the other queries said
		return MemAllocInfo{Type: b.typ}, nil
	case at < n:
		return MemAllocInfo{}, check(op, uintptr(uint32(s)))
	}
	return MemAllocInfo{Type: b.typ, Base: b.base, Size: b.size, Device: b.dev}, nil
}

// allocInfoBlock is MemAllocInfo's memory: the rows of its calls and
// what they write through the addresses in them.
type allocInfoBlock struct {
	args [ffi.MaxStatusCalls][6]uintptr
	typ  uint32 // cl_unified_shared_memory_type_intel is a cl_uint
	_    uint32
	base uintptr
	size uintptr
	dev  Device
}

// allocInfoBlocks holds MemAllocInfo's blocks between queries (an
// extension call's import of a USM argument makes one query). A block is
// made on the heap by the pool's New, and stays there: the calls write
// through addresses taken as integers, which a goroutine stack that grew
// (and moved) would leave pointing at its old place.
var allocInfoBlocks = sync.Pool{New: func() any { return new(allocInfoBlock) }}

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
