// Package opencl is usmbridge's OpenCL backend. It binds the ICD loader
// libOpenCL.so.1 through internal/ffi (no cgo) and provides USM on CPU and
// GPU OpenCL devices in two ways:
//
//   - cl_intel_unified_shared_memory, detected from the device's extension
//     string (the older "_preview" name is accepted too), with its entry
//     points fetched per platform through
//     clGetExtensionFunctionAddressForPlatform (the loader does not export
//     them). Intel's CPU runtime (intel-opencl-rt), Intel GPUs and
//     PoCL >= 4 have it.
//   - Fine-grain SVM (clSVMAlloc, OpenCL 2.0) as a stand-in where the
//     extension is missing, as on PoCL 3.1 in Debian 12.
//
// # The API
//
// New returns a Backend: every device of every platform (one context per
// platform, one in-order queue per device), implementing usm.Backend and
// usm.Allocator, with copies (Copy) and queues (Queue), so filter selectors
// such as "opencl:cpu:0" resolve through a usm.Registry and DLPack exports
// carry (kDLOneAPI, global index).
//
// Context and Queue are the native objects a program exchanges with a
// SYCL runtime or other OpenCL code. Native returns the cl_context or
// cl_command_queue; UnsafeAdoptQueue, UnsafeBorrowQueue,
// UnsafeAdoptContext and UnsafeBorrowContext take them in. Each Context and Queue owns one
// OpenCL reference, which Close drops once, after calls in progress; a
// second Close does nothing, and any use after Close is a usm.ErrValue
// error, never a call into the runtime with a dangling handle. A
// Backend's own context and queues are closed by the Backend.
//
// A failed call is an *Error naming the entry point and carrying its
// Status, the cl_int code as an error (comparable, in the style of
// syscall.Errno, and matching usmbridge's error kinds). Live counts the
// objects and allocations the package made that are still alive, for
// leak checks.
//
// # Native queues from SYCL
//
// SYCL's get_native(queue) on the OpenCL backend returns a cl_command_queue
// that it has retained for the caller. Hand it to UnsafeAdoptQueue, which
// takes over that reference: Wait is clFinish on the handle — exactly the
// backend half of queue::wait() — and Close is clReleaseCommandQueue.
// For a queue the caller keeps owning, UnsafeBorrowQueue takes a reference
// of its own, so either side may let go first. Neither transfers
// ownership of the SYCL queue object. clFinish covers commands already
// submitted to the queue, not host tasks or commands SYCL still holds back.
// A cl_context goes to UnsafeAdoptContext when the caller was handed a
// reference (context::getNative() retains), else to UnsafeBorrowContext;
// either Context's QueryPointer classifies and measures the USM of its
// platform, wherever it was allocated.
//
// # SVM compared with real USM
//
// On devices without cl_intel_unified_shared_memory, Backend serves every
// USM kind with fine-grain SVM buffers (CL_MEM_SVM_FINE_GRAIN_BUFFER) and
// reports them as shared. What differs from real USM:
//
//   - There is one kind: a request for host or device memory also gets
//     shared memory (usm.KindShared), so device memory is never
//     "device-only" and a DLPack export to kDLCPU is always zero-copy.
//   - SVM has no pointer query. The package registers every SVM allocation
//     it makes, so pointer queries (kind, base, size, device, interior
//     pointers) work for memory allocated through the Backend only; SVM
//     allocated by other code in the same process, or queried through a
//     borrowed Context, is unknown.
//   - clSVMFree does not wait for commands using the memory; the free
//     finishes every queue made from the context first, which is what
//     clMemBlockingFreeINTEL does for USM.
//   - Devices with coarse-grain SVM only are refused (usm.ErrNotSupported):
//     their memory needs map/unmap around host access, which USM shared
//     memory does not.
//
// # Copies
//
// Backend.Copy uses the runtime only when one side is device USM. Between
// host-accessible memory it finishes the queues of the platforms involved
// and copies with Go's memmove: on a CPU device the runtime's copy is a
// memcpy too, and skipping the command round trip (11–18 µs on PoCL) wins
// for small transfers while large ones run at memory bandwidth either way.
//
// # Environment
//
// The ICD loader reads its configuration once per process. Debian's
// ocl-icd 2.3.1 ignores OCL_ICD_FILENAMES (the Khronos loader reads it);
// both loaders accept OCL_ICD_VENDORS naming a directory of .icd files,
// which is how scripts/setup-20-opencl.sh makes PoCL and Intel's CPU
// runtime appear together in one process.
package opencl
