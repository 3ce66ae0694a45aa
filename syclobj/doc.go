// Package syclobj models the "syclobj" entry of __sycl_usm_array_interface__:
// the SYCL context an allocation is bound to, given as a filter selector
// string, a context or queue reference (the opaque pointers that dpctl's
// "SyclContextRef" and "SyclQueueRef" capsules carry), or an object with a
// _get_capsule method that yields one of those (FromCapsule, which a SUAI
// reader makes and the usm registry resolves when it binds the pointer).
// Selectors are parsed once per string and shared: a Selector is one
// pointer to its parse.
//
// # Filter selectors
//
// A selector is one or more comma-separated filters. A filter is
// backend:device_type:device_num with every part optional (at least one must
// be present) and '*' standing for "any" in its position:
//
//	opencl:cpu:0   level_zero:gpu   gpu:1   opencl:*:1   *:cpu   2
//
// Parts must appear in that order and at most once. Backends: opencl,
// level_zero (alias ext_oneapi_level_zero), cuda, hip, host. Device types:
// cpu, gpu, accelerator, host. device_num counts the devices that match the
// filter's other parts, from 0; a filter that is only a number is therefore
// a global device index. Parsing is strict and case-sensitive, as in DPC++.
//
// # Global device order
//
// Resolution runs against one list of devices, the global order, which
// usm.Registry builds from its backends: Level Zero devices (driver order,
// then device order), then OpenCL (platform order, then device order), then
// CUDA and HIP if a backend provides them, then usmbridge's own host (cpu)
// backend last. A registry of dpctl's backend (package dpctl) uses dpctl's
// own order instead, which is what kDLOneAPI device ids refer to. A selector picks the
// first device in that order accepted by any of its filters.
package syclobj
