package clapi

import (
	"strconv"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Status is an OpenCL cl_int status code. It is an error in the style of
// syscall.Errno: the value itself is comparable, so errors.Is(err,
// InvalidValue) works through any wrapping. Codes that mean "no OpenCL
// runtime here" also match errkind.NotAvailable, allocation failures
// errkind.Memory, and argument errors that the caller controls
// errkind.Value.
type Status int32

// Status codes a bridge meets (CL/cl.h, cl_ext.h, cl_icd.h).
const (
	Success                     Status = 0
	DeviceNotFound              Status = -1
	DeviceNotAvailable          Status = -2
	CompilerNotAvailable        Status = -3
	MemObjectAllocationFailure  Status = -4
	OutOfResources              Status = -5
	OutOfHostMemory             Status = -6
	ProfilingInfoNotAvailable   Status = -7
	MemCopyOverlap              Status = -8
	MisalignedSubBufferOffset   Status = -13
	BuildProgramFailure         Status = -11
	ExecStatusErrorForEvents    Status = -14
	InvalidValue                Status = -30
	InvalidDeviceType           Status = -31
	InvalidPlatform             Status = -32
	InvalidDevice               Status = -33
	InvalidContext              Status = -34
	InvalidQueueProperties      Status = -35
	InvalidCommandQueue         Status = -36
	InvalidHostPtr              Status = -37
	InvalidMemObject            Status = -38
	InvalidBinary               Status = -42
	InvalidBuildOptions         Status = -43
	InvalidProgram              Status = -44
	InvalidProgramExecutable    Status = -45
	InvalidKernelName           Status = -46
	InvalidKernelDefinition     Status = -47
	InvalidKernel               Status = -48
	InvalidArgIndex             Status = -49
	InvalidArgValue             Status = -50
	InvalidArgSize              Status = -51
	InvalidKernelArgs           Status = -52
	InvalidWorkDimension        Status = -53
	InvalidWorkGroupSize        Status = -54
	InvalidWorkItemSize         Status = -55
	InvalidEventWaitList        Status = -57
	InvalidEvent                Status = -58
	InvalidOperation            Status = -59
	InvalidBufferSize           Status = -61
	InvalidGlobalWorkSize       Status = -63
	InvalidProperty             Status = -64
	InvalidDevicePartitionCount Status = -68
	PlatformNotFoundKHR         Status = -1001
)

var statusNames = map[Status]string{
	Success:                     "CL_SUCCESS",
	DeviceNotFound:              "CL_DEVICE_NOT_FOUND",
	DeviceNotAvailable:          "CL_DEVICE_NOT_AVAILABLE",
	CompilerNotAvailable:        "CL_COMPILER_NOT_AVAILABLE",
	MemObjectAllocationFailure:  "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	OutOfResources:              "CL_OUT_OF_RESOURCES",
	OutOfHostMemory:             "CL_OUT_OF_HOST_MEMORY",
	ProfilingInfoNotAvailable:   "CL_PROFILING_INFO_NOT_AVAILABLE",
	MemCopyOverlap:              "CL_MEM_COPY_OVERLAP",
	MisalignedSubBufferOffset:   "CL_MISALIGNED_SUB_BUFFER_OFFSET",
	BuildProgramFailure:         "CL_BUILD_PROGRAM_FAILURE",
	ExecStatusErrorForEvents:    "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
	InvalidValue:                "CL_INVALID_VALUE",
	InvalidDeviceType:           "CL_INVALID_DEVICE_TYPE",
	InvalidPlatform:             "CL_INVALID_PLATFORM",
	InvalidDevice:               "CL_INVALID_DEVICE",
	InvalidContext:              "CL_INVALID_CONTEXT",
	InvalidQueueProperties:      "CL_INVALID_QUEUE_PROPERTIES",
	InvalidCommandQueue:         "CL_INVALID_COMMAND_QUEUE",
	InvalidHostPtr:              "CL_INVALID_HOST_PTR",
	InvalidMemObject:            "CL_INVALID_MEM_OBJECT",
	InvalidBinary:               "CL_INVALID_BINARY",
	InvalidBuildOptions:         "CL_INVALID_BUILD_OPTIONS",
	InvalidProgram:              "CL_INVALID_PROGRAM",
	InvalidProgramExecutable:    "CL_INVALID_PROGRAM_EXECUTABLE",
	InvalidKernelName:           "CL_INVALID_KERNEL_NAME",
	InvalidKernelDefinition:     "CL_INVALID_KERNEL_DEFINITION",
	InvalidKernel:               "CL_INVALID_KERNEL",
	InvalidArgIndex:             "CL_INVALID_ARG_INDEX",
	InvalidArgValue:             "CL_INVALID_ARG_VALUE",
	InvalidArgSize:              "CL_INVALID_ARG_SIZE",
	InvalidKernelArgs:           "CL_INVALID_KERNEL_ARGS",
	InvalidWorkDimension:        "CL_INVALID_WORK_DIMENSION",
	InvalidWorkGroupSize:        "CL_INVALID_WORK_GROUP_SIZE",
	InvalidWorkItemSize:         "CL_INVALID_WORK_ITEM_SIZE",
	InvalidEventWaitList:        "CL_INVALID_EVENT_WAIT_LIST",
	InvalidEvent:                "CL_INVALID_EVENT",
	InvalidOperation:            "CL_INVALID_OPERATION",
	InvalidBufferSize:           "CL_INVALID_BUFFER_SIZE",
	InvalidGlobalWorkSize:       "CL_INVALID_GLOBAL_WORK_SIZE",
	InvalidProperty:             "CL_INVALID_PROPERTY",
	InvalidDevicePartitionCount: "CL_INVALID_DEVICE_PARTITION_COUNT",
	PlatformNotFoundKHR:         "CL_PLATFORM_NOT_FOUND_KHR",
}

// Name returns the CL_ constant name, or "" for a code without one.
func (s Status) Name() string { return statusNames[s] }

func (s Status) Error() string {
	if n := statusNames[s]; n != "" {
		return "opencl: " + n + " (" + strconv.Itoa(int(s)) + ")"
	}
	return "opencl: status " + strconv.Itoa(int(s))
}

// Is makes Status codes match the library's error kinds.
func (s Status) Is(target error) bool {
	switch target {
	case error(errkind.NotAvailable):
		return s == PlatformNotFoundKHR || s == DeviceNotFound || s == DeviceNotAvailable
	case error(errkind.Memory):
		return s == OutOfHostMemory || s == OutOfResources || s == MemObjectAllocationFailure
	case error(errkind.Value):
		switch s {
		case InvalidValue, InvalidBufferSize, InvalidBuildOptions, InvalidBinary, InvalidKernelName,
			InvalidKernelDefinition, InvalidArgIndex, InvalidArgValue, InvalidArgSize, InvalidKernelArgs,
			InvalidWorkDimension, InvalidWorkGroupSize, InvalidWorkItemSize, InvalidGlobalWorkSize:
			return true
		}
		return false
	}
	return false
}

// Error is a failed OpenCL call: the entry point, the status it returned
// and, optionally, what it was asked. It unwraps to the Status, so it
// matches what the status matches.
type Error struct {
	Op     string // the OpenCL function, e.g. "clFinish"
	Status Status
	Detail string // optional context, e.g. the size asked for
}

func (e *Error) Error() string {
	s := e.Op + ": " + e.Status.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the Status.
func (e *Error) Unwrap() error { return e.Status }

// check converts a returned cl_int (the low 32 bits of the result
// register) to an *Error naming the call; nil for CL_SUCCESS.
func check(op string, r uintptr) error {
	if s := Status(int32(uint32(r))); s != Success {
		return &Error{Op: op, Status: s}
	}
	return nil
}

// fail is the error of a call that reported status s through an
// out-parameter, or returned NULL with CL_SUCCESS: then something failed
// without saying what, and the error carries orElse.
func fail(op string, s int32, orElse Status) error {
	st := Status(s)
	if st == Success {
		st = orElse
	}
	return &Error{Op: op, Status: st}
}
