// Package clapi binds the OpenCL ICD loader (libOpenCL.so.1) and the
// cl_intel_unified_shared_memory entry points through internal/ffi, with a
// typed Go function per C function and the enum values package opencl
// needs. It does no validation beyond the C signatures: every handle is
// passed to the runtime as given, so only package opencl, which guards its
// handles, may use it.
package clapi

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// SONAMEs tried in order. Only the versioned runtime name: the unversioned
// libOpenCL.so is a development symlink that exists only when
// ocl-icd-opencl-dev is installed.
var SONAMEs = []string{"libOpenCL.so.1"}

// Native OpenCL handles.
type (
	Platform uintptr // cl_platform_id
	Device   uintptr // cl_device_id
	Context  uintptr // cl_context
	Queue    uintptr // cl_command_queue
)

// Lib is the loader's table of entry points.
type Lib struct {
	lib *ffi.Lib

	getPlatformIDs, getPlatformInfo, getDeviceIDs, getDeviceInfo ffi.Fn
	createContext, retainContext, releaseContext, getContextInfo ffi.Fn
	createCommandQueue, retainCommandQueue, releaseCommandQueue  ffi.Fn
	getCommandQueueInfo, finish                                  ffi.Fn
	getExtensionFunctionAddressForPlatform                       ffi.Fn

	// OpenCL 2.0, optional: a 1.2 loader lacks them.
	svmAlloc, svmFree ffi.Fn
	// Optional: package opencl's tests use them to drive the runtime.
	enqueueSVMMemcpy, enqueueSVMMemFill ffi.Fn
	// Optional (OpenCL 1.2; events.go): ordering one queue after another
	// on the device. Without them Queue.OrderBefore reports
	// ErrNotSupported and the caller waits on the host.
	enqueueMarkerWithWaitList, enqueueBarrierWithWaitList ffi.Fn
	releaseEvent, flush                                   ffi.Fn
	// Optional: the tests hold a queue back with a user event.
	createUserEvent, setUserEventStatus ffi.Fn
	// Optional (programs.go): programs, kernels and launches.
	prog programFns
}

// Load opens the first of names that loads and resolves the table. The
// error matches errkind.NotAvailable: it is an *ffi.LibraryError when no
// loader could be opened and an *ffi.MissingSymbolsError listing every
// absent entry point when the loader is too old.
func Load(names ...string) (*Lib, error) {
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, names...)
	if err != nil {
		return nil, err
	}
	l := &Lib{lib: lib}
	err = lib.Resolve(append([]ffi.Symbol{
		ffi.Required(&l.getPlatformIDs, "clGetPlatformIDs"),
		ffi.Required(&l.getPlatformInfo, "clGetPlatformInfo"),
		ffi.Required(&l.getDeviceIDs, "clGetDeviceIDs"),
		ffi.Required(&l.getDeviceInfo, "clGetDeviceInfo"),
		ffi.Required(&l.createContext, "clCreateContext"),
		ffi.Required(&l.retainContext, "clRetainContext"),
		ffi.Required(&l.releaseContext, "clReleaseContext"),
		ffi.Required(&l.getContextInfo, "clGetContextInfo"),
		// clCreateCommandQueue (1.x) rather than ...WithProperties (2.0):
		// every loader exports it and it gives an in-order queue on any
		// platform version.
		ffi.Required(&l.createCommandQueue, "clCreateCommandQueue"),
		ffi.Required(&l.retainCommandQueue, "clRetainCommandQueue"),
		ffi.Required(&l.releaseCommandQueue, "clReleaseCommandQueue"),
		ffi.Required(&l.getCommandQueueInfo, "clGetCommandQueueInfo"),
		ffi.Required(&l.finish, "clFinish"),
		ffi.Required(&l.getExtensionFunctionAddressForPlatform, "clGetExtensionFunctionAddressForPlatform"),
		ffi.Optional(&l.svmAlloc, "clSVMAlloc"),
		ffi.Optional(&l.svmFree, "clSVMFree"),
		ffi.Optional(&l.enqueueSVMMemcpy, "clEnqueueSVMMemcpy"),
		ffi.Optional(&l.enqueueSVMMemFill, "clEnqueueSVMMemFill"),
		ffi.Optional(&l.enqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList"),
		ffi.Optional(&l.enqueueBarrierWithWaitList, "clEnqueueBarrierWithWaitList"),
		ffi.Optional(&l.releaseEvent, "clReleaseEvent"),
		ffi.Optional(&l.flush, "clFlush"),
		ffi.Optional(&l.createUserEvent, "clCreateUserEvent"),
		ffi.Optional(&l.setUserEventStatus, "clSetUserEventStatus"),
	}, l.programEntries()...)...)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Name is the SONAME the loader was opened by.
func (l *Lib) Name() string { return l.lib.Name() }

func boolArg(b bool) uintptr {
	if b {
		return True
	}
	return False
}

// cString converts a NUL-terminated info string.
func cString(b []byte) string {
	if i := slices.Index(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

// PlatformIDs lists the platforms (clGetPlatformIDs). With no ICD the
// loader reports PlatformNotFoundKHR; some loaders report success and
// none, which is returned as an empty list.
func (l *Lib) PlatformIDs() ([]Platform, error) {
	var n uint32
	if err := check("clGetPlatformIDs", l.getPlatformIDs.Call3(0, 0, uintptr(unsafe.Pointer(&n)))); err != nil || n == 0 {
		return nil, err
	}
	ids := make([]Platform, n)
	if err := check("clGetPlatformIDs", l.getPlatformIDs.Call3(uintptr(n), uintptr(unsafe.Pointer(&ids[0])), uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, err
	}
	return ids[:min(int(n), len(ids))], nil
}

// PlatformInfo reads a string property (clGetPlatformInfo).
func (l *Lib) PlatformInfo(p Platform, param uint32) (string, error) {
	return infoString("clGetPlatformInfo", l.getPlatformInfo, uintptr(p), param)
}

// infoString runs the size-then-data protocol of the cl*Info functions.
func infoString(op string, fn ffi.Fn, obj uintptr, param uint32) (string, error) {
	var n uintptr
	if err := check(op, fn.Call5(obj, uintptr(param), 0, 0, uintptr(unsafe.Pointer(&n)))); err != nil || n == 0 {
		return "", err
	}
	buf := make([]byte, n)
	if err := check(op, fn.Call5(obj, uintptr(param), n, uintptr(unsafe.Pointer(&buf[0])), 0)); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// DeviceIDs lists a platform's devices of the given types
// (clGetDeviceIDs). A platform without such devices is DeviceNotFound.
func (l *Lib) DeviceIDs(p Platform, types uint64) ([]Device, error) {
	var n uint32
	if err := check("clGetDeviceIDs", l.getDeviceIDs.Call5(uintptr(p), uintptr(types), 0, 0, uintptr(unsafe.Pointer(&n)))); err != nil || n == 0 {
		return nil, err
	}
	ids := make([]Device, n)
	if err := check("clGetDeviceIDs", l.getDeviceIDs.Call5(uintptr(p), uintptr(types), uintptr(n), uintptr(unsafe.Pointer(&ids[0])), 0)); err != nil {
		return nil, err
	}
	return ids, nil
}

// DeviceInfoString reads a string property (clGetDeviceInfo).
func (l *Lib) DeviceInfoString(d Device, param uint32) (string, error) {
	return infoString("clGetDeviceInfo", l.getDeviceInfo, uintptr(d), param)
}

// DeviceInfoUint reads an integer property of up to 8 bytes
// (clGetDeviceInfo).
func (l *Lib) DeviceInfoUint(d Device, param uint32) (uint64, error) {
	v := new(uint64)
	err := check("clGetDeviceInfo", l.getDeviceInfo.Call5(uintptr(d), uintptr(param), 8, uintptr(unsafe.Pointer(v)), 0))
	return *v, err
}

// CreateContext creates a context for devices of platform p
// (clCreateContext, no callback).
func (l *Lib) CreateContext(p Platform, devs []Device) (Context, error) {
	props := []uintptr{ContextPlatform, uintptr(p), 0}
	var errc int32
	c := l.createContext.Call6(uintptr(unsafe.Pointer(&props[0])), uintptr(len(devs)), uintptr(unsafe.Pointer(&devs[0])), 0, 0, uintptr(unsafe.Pointer(&errc)))
	if errc != 0 || c == 0 {
		return 0, fail("clCreateContext", errc, OutOfResources)
	}
	return Context(c), nil
}

// RetainContext adds a reference (clRetainContext).
func (l *Lib) RetainContext(c Context) error {
	return check("clRetainContext", l.retainContext.Call1(uintptr(c)))
}

// ReleaseContext drops a reference (clReleaseContext).
func (l *Lib) ReleaseContext(c Context) error {
	return check("clReleaseContext", l.releaseContext.Call1(uintptr(c)))
}

// ContextReferenceCount reads CL_CONTEXT_REFERENCE_COUNT.
func (l *Lib) ContextReferenceCount(c Context) (uint32, error) {
	n := new(uint32)
	err := check("clGetContextInfo", l.getContextInfo.Call5(uintptr(c), ContextReferenceCount, 4, uintptr(unsafe.Pointer(n)), 0))
	return *n, err
}

// ContextDevices reads CL_CONTEXT_DEVICES.
func (l *Lib) ContextDevices(c Context) ([]Device, error) {
	var n uintptr
	if err := check("clGetContextInfo", l.getContextInfo.Call5(uintptr(c), ContextDevices, 0, 0, uintptr(unsafe.Pointer(&n)))); err != nil || n == 0 {
		return nil, err
	}
	devs := make([]Device, n/unsafe.Sizeof(Device(0)))
	if len(devs) == 0 {
		return nil, nil
	}
	err := check("clGetContextInfo", l.getContextInfo.Call5(uintptr(c), ContextDevices, uintptr(len(devs))*unsafe.Sizeof(Device(0)), uintptr(unsafe.Pointer(&devs[0])), 0))
	return devs, err
}

// CreateCommandQueue creates an in-order queue without properties
// (clCreateCommandQueue).
func (l *Lib) CreateCommandQueue(c Context, d Device) (Queue, error) {
	var errc int32
	q := l.createCommandQueue.Call4(uintptr(c), uintptr(d), 0, uintptr(unsafe.Pointer(&errc)))
	if errc != 0 || q == 0 {
		return 0, fail("clCreateCommandQueue", errc, OutOfResources)
	}
	return Queue(q), nil
}

// RetainCommandQueue adds a reference (clRetainCommandQueue).
func (l *Lib) RetainCommandQueue(q Queue) error {
	return check("clRetainCommandQueue", l.retainCommandQueue.Call1(uintptr(q)))
}

// ReleaseCommandQueue drops a reference (clReleaseCommandQueue).
func (l *Lib) ReleaseCommandQueue(q Queue) error {
	return check("clReleaseCommandQueue", l.releaseCommandQueue.Call1(uintptr(q)))
}

// QueueDevice reads CL_QUEUE_DEVICE.
func (l *Lib) QueueDevice(q Queue) (Device, error) {
	d := new(Device)
	err := check("clGetCommandQueueInfo", l.getCommandQueueInfo.Call5(uintptr(q), QueueDevice, 8, uintptr(unsafe.Pointer(d)), 0))
	return *d, err
}

// QueueReferenceCount reads CL_QUEUE_REFERENCE_COUNT.
func (l *Lib) QueueReferenceCount(q Queue) (uint32, error) {
	n := new(uint32)
	err := check("clGetCommandQueueInfo", l.getCommandQueueInfo.Call5(uintptr(q), QueueReferenceCount, 4, uintptr(unsafe.Pointer(n)), 0))
	return *n, err
}

// Finish waits for every enqueued command (clFinish).
func (l *Lib) Finish(q Queue) error { return check("clFinish", l.finish.Call1(uintptr(q))) }

// HasSVM reports whether the loader has clSVMAlloc and clSVMFree
// (OpenCL 2.0).
func (l *Lib) HasSVM() bool { return l.svmAlloc.Present() && l.svmFree.Present() }

// SVMAlloc allocates shared virtual memory (clSVMAlloc); 0 on failure, for
// which the runtime gives no status. Check HasSVM first.
func (l *Lib) SVMAlloc(c Context, flags uint64, size uintptr, alignment uint32) uintptr {
	return l.svmAlloc.Call4(uintptr(c), uintptr(flags), size, uintptr(alignment))
}

// SVMFree frees SVM without waiting for commands that use it (clSVMFree).
func (l *Lib) SVMFree(c Context, p uintptr) { l.svmFree.Call2(uintptr(c), p) }

// EnqueueSVMMemcpy copies n bytes (clEnqueueSVMMemcpy).
func (l *Lib) EnqueueSVMMemcpy(q Queue, blocking bool, dst, src, n uintptr) error {
	if !l.enqueueSVMMemcpy.Present() {
		return &Error{Op: "clEnqueueSVMMemcpy", Status: InvalidOperation, Detail: "the loader does not export it"}
	}
	return check("clEnqueueSVMMemcpy", l.enqueueSVMMemcpy.Call8(uintptr(q), boolArg(blocking), dst, src, n, 0, 0, 0))
}

// EnqueueSVMMemFill enqueues a fill with a repeated, non-empty pattern,
// which the runtime copies (clEnqueueSVMMemFill).
func (l *Lib) EnqueueSVMMemFill(q Queue, dst uintptr, pattern []byte, n uintptr) error {
	if !l.enqueueSVMMemFill.Present() {
		return &Error{Op: "clEnqueueSVMMemFill", Status: InvalidOperation, Detail: "the loader does not export it"}
	}
	return check("clEnqueueSVMMemFill", l.enqueueSVMMemFill.Call8(uintptr(q), dst, uintptr(unsafe.Pointer(&pattern[0])), uintptr(len(pattern)), n, 0, 0, 0))
}
