package levelzero

import "github.com/usmbridge/usmbridge/levelzero/internal/zeapi"

// Status is a ze_result_t. Like syscall.Errno it is the numeric code
// itself and implements error, so errors.Is(err, ErrorOutOfDeviceMemory)
// works on any error of this package that carries a code. Name returns
// the C name, and a code matches usmbridge's error kinds:
// ErrorUninitialized is usm.ErrNotAvailable, out-of-memory codes
// usm.ErrMemory, argument errors usm.ErrValue.
type Status = zeapi.Status

// The ze_result_t codes a caller of this package may want to tell apart,
// named as in C without the ZE_RESULT_ prefix: those that say more than
// their usm error kind (a generic argument error is usm.ErrValue). Every
// code is reported with its C name.
const (
	ErrorUninitialized     Status = zeapi.ErrorUninitialized     // no usable driver
	ErrorDeviceLost        Status = zeapi.ErrorDeviceLost        // the device must be reset
	ErrorOutOfHostMemory   Status = zeapi.ErrorOutOfHostMemory   // allocations
	ErrorOutOfDeviceMemory Status = zeapi.ErrorOutOfDeviceMemory // allocations
	ErrorUnsupportedSize   Status = zeapi.ErrorUnsupportedSize   // e.g. an allocation too large
)

// Error is a failed Level Zero call: the entry point (Op), the code it
// returned (Status) and, optionally, what it was asked (Detail). It
// unwraps to the code, so it matches what the code matches.
type Error = zeapi.Error
