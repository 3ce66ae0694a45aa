package opencl

import "github.com/usmbridge/usmbridge/opencl/internal/clapi"

// Status is an OpenCL cl_int status code. It is an error in the style of
// syscall.Errno: the value itself is comparable, so
// errors.Is(err, opencl.OutOfResources) works through any wrapping. Name
// returns the CL_ constant name, and a code matches usmbridge's error
// kinds: codes that mean "no OpenCL runtime here" usm.ErrNotAvailable,
// allocation failures usm.ErrMemory, argument errors that the caller
// controls usm.ErrValue.
type Status = clapi.Status

// The status codes a caller of this package may want to tell apart, named
// as in C without the CL_ prefix: those that say more than their usm error
// kind (the loader is there but no platform; device or host memory ran
// out; a size beyond what the device allocates at once). A generic
// argument error is usm.ErrValue, and an invalid cl_context or
// cl_command_queue is one the caller of an Unsafe function promised not to
// pass. Every code is reported with its C name.
const (
	PlatformNotFoundKHR Status = clapi.PlatformNotFoundKHR // no OpenCL runtime installed
	OutOfResources      Status = clapi.OutOfResources      // allocations, queue creation
	OutOfHostMemory     Status = clapi.OutOfHostMemory     // allocations
	InvalidBufferSize   Status = clapi.InvalidBufferSize   // e.g. an allocation too large
)

// Error is a failed OpenCL call: the entry point (Op), the Status it
// returned and, optionally, what it was asked (Detail). It unwraps to the
// Status, so it matches what the status matches.
type Error = clapi.Error
