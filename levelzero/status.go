package levelzero

import "github.com/usmbridge/usmbridge/levelzero/internal/zeapi"

// Status is a ze_result_t. Like syscall.Errno it is the numeric code
// itself and implements error, so errors.Is(err, ErrorUnsupportedSize)
// works on any error of this package that carries a code. Name returns
// the C name; the code matches usmbridge's error kinds
// (ZE_RESULT_ERROR_UNINITIALIZED is usm.ErrNotAvailable).
type Status = zeapi.Status

// The ze_result_t codes the package reports.
const (
	Success                      = zeapi.Success
	NotReady                     = zeapi.NotReady
	ErrorDeviceLost              = zeapi.ErrorDeviceLost
	ErrorOutOfHostMemory         = zeapi.ErrorOutOfHostMemory
	ErrorOutOfDeviceMemory       = zeapi.ErrorOutOfDeviceMemory
	ErrorUninitialized           = zeapi.ErrorUninitialized
	ErrorUnsupportedFeature      = zeapi.ErrorUnsupportedFeature
	ErrorInvalidArgument         = zeapi.ErrorInvalidArgument
	ErrorUnsupportedSize         = zeapi.ErrorUnsupportedSize
	ErrorUnsupportedAlignment    = zeapi.ErrorUnsupportedAlignment
	ErrorUnknown                 = zeapi.ErrorUnknown
	ErrorInsufficientPermissions = zeapi.ErrorInsufficientPermissions
)

// Error is a failed Level Zero call: which entry point (Op), the code it
// returned (Status) and optional Detail. It unwraps to the code.
type Error = zeapi.Error
