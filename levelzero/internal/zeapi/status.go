package zeapi

import (
	"strconv"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Status is a ze_result_t. Like syscall.Errno it is the numeric code
// itself and implements error, so errors.Is(err, ErrorUnsupportedSize)
// works on any error that carries the code.
type Status uint32

// The ze_result_t codes of the 1.8.12 headers (spec 1.4), named as in C
// without the ZE_RESULT_ prefix; the list was generated from ze_api.h and
// the layout test checks the names against the installed headers.
const (
	Success                           Status = 0          // ZE_RESULT_SUCCESS
	NotReady                          Status = 1          // ZE_RESULT_NOT_READY
	ErrorDeviceLost                   Status = 0x70000001 // ZE_RESULT_ERROR_DEVICE_LOST
	ErrorOutOfHostMemory              Status = 0x70000002 // ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
	ErrorOutOfDeviceMemory            Status = 0x70000003 // ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
	ErrorModuleBuildFailure           Status = 0x70000004 // ZE_RESULT_ERROR_MODULE_BUILD_FAILURE
	ErrorModuleLinkFailure            Status = 0x70000005 // ZE_RESULT_ERROR_MODULE_LINK_FAILURE
	ErrorDeviceRequiresReset          Status = 0x70000006 // ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET
	ErrorDeviceInLowPowerState        Status = 0x70000007 // ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE
	ExpErrorDeviceIsNotVertex         Status = 0x7ff00001 // ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX
	ExpErrorVertexIsNotDevice         Status = 0x7ff00002 // ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE
	ExpErrorRemoteDevice              Status = 0x7ff00003 // ZE_RESULT_EXP_ERROR_REMOTE_DEVICE
	ErrorInsufficientPermissions      Status = 0x70010000 // ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS
	ErrorNotAvailable                 Status = 0x70010001 // ZE_RESULT_ERROR_NOT_AVAILABLE
	ErrorDependencyUnavailable        Status = 0x70020000 // ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE
	WarningDroppedData                Status = 0x70020001 // ZE_RESULT_WARNING_DROPPED_DATA
	ErrorUninitialized                Status = 0x78000001 // ZE_RESULT_ERROR_UNINITIALIZED
	ErrorUnsupportedVersion           Status = 0x78000002 // ZE_RESULT_ERROR_UNSUPPORTED_VERSION
	ErrorUnsupportedFeature           Status = 0x78000003 // ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
	ErrorInvalidArgument              Status = 0x78000004 // ZE_RESULT_ERROR_INVALID_ARGUMENT
	ErrorInvalidNullHandle            Status = 0x78000005 // ZE_RESULT_ERROR_INVALID_NULL_HANDLE
	ErrorHandleObjectInUse            Status = 0x78000006 // ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE
	ErrorInvalidNullPointer           Status = 0x78000007 // ZE_RESULT_ERROR_INVALID_NULL_POINTER
	ErrorInvalidSize                  Status = 0x78000008 // ZE_RESULT_ERROR_INVALID_SIZE
	ErrorUnsupportedSize              Status = 0x78000009 // ZE_RESULT_ERROR_UNSUPPORTED_SIZE
	ErrorUnsupportedAlignment         Status = 0x7800000a // ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT
	ErrorInvalidSynchronizationObject Status = 0x7800000b // ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT
	ErrorInvalidEnumeration           Status = 0x7800000c // ZE_RESULT_ERROR_INVALID_ENUMERATION
	ErrorUnsupportedEnumeration       Status = 0x7800000d // ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION
	ErrorUnsupportedImageFormat       Status = 0x7800000e // ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT
	ErrorInvalidNativeBinary          Status = 0x7800000f // ZE_RESULT_ERROR_INVALID_NATIVE_BINARY
	ErrorInvalidGlobalName            Status = 0x78000010 // ZE_RESULT_ERROR_INVALID_GLOBAL_NAME
	ErrorInvalidKernelName            Status = 0x78000011 // ZE_RESULT_ERROR_INVALID_KERNEL_NAME
	ErrorInvalidFunctionName          Status = 0x78000012 // ZE_RESULT_ERROR_INVALID_FUNCTION_NAME
	ErrorInvalidGroupSizeDimension    Status = 0x78000013 // ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION
	ErrorInvalidGlobalWidthDimension  Status = 0x78000014 // ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION
	ErrorInvalidKernelArgumentIndex   Status = 0x78000015 // ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX
	ErrorInvalidKernelArgumentSize    Status = 0x78000016 // ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE
	ErrorInvalidKernelAttributeValue  Status = 0x78000017 // ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE
	ErrorInvalidModuleUnlinked        Status = 0x78000018 // ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED
	ErrorInvalidCommandListType       Status = 0x78000019 // ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE
	ErrorOverlappingRegions           Status = 0x7800001a // ZE_RESULT_ERROR_OVERLAPPING_REGIONS
	WarningActionRequired             Status = 0x7800001b // ZE_RESULT_WARNING_ACTION_REQUIRED
	ErrorUnknown                      Status = 0x7ffffffe // ZE_RESULT_ERROR_UNKNOWN
)

var statusNames = map[Status]string{
	Success:                           "ZE_RESULT_SUCCESS",
	NotReady:                          "ZE_RESULT_NOT_READY",
	ErrorDeviceLost:                   "ZE_RESULT_ERROR_DEVICE_LOST",
	ErrorOutOfHostMemory:              "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
	ErrorOutOfDeviceMemory:            "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
	ErrorModuleBuildFailure:           "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
	ErrorModuleLinkFailure:            "ZE_RESULT_ERROR_MODULE_LINK_FAILURE",
	ErrorDeviceRequiresReset:          "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET",
	ErrorDeviceInLowPowerState:        "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE",
	ExpErrorDeviceIsNotVertex:         "ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX",
	ExpErrorVertexIsNotDevice:         "ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE",
	ExpErrorRemoteDevice:              "ZE_RESULT_EXP_ERROR_REMOTE_DEVICE",
	ErrorInsufficientPermissions:      "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
	ErrorNotAvailable:                 "ZE_RESULT_ERROR_NOT_AVAILABLE",
	ErrorDependencyUnavailable:        "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
	WarningDroppedData:                "ZE_RESULT_WARNING_DROPPED_DATA",
	ErrorUninitialized:                "ZE_RESULT_ERROR_UNINITIALIZED",
	ErrorUnsupportedVersion:           "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
	ErrorUnsupportedFeature:           "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
	ErrorInvalidArgument:              "ZE_RESULT_ERROR_INVALID_ARGUMENT",
	ErrorInvalidNullHandle:            "ZE_RESULT_ERROR_INVALID_NULL_HANDLE",
	ErrorHandleObjectInUse:            "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE",
	ErrorInvalidNullPointer:           "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
	ErrorInvalidSize:                  "ZE_RESULT_ERROR_INVALID_SIZE",
	ErrorUnsupportedSize:              "ZE_RESULT_ERROR_UNSUPPORTED_SIZE",
	ErrorUnsupportedAlignment:         "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT",
	ErrorInvalidSynchronizationObject: "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT",
	ErrorInvalidEnumeration:           "ZE_RESULT_ERROR_INVALID_ENUMERATION",
	ErrorUnsupportedEnumeration:       "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION",
	ErrorUnsupportedImageFormat:       "ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT",
	ErrorInvalidNativeBinary:          "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY",
	ErrorInvalidGlobalName:            "ZE_RESULT_ERROR_INVALID_GLOBAL_NAME",
	ErrorInvalidKernelName:            "ZE_RESULT_ERROR_INVALID_KERNEL_NAME",
	ErrorInvalidFunctionName:          "ZE_RESULT_ERROR_INVALID_FUNCTION_NAME",
	ErrorInvalidGroupSizeDimension:    "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION",
	ErrorInvalidGlobalWidthDimension:  "ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION",
	ErrorInvalidKernelArgumentIndex:   "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX",
	ErrorInvalidKernelArgumentSize:    "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE",
	ErrorInvalidKernelAttributeValue:  "ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE",
	ErrorInvalidModuleUnlinked:        "ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED",
	ErrorInvalidCommandListType:       "ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE",
	ErrorOverlappingRegions:           "ZE_RESULT_ERROR_OVERLAPPING_REGIONS",
	WarningActionRequired:             "ZE_RESULT_WARNING_ACTION_REQUIRED",
	ErrorUnknown:                      "ZE_RESULT_ERROR_UNKNOWN",
}

// Name returns the C name of s, or "" if the code is not one of the 1.8.12
// headers (a newer driver may return codes this package does not know).
func (s Status) Name() string { return statusNames[s] }

// Error returns the C name and the hexadecimal code, e.g.
// "ZE_RESULT_ERROR_UNSUPPORTED_SIZE (0x78000009)".
func (s Status) Error() string {
	n := statusNames[s]
	if n == "" {
		n = "ze_result_t"
	}
	return n + " (0x" + strconv.FormatUint(uint64(s), 16) + ")"
}

// Is classifies codes by usmbridge's error kinds, so callers can test
// errors.Is(err, usm.ErrNotAvailable) without knowing Level Zero.
func (s Status) Is(target error) bool {
	k, ok := target.(*errkind.Kind)
	return ok && s.kind() == k
}

func (s Status) kind() *errkind.Kind {
	switch s {
	case ErrorUninitialized, ErrorNotAvailable, ErrorDependencyUnavailable,
		ErrorDeviceLost, ErrorInsufficientPermissions, ErrorUnsupportedVersion:
		return errkind.NotAvailable
	case ErrorOutOfHostMemory, ErrorOutOfDeviceMemory:
		return errkind.Memory
	case ErrorUnsupportedFeature, ErrorUnsupportedEnumeration:
		return errkind.NotSupported
	case ErrorInvalidArgument, ErrorInvalidNullHandle, ErrorInvalidNullPointer,
		ErrorInvalidSize, ErrorUnsupportedSize, ErrorUnsupportedAlignment,
		ErrorInvalidEnumeration, ErrorHandleObjectInUse, ErrorOverlappingRegions,
		ErrorInvalidCommandListType, ErrorInvalidSynchronizationObject:
		return errkind.Value
	}
	return nil
}

// Error is a failed Level Zero call: the entry point, the code it returned
// and, optionally, what it was asked. It unwraps to the Status, so it
// matches the usmbridge error kind of the code
// (ZE_RESULT_ERROR_UNINITIALIZED is errkind.NotAvailable, "runtime not
// available").
type Error struct {
	Op     string // the C entry point, e.g. "zeMemAllocDevice"
	Status Status
	Detail string // optional context, e.g. the size asked for
}

func (e *Error) Error() string {
	s := e.Op + " returned " + e.Status.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the Status.
func (e *Error) Unwrap() error { return e.Status }

// check turns a non-SUCCESS code into an *Error naming the call.
func check(op string, r uintptr) error {
	if s := Status(uint32(r)); s != Success {
		return &Error{Op: op, Status: s}
	}
	return nil
}

// checkf is check with a detail message, built only on failure.
func checkf(op string, r uintptr, detail func() string) error {
	if s := Status(uint32(r)); s != Success {
		return &Error{Op: op, Status: s, Detail: detail()}
	}
	return nil
}
