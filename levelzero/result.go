package levelzero

import (
	"strconv"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Result is a ze_result_t. Like syscall.Errno it is the numeric code
// itself and implements error, so errors.Is(err, ResultErrorUnsupportedSize)
// works on any error of this package that carries a code.
type Result uint32

// The ze_result_t codes of the 1.8.12 headers (spec 1.4), with the C names
// beside them; the list was generated from ze_api.h and names() below is
// checked against it by the layout test.
const (
	ResultSuccess                           Result = 0          // ZE_RESULT_SUCCESS
	ResultNotReady                          Result = 1          // ZE_RESULT_NOT_READY
	ResultErrorDeviceLost                   Result = 0x70000001 // ZE_RESULT_ERROR_DEVICE_LOST
	ResultErrorOutOfHostMemory              Result = 0x70000002 // ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
	ResultErrorOutOfDeviceMemory            Result = 0x70000003 // ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
	ResultErrorModuleBuildFailure           Result = 0x70000004 // ZE_RESULT_ERROR_MODULE_BUILD_FAILURE
	ResultErrorModuleLinkFailure            Result = 0x70000005 // ZE_RESULT_ERROR_MODULE_LINK_FAILURE
	ResultErrorDeviceRequiresReset          Result = 0x70000006 // ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET
	ResultErrorDeviceInLowPowerState        Result = 0x70000007 // ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE
	ResultExpErrorDeviceIsNotVertex         Result = 0x7ff00001 // ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX
	ResultExpErrorVertexIsNotDevice         Result = 0x7ff00002 // ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE
	ResultExpErrorRemoteDevice              Result = 0x7ff00003 // ZE_RESULT_EXP_ERROR_REMOTE_DEVICE
	ResultErrorInsufficientPermissions      Result = 0x70010000 // ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS
	ResultErrorNotAvailable                 Result = 0x70010001 // ZE_RESULT_ERROR_NOT_AVAILABLE
	ResultErrorDependencyUnavailable        Result = 0x70020000 // ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE
	ResultWarningDroppedData                Result = 0x70020001 // ZE_RESULT_WARNING_DROPPED_DATA
	ResultErrorUninitialized                Result = 0x78000001 // ZE_RESULT_ERROR_UNINITIALIZED
	ResultErrorUnsupportedVersion           Result = 0x78000002 // ZE_RESULT_ERROR_UNSUPPORTED_VERSION
	ResultErrorUnsupportedFeature           Result = 0x78000003 // ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
	ResultErrorInvalidArgument              Result = 0x78000004 // ZE_RESULT_ERROR_INVALID_ARGUMENT
	ResultErrorInvalidNullHandle            Result = 0x78000005 // ZE_RESULT_ERROR_INVALID_NULL_HANDLE
	ResultErrorHandleObjectInUse            Result = 0x78000006 // ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE
	ResultErrorInvalidNullPointer           Result = 0x78000007 // ZE_RESULT_ERROR_INVALID_NULL_POINTER
	ResultErrorInvalidSize                  Result = 0x78000008 // ZE_RESULT_ERROR_INVALID_SIZE
	ResultErrorUnsupportedSize              Result = 0x78000009 // ZE_RESULT_ERROR_UNSUPPORTED_SIZE
	ResultErrorUnsupportedAlignment         Result = 0x7800000a // ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT
	ResultErrorInvalidSynchronizationObject Result = 0x7800000b // ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT
	ResultErrorInvalidEnumeration           Result = 0x7800000c // ZE_RESULT_ERROR_INVALID_ENUMERATION
	ResultErrorUnsupportedEnumeration       Result = 0x7800000d // ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION
	ResultErrorUnsupportedImageFormat       Result = 0x7800000e // ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT
	ResultErrorInvalidNativeBinary          Result = 0x7800000f // ZE_RESULT_ERROR_INVALID_NATIVE_BINARY
	ResultErrorInvalidGlobalName            Result = 0x78000010 // ZE_RESULT_ERROR_INVALID_GLOBAL_NAME
	ResultErrorInvalidKernelName            Result = 0x78000011 // ZE_RESULT_ERROR_INVALID_KERNEL_NAME
	ResultErrorInvalidFunctionName          Result = 0x78000012 // ZE_RESULT_ERROR_INVALID_FUNCTION_NAME
	ResultErrorInvalidGroupSizeDimension    Result = 0x78000013 // ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION
	ResultErrorInvalidGlobalWidthDimension  Result = 0x78000014 // ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION
	ResultErrorInvalidKernelArgumentIndex   Result = 0x78000015 // ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX
	ResultErrorInvalidKernelArgumentSize    Result = 0x78000016 // ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE
	ResultErrorInvalidKernelAttributeValue  Result = 0x78000017 // ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE
	ResultErrorInvalidModuleUnlinked        Result = 0x78000018 // ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED
	ResultErrorInvalidCommandListType       Result = 0x78000019 // ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE
	ResultErrorOverlappingRegions           Result = 0x7800001a // ZE_RESULT_ERROR_OVERLAPPING_REGIONS
	ResultWarningActionRequired             Result = 0x7800001b // ZE_RESULT_WARNING_ACTION_REQUIRED
	ResultErrorUnknown                      Result = 0x7ffffffe // ZE_RESULT_ERROR_UNKNOWN
)

var resultNames = map[Result]string{
	ResultSuccess:                           "ZE_RESULT_SUCCESS",
	ResultNotReady:                          "ZE_RESULT_NOT_READY",
	ResultErrorDeviceLost:                   "ZE_RESULT_ERROR_DEVICE_LOST",
	ResultErrorOutOfHostMemory:              "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
	ResultErrorOutOfDeviceMemory:            "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
	ResultErrorModuleBuildFailure:           "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
	ResultErrorModuleLinkFailure:            "ZE_RESULT_ERROR_MODULE_LINK_FAILURE",
	ResultErrorDeviceRequiresReset:          "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET",
	ResultErrorDeviceInLowPowerState:        "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE",
	ResultExpErrorDeviceIsNotVertex:         "ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX",
	ResultExpErrorVertexIsNotDevice:         "ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE",
	ResultExpErrorRemoteDevice:              "ZE_RESULT_EXP_ERROR_REMOTE_DEVICE",
	ResultErrorInsufficientPermissions:      "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
	ResultErrorNotAvailable:                 "ZE_RESULT_ERROR_NOT_AVAILABLE",
	ResultErrorDependencyUnavailable:        "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
	ResultWarningDroppedData:                "ZE_RESULT_WARNING_DROPPED_DATA",
	ResultErrorUninitialized:                "ZE_RESULT_ERROR_UNINITIALIZED",
	ResultErrorUnsupportedVersion:           "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
	ResultErrorUnsupportedFeature:           "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
	ResultErrorInvalidArgument:              "ZE_RESULT_ERROR_INVALID_ARGUMENT",
	ResultErrorInvalidNullHandle:            "ZE_RESULT_ERROR_INVALID_NULL_HANDLE",
	ResultErrorHandleObjectInUse:            "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE",
	ResultErrorInvalidNullPointer:           "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
	ResultErrorInvalidSize:                  "ZE_RESULT_ERROR_INVALID_SIZE",
	ResultErrorUnsupportedSize:              "ZE_RESULT_ERROR_UNSUPPORTED_SIZE",
	ResultErrorUnsupportedAlignment:         "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT",
	ResultErrorInvalidSynchronizationObject: "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT",
	ResultErrorInvalidEnumeration:           "ZE_RESULT_ERROR_INVALID_ENUMERATION",
	ResultErrorUnsupportedEnumeration:       "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION",
	ResultErrorUnsupportedImageFormat:       "ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT",
	ResultErrorInvalidNativeBinary:          "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY",
	ResultErrorInvalidGlobalName:            "ZE_RESULT_ERROR_INVALID_GLOBAL_NAME",
	ResultErrorInvalidKernelName:            "ZE_RESULT_ERROR_INVALID_KERNEL_NAME",
	ResultErrorInvalidFunctionName:          "ZE_RESULT_ERROR_INVALID_FUNCTION_NAME",
	ResultErrorInvalidGroupSizeDimension:    "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION",
	ResultErrorInvalidGlobalWidthDimension:  "ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION",
	ResultErrorInvalidKernelArgumentIndex:   "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX",
	ResultErrorInvalidKernelArgumentSize:    "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE",
	ResultErrorInvalidKernelAttributeValue:  "ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE",
	ResultErrorInvalidModuleUnlinked:        "ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED",
	ResultErrorInvalidCommandListType:       "ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE",
	ResultErrorOverlappingRegions:           "ZE_RESULT_ERROR_OVERLAPPING_REGIONS",
	ResultWarningActionRequired:             "ZE_RESULT_WARNING_ACTION_REQUIRED",
	ResultErrorUnknown:                      "ZE_RESULT_ERROR_UNKNOWN",
}

// Name returns the C name of r, or "" if the code is not one of the 1.8.12
// headers (a newer driver may return codes this package does not know).
func (r Result) Name() string { return resultNames[r] }

// Error returns the C name and the hexadecimal code, e.g.
// "ZE_RESULT_ERROR_UNSUPPORTED_SIZE (0x78000009)".
func (r Result) Error() string {
	n := resultNames[r]
	if n == "" {
		n = "ze_result_t"
	}
	return n + " (0x" + strconv.FormatUint(uint64(r), 16) + ")"
}

// Is classifies codes by usmbridge's error kinds, so callers can test
// errors.Is(err, usm.ErrNotAvailable) without knowing Level Zero.
func (r Result) Is(target error) bool {
	k, ok := target.(*errkind.Kind)
	return ok && r.kind() == k
}

func (r Result) kind() *errkind.Kind {
	switch r {
	case ResultErrorUninitialized, ResultErrorNotAvailable, ResultErrorDependencyUnavailable,
		ResultErrorDeviceLost, ResultErrorInsufficientPermissions, ResultErrorUnsupportedVersion:
		return errkind.NotAvailable
	case ResultErrorOutOfHostMemory, ResultErrorOutOfDeviceMemory:
		return errkind.Memory
	case ResultErrorUnsupportedFeature, ResultErrorUnsupportedEnumeration:
		return errkind.NotSupported
	case ResultErrorInvalidArgument, ResultErrorInvalidNullHandle, ResultErrorInvalidNullPointer,
		ResultErrorInvalidSize, ResultErrorUnsupportedSize, ResultErrorUnsupportedAlignment,
		ResultErrorInvalidEnumeration, ResultErrorHandleObjectInUse, ResultErrorOverlappingRegions,
		ResultErrorInvalidCommandListType, ResultErrorInvalidSynchronizationObject:
		return errkind.Value
	}
	return nil
}

// Error is a failed Level Zero call: which entry point, and the code it
// returned. It unwraps to the Result, and matches the usmbridge error kind
// of the code (ZE_RESULT_ERROR_UNINITIALIZED is errkind.NotAvailable,
// "runtime not available").
type Error struct {
	Call   string // the C entry point, e.g. "zeMemAllocDevice"
	Result Result
	Detail string // optional context, e.g. the size asked for
}

func (e *Error) Error() string {
	s := "levelzero: " + e.Call + " returned " + e.Result.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the Result.
func (e *Error) Unwrap() error { return e.Result }

// check turns a non-SUCCESS code into an *Error naming the call.
func check(call string, r Result) error {
	if r == ResultSuccess {
		return nil
	}
	return &Error{Call: call, Result: r}
}

// checkf is check with a detail message.
func checkf(call string, r Result, detail string) error {
	if r == ResultSuccess {
		return nil
	}
	return &Error{Call: call, Result: r, Detail: detail}
}
