package dpctlapi

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
)

// symQueueGetNative is sycl::_V1::queue::getNative(int&) const, mangled:
// on OpenCL it returns the cl_command_queue, retained for the caller.
const symQueueGetNative = "_ZNK4sycl3_V15queue9getNativeERi"

// Kernel argument types (DPCTLKernelArgType, dpctl 0.22.1's
// dpctl_sycl_enum_types.h: a plain sequential enum).
const (
	ArgInt8    = 0
	ArgUint8   = 1
	ArgInt16   = 2
	ArgUint16  = 3
	ArgInt32   = 4
	ArgUint32  = 5
	ArgInt64   = 6
	ArgUint64  = 7
	ArgFloat32 = 8
	ArgFloat64 = 9
	ArgVoidPtr = 10
)

// Kernels holds the entry points of programs and kernel launches
// (dpctl_sycl_kernel_bundle_interface.h, dpctl_sycl_kernel_interface.h,
// DPCTLQueue_SubmitRange/SubmitNDRange). They are optional symbols of
// API's table: Present is false without them, and queues then build no
// programs. Every function here catches SYCL's exceptions in C and
// reports a failure as NULL (docs/native.md, "Kernels"). It carries the
// library's generation, which decides how CreateFromSpirv is called.
type Kernels struct {
	bundleFromOCLSource, bundleFromSpirv, bundleGetKernel, bundleDelete ffi.Fn
	kernelNumArgs, kernelDelete, submitRange, submitNDRange             ffi.Fn
	eventWait, eventDelete, contextGetBackend, queueGetNative           ffi.Fn
	eventCopy, eventStatus                                              ffi.Fn

	gen         Generation
	lib, genWhy string // the library's path; how it differs from a generation
}

func (a *API) kernelEntries() []ffi.Symbol {
	k := &a.kernels
	return []ffi.Symbol{
		ffi.Optional(&k.bundleFromOCLSource, "DPCTLKernelBundle_CreateFromOCLSource"),
		ffi.Optional(&k.bundleFromSpirv, "DPCTLKernelBundle_CreateFromSpirv"),
		ffi.Optional(&k.bundleGetKernel, "DPCTLKernelBundle_GetKernel"),
		ffi.Optional(&k.bundleDelete, "DPCTLKernelBundle_Delete"),
		ffi.Optional(&k.kernelNumArgs, "DPCTLKernel_GetNumArgs"),
		ffi.Optional(&k.kernelDelete, "DPCTLKernel_Delete"),
		ffi.Optional(&k.submitRange, "DPCTLQueue_SubmitRange"),
		ffi.Optional(&k.submitNDRange, "DPCTLQueue_SubmitNDRange"),
		ffi.Optional(&k.eventWait, "DPCTLEvent_Wait"),
		ffi.Optional(&k.eventDelete, "DPCTLEvent_Delete"),
		ffi.Optional(&k.contextGetBackend, "DPCTLContext_GetBackend"),
		ffi.Optional(&k.queueGetNative, symQueueGetNative),
		ffi.Optional(&k.eventCopy, "DPCTLEvent_Copy"),
		ffi.Optional(&k.eventStatus, "DPCTLEvent_GetCommandExecutionStatus"),
	}
}

// Kernels returns the entry points of programs and launches.
func (a *API) Kernels() Kernels { return a.kernels }

// Present reports whether everything but the native queue is there.
func (k Kernels) Present() bool {
	return k.bundleFromOCLSource.Present() && k.bundleFromSpirv.Present() && k.bundleGetKernel.Present() &&
		k.bundleDelete.Present() && k.kernelNumArgs.Present() && k.kernelDelete.Present() &&
		k.submitRange.Present() && k.submitNDRange.Present() && k.eventWait.Present() && k.eventDelete.Present() &&
		k.contextGetBackend.Present()
}

// BundleFromOCLSource builds NUL-terminated OpenCL C source for ctx and
// dev with NUL-terminated options; 0 on failure (only OpenCL contexts).
func (k Kernels) BundleFromOCLSource(ctx, dev uintptr, src, opts []byte) uintptr {
	return k.bundleFromOCLSource.Call4(ctx, dev, uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&opts[0])))
}

// BundleFromSpirv builds a SPIR-V module for ctx and dev with
// NUL-terminated options, called with the signature of the library's
// generation (no specialization constants in 0.23's); 0 on failure. A
// library of an unknown generation is not called: the error says why,
// and matches errkind.NotSupported.
func (k Kernels) BundleFromSpirv(ctx, dev uintptr, il, opts []byte) (uintptr, error) {
	pil, popts := uintptr(unsafe.Pointer(&il[0])), uintptr(unsafe.Pointer(&opts[0]))
	switch k.gen {
	case Gen022:
		return k.bundleFromSpirv.Call5(ctx, dev, pil, uintptr(len(il)), popts), nil
	case Gen023:
		return k.bundleFromSpirv.Call7(ctx, dev, pil, uintptr(len(il)), popts, 0, 0), nil
	}
	return 0, errkind.New(errkind.NotSupported, "DPCTLKernelBundle_CreateFromSpirv",
		k.lib+" matches no dpctl C API usmbridge knows (it "+k.genWhy+"); this function takes different "+
			"arguments in dpctl 0.22 and 0.23, so usmbridge does not guess and builds no SPIR-V through it")
}

// BundleGetKernel returns a new kernel ref of a NUL-terminated name, 0
// if the bundle has none.
func (k Kernels) BundleGetKernel(kb uintptr, name []byte) uintptr {
	return k.bundleGetKernel.Call2(kb, uintptr(unsafe.Pointer(&name[0])))
}

func (k Kernels) BundleDelete(kb uintptr)           { k.bundleDelete.Call1(kb) }
func (k Kernels) KernelNumArgs(kr uintptr) int      { return int(k.kernelNumArgs.Call1(kr)) }
func (k Kernels) KernelDelete(kr uintptr)           { k.kernelDelete.Call1(kr) }
func (k Kernels) EventWait(ev uintptr)              { k.eventWait.Call1(ev) }
func (k Kernels) EventDelete(ev uintptr)            { k.eventDelete.Call1(ev) }
func (k Kernels) ContextGetBackend(ctx uintptr) int { return cint(k.contextGetBackend.Call1(ctx)) }

// HasEventCopy reports whether DPCTLEvent_Copy is there.
func (k Kernels) HasEventCopy() bool { return k.eventCopy.Present() }

// eventComplete is DPCTL_COMPLETE of DPCTLSyclEventStatusType (dpctl
// 0.22.1's dpctl_sycl_enum_types.h: unknown, submitted, running,
// complete).
const eventComplete = 3

// HasEventStatus reports whether DPCTLEvent_GetCommandExecutionStatus is
// there.
func (k Kernels) HasEventStatus() bool { return k.eventStatus.Present() }

// EventComplete reports whether the event's command has completed
// (DPCTLEvent_GetCommandExecutionStatus, which catches SYCL's exceptions
// and then says "unknown": not complete).
func (k Kernels) EventComplete(ev uintptr) bool {
	return cint(k.eventStatus.Call1(ev)) == eventComplete
}

// EventCopy returns a new ref to the event ev names (DPCTLEvent_Copy: a
// copy of the sycl::event, deleted on its own); 0 on failure.
func (k Kernels) EventCopy(ev uintptr) uintptr { return k.eventCopy.Call1(ev) }

// Launch is the memory DPCTLQueue_Submit(ND)Range reads, kept by the
// caller (one per kernel) so a launch allocates nothing: Args[i] points
// at a scalar's value in Vals[i] or is the USM pointer itself, Types[i]
// its Arg* type; Global and Local the range; Deps the events waited for.
type Launch struct {
	Args          []uintptr
	Types         []int32
	Vals          []uint64
	Global, Local [3]uintptr
	Deps          []uintptr
}

// Submit submits kernel kr to q over dims dimensions of l (an nd_range
// when local), and returns the event ref, 0 on failure.
func (k Kernels) Submit(kr, q uintptr, l *Launch, dims int, local bool) uintptr {
	var args, types, deps uintptr
	if len(l.Args) > 0 {
		args, types = uintptr(unsafe.Pointer(&l.Args[0])), uintptr(unsafe.Pointer(&l.Types[0]))
	}
	if len(l.Deps) > 0 {
		deps = uintptr(unsafe.Pointer(&l.Deps[0]))
	}
	if local {
		return k.submitNDRange.Call10(kr, q, args, types, uintptr(len(l.Args)), uintptr(unsafe.Pointer(&l.Global[0])),
			uintptr(unsafe.Pointer(&l.Local[0])), uintptr(dims), deps, uintptr(len(l.Deps)))
	}
	return k.submitRange.Call9(kr, q, args, types, uintptr(len(l.Args)), uintptr(unsafe.Pointer(&l.Global[0])),
		uintptr(dims), deps, uintptr(len(l.Deps)))
}

// HasQueueGetNative reports whether sycl::queue::getNative is exported.
func (k Kernels) HasQueueGetNative() bool { return k.queueGetNative.Present() }

// QueueGetNative returns the native queue of q (raw C++: call it only for
// a queue of an OpenCL context, where it returns the cl_command_queue
// retained for the caller).
func (k Kernels) QueueGetNative(q uintptr) uintptr {
	desc := new(int32)
	return k.queueGetNative.Call2(q, uintptr(unsafe.Pointer(desc)))
}
