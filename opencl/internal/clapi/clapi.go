// Package clapi is the raw symbol table of the OpenCL ICD loader
// (libOpenCL.so.1) and the cl_intel_unified_shared_memory entry points, with
// the enum values package opencl needs. It does no validation: every
// function pointer is called with whatever the caller passes, so only
// package opencl, which guards its handles, may use it.
package clapi

import (
	"github.com/usmbridge/usmbridge/internal/ffi"
)

// SONAMEs tried in order. Only the versioned runtime name: the unversioned
// libOpenCL.so is a development symlink that exists only when
// ocl-icd-opencl-dev is installed.
var SONAMEs = []string{"libOpenCL.so.1"}

// Lib holds the loader's entry points. Required ones are non-zero once Load
// succeeded; the OpenCL 2.0 SVM ones may be 0 with a 1.2 loader.
type Lib struct {
	Handle uintptr
	Name   string

	GetPlatformIDs                         uintptr
	GetPlatformInfo                        uintptr
	GetDeviceIDs                           uintptr
	GetDeviceInfo                          uintptr
	CreateContext                          uintptr
	RetainContext                          uintptr
	ReleaseContext                         uintptr
	GetContextInfo                         uintptr
	CreateCommandQueue                     uintptr
	RetainCommandQueue                     uintptr
	ReleaseCommandQueue                    uintptr
	GetCommandQueueInfo                    uintptr
	Finish                                 uintptr
	Flush                                  uintptr
	WaitForEvents                          uintptr
	GetEventInfo                           uintptr
	RetainEvent                            uintptr
	ReleaseEvent                           uintptr
	EnqueueMarkerWithWaitList              uintptr
	GetExtensionFunctionAddressForPlatform uintptr

	// OpenCL 2.0, optional.
	SVMAlloc          uintptr
	SVMFree           uintptr
	EnqueueSVMMemcpy  uintptr
	EnqueueSVMMemFill uintptr
}

// MissingSymbolError reports a loader that lacks a required entry point.
type MissingSymbolError struct {
	Library, Symbol string
	Err             error
}

func (e *MissingSymbolError) Error() string {
	return e.Library + " lacks " + e.Symbol + ": " + e.Err.Error()
}

func (e *MissingSymbolError) Unwrap() error { return e.Err }

// Load opens the first of names that loads and resolves the table. The
// symbols are looked up with dlsym, never RegisterLibFunc, so a missing one
// is an error instead of a panic.
func Load(names ...string) (*Lib, error) {
	h, name, err := ffi.Open(ffi.RTLDNow|ffi.RTLDLocal, names...)
	if err != nil {
		return nil, err
	}
	l := &Lib{Handle: h, Name: name}
	req := []struct {
		p    *uintptr
		name string
	}{
		{&l.GetPlatformIDs, "clGetPlatformIDs"},
		{&l.GetPlatformInfo, "clGetPlatformInfo"},
		{&l.GetDeviceIDs, "clGetDeviceIDs"},
		{&l.GetDeviceInfo, "clGetDeviceInfo"},
		{&l.CreateContext, "clCreateContext"},
		{&l.RetainContext, "clRetainContext"},
		{&l.ReleaseContext, "clReleaseContext"},
		{&l.GetContextInfo, "clGetContextInfo"},
		// clCreateCommandQueue (1.x) rather than ...WithProperties (2.0):
		// every loader exports it and it gives an in-order queue on any
		// platform version.
		{&l.CreateCommandQueue, "clCreateCommandQueue"},
		{&l.RetainCommandQueue, "clRetainCommandQueue"},
		{&l.ReleaseCommandQueue, "clReleaseCommandQueue"},
		{&l.GetCommandQueueInfo, "clGetCommandQueueInfo"},
		{&l.Finish, "clFinish"},
		{&l.Flush, "clFlush"},
		{&l.WaitForEvents, "clWaitForEvents"},
		{&l.GetEventInfo, "clGetEventInfo"},
		{&l.RetainEvent, "clRetainEvent"},
		{&l.ReleaseEvent, "clReleaseEvent"},
		{&l.EnqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList"},
		{&l.GetExtensionFunctionAddressForPlatform, "clGetExtensionFunctionAddressForPlatform"},
	}
	for _, s := range req {
		p, err := ffi.Sym(h, s.name)
		if err != nil {
			return nil, &MissingSymbolError{Library: name, Symbol: s.name, Err: err}
		}
		*s.p = p
	}
	opt := []struct {
		p    *uintptr
		name string
	}{
		{&l.SVMAlloc, "clSVMAlloc"},
		{&l.SVMFree, "clSVMFree"},
		{&l.EnqueueSVMMemcpy, "clEnqueueSVMMemcpy"},
		{&l.EnqueueSVMMemFill, "clEnqueueSVMMemFill"},
	}
	for _, s := range opt {
		*s.p, _ = ffi.Sym(h, s.name)
	}
	return l, nil
}

// USM holds one platform's cl_intel_unified_shared_memory entry points,
// fetched with clGetExtensionFunctionAddressForPlatform (the ICD loader does
// not export them). A zero field means the platform does not provide it.
type USM struct {
	HostMemAlloc      uintptr
	DeviceMemAlloc    uintptr
	SharedMemAlloc    uintptr
	MemFree           uintptr
	MemBlockingFree   uintptr
	GetMemAllocInfo   uintptr
	EnqueueMemcpy     uintptr
	EnqueueMemFill    uintptr
	EnqueueMigrateMem uintptr
}

// LoadUSM fetches the USM entry points of a platform. The names are
// NUL-terminated constants so no C string has to be built per call.
func (l *Lib) LoadUSM(platform uintptr) USM {
	get := func(name string) uintptr {
		return ffi.Call(l.GetExtensionFunctionAddressForPlatform, platform, StrPtr(name))
	}
	return USM{
		HostMemAlloc:      get("clHostMemAllocINTEL\x00"),
		DeviceMemAlloc:    get("clDeviceMemAllocINTEL\x00"),
		SharedMemAlloc:    get("clSharedMemAllocINTEL\x00"),
		MemFree:           get("clMemFreeINTEL\x00"),
		MemBlockingFree:   get("clMemBlockingFreeINTEL\x00"),
		GetMemAllocInfo:   get("clGetMemAllocInfoINTEL\x00"),
		EnqueueMemcpy:     get("clEnqueueMemcpyINTEL\x00"),
		EnqueueMemFill:    get("clEnqueueMemFillINTEL\x00"),
		EnqueueMigrateMem: get("clEnqueueMigrateMemINTEL\x00"),
	}
}

// Complete reports whether every entry point the bridge relies on is there.
func (u USM) Complete() bool {
	return u.HostMemAlloc != 0 && u.DeviceMemAlloc != 0 && u.SharedMemAlloc != 0 &&
		u.MemBlockingFree != 0 && u.GetMemAllocInfo != 0 && u.EnqueueMemcpy != 0 && u.EnqueueMemFill != 0
}
