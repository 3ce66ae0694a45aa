package levelzero

import "github.com/usmbridge/usmbridge/levelzero/internal/zeapi"

// Result is a ze_result_t. Like syscall.Errno it is the numeric code
// itself and implements error, so errors.Is(err, ResultErrorUnsupportedSize)
// works on any error of this package that carries a code. Name returns
// the C name; the code matches usmbridge's error kinds
// (ZE_RESULT_ERROR_UNINITIALIZED is usm.ErrNotAvailable).
type Result = zeapi.Status

// The ze_result_t codes the package reports.
const (
	ResultSuccess                      = zeapi.Success
	ResultNotReady                     = zeapi.NotReady
	ResultErrorDeviceLost              = zeapi.ErrorDeviceLost
	ResultErrorOutOfHostMemory         = zeapi.ErrorOutOfHostMemory
	ResultErrorOutOfDeviceMemory       = zeapi.ErrorOutOfDeviceMemory
	ResultErrorUninitialized           = zeapi.ErrorUninitialized
	ResultErrorUnsupportedFeature      = zeapi.ErrorUnsupportedFeature
	ResultErrorInvalidArgument         = zeapi.ErrorInvalidArgument
	ResultErrorUnsupportedSize         = zeapi.ErrorUnsupportedSize
	ResultErrorUnsupportedAlignment    = zeapi.ErrorUnsupportedAlignment
	ResultErrorUnknown                 = zeapi.ErrorUnknown
	ResultErrorInsufficientPermissions = zeapi.ErrorInsufficientPermissions
)

// Error is a failed Level Zero call: which entry point (Op), the code it
// returned (Status) and optional Detail. It unwraps to the code.
type Error = zeapi.Error
