package opencl

import "github.com/usmbridge/usmbridge/opencl/internal/clapi"

// Status is an OpenCL cl_int status code. It is an error in the style of
// syscall.Errno: the value itself is comparable, so
// errors.Is(err, opencl.InvalidValue) works through any wrapping. Codes
// that mean "no OpenCL runtime here" also match usm.ErrNotAvailable,
// allocation failures match usm.ErrMemory, and argument errors that the
// caller controls match usm.ErrValue. Name returns the CL_ constant name.
type Status = clapi.Status

// Status codes a bridge meets (CL/cl.h, cl_ext.h, cl_icd.h).
const (
	Success                     = clapi.Success
	DeviceNotFound              = clapi.DeviceNotFound
	DeviceNotAvailable          = clapi.DeviceNotAvailable
	CompilerNotAvailable        = clapi.CompilerNotAvailable
	MemObjectAllocationFailure  = clapi.MemObjectAllocationFailure
	OutOfResources              = clapi.OutOfResources
	OutOfHostMemory             = clapi.OutOfHostMemory
	ProfilingInfoNotAvailable   = clapi.ProfilingInfoNotAvailable
	MemCopyOverlap              = clapi.MemCopyOverlap
	MisalignedSubBufferOffset   = clapi.MisalignedSubBufferOffset
	ExecStatusErrorForEvents    = clapi.ExecStatusErrorForEvents
	InvalidValue                = clapi.InvalidValue
	InvalidDeviceType           = clapi.InvalidDeviceType
	InvalidPlatform             = clapi.InvalidPlatform
	InvalidDevice               = clapi.InvalidDevice
	InvalidContext              = clapi.InvalidContext
	InvalidQueueProperties      = clapi.InvalidQueueProperties
	InvalidCommandQueue         = clapi.InvalidCommandQueue
	InvalidHostPtr              = clapi.InvalidHostPtr
	InvalidMemObject            = clapi.InvalidMemObject
	InvalidOperation            = clapi.InvalidOperation
	InvalidEventWaitList        = clapi.InvalidEventWaitList
	InvalidEvent                = clapi.InvalidEvent
	InvalidBufferSize           = clapi.InvalidBufferSize
	InvalidProperty             = clapi.InvalidProperty
	InvalidDevicePartitionCount = clapi.InvalidDevicePartitionCount
	PlatformNotFoundKHR         = clapi.PlatformNotFoundKHR
)

// Error is a failed OpenCL call: which entry point (Op), the Status it
// returned, and optional Detail. It unwraps to the Status, so it matches
// what the status matches.
type Error = clapi.Error
