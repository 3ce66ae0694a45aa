// Package dpctl is the SYCL runtime of dpctl's C library,
// libDPCTLSyclInterface.so, as a usm.Backend: the memory of dpctl, dpnp
// and every SYCL producer in the process, classified, bound, allocated,
// copied and ordered through the library dpctl itself uses, so that
// queues, contexts and dpctl's device cache are shared with them.
//
// # Opening
//
// Open binds the instance of the library that dpctl's Python package
// already loaded (RTLD_NOLOAD): importing dpctl is what loads it, with
// the SYCL runtime, so pybridge's Python.Dpctl imports dpctl and then
// opens this package's Backend. Devices are sycl::device::get_devices()
// in order; a device's index is its kDLOneAPI device_id, as dpctl numbers
// them.
//
// # Generations of dpctl's C API
//
// dpctl 0.23 gave DPCTLKernelBundle_CreateFromSpirv two more parameters
// (NumSpecConsts, SpecConsts); every other function the backend calls is
// declared alike from dpctl 0.20 to 0.23. Open tells the library's
// generation from the DPCTL functions its file exports (the ELF dynamic
// symbol table), with no version string: exactly dpctl 0.22.1's set is
// generation 0.22 (0.20.0 to 0.22.1 declare the same), exactly 0.23's is
// generation 0.23, and CreateFromSpirv is called with that generation's
// signature (no specialization constants). Any other set, one with a
// function neither generation has or lacking one the nearer generation
// has, is a generation the backend does not know: it builds no SPIR-V
// there (BuildProgram returns a usm.ErrNotSupported error naming the
// library and the functions that differ) and calls the functions whose
// signature is the same in every known generation as before. The sets and
// where they were read are in docs/native.md, "dpctl's C API generations".
//
// # What the registry asks
//
// Besides usm.Backend and usm.Allocator, a Backend binds SyclQueueRef and
// SyclContextRef syclobj values with dpctl's rules (BindRef), classifies a
// pointer in the context a filter selector names (QueryPointerInContextOf),
// numbers devices for DLPack (DLPackDevice, LocalDevice), copies (Copy)
// and gives each device an in-order default queue (Queue). Its queues
// order a consumer queue after a producer's on the device
// (Queue.OrderBefore, which usm.Order uses).
//
// SYCL tells a pointer's USM kind and device but not the allocation it
// lies in; the native runtime under an OpenCL or Level Zero context can,
// so QueryPointer and BindRef report extents through the context's native
// handle (RATIONALE.md, "Extents of dpctl memory").
//
// # What stays in pybridge
//
// Everything about Python objects: importing the dpctl module, reading a
// dpctl.SyclQueue or SyclContext object's ref, and the cache of
// SyclQueue objects whose refs it pins here (PinQueue) while it holds
// them.
//
// # Crashes the C API allows
//
// Several of dpctl's C functions let a C++ exception escape, which ends
// the process; the backend never calls them where they throw: a pointer's
// type is asked before its device, queues are waited on through a
// barrier's event, pointers are classified only in contexts whose devices
// have USM, and a device is asked for an aspect before it allocates.
package dpctl
