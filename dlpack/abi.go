package dlpack

import "github.com/usmbridge/usmbridge/internal/dlabi"

// The DLPack 1.x C ABI. Sizes and offsets equal dlpack.h on LP64 Linux
// (amd64, arm64); layout_test.go asserts each of them.
type (
	Version                = dlabi.Version                // DLPackVersion, 8 bytes
	DeviceType             = dlabi.DeviceType             // DLDeviceType, 4 bytes
	Device                 = dlabi.Device                 // DLDevice, 8 bytes
	TypeCode               = dlabi.TypeCode               // DLDataTypeCode, stored as uint8
	DataType               = dlabi.DataType               // DLDataType, 4 bytes
	DLTensor               = dlabi.Tensor                 // DLTensor, 48 bytes
	ManagedTensor          = dlabi.ManagedTensor          // legacy DLManagedTensor, 64 bytes
	ManagedTensorVersioned = dlabi.ManagedTensorVersioned // DLManagedTensorVersioned, 80 bytes
)

// Device types used by usmbridge (all of dlpack.h's are in internal/dlabi).
const (
	CPU    DeviceType = dlabi.CPU    // kDLCPU = 1
	OneAPI DeviceType = dlabi.OneAPI // kDLOneAPI = 14
)

// Flag bits of ManagedTensorVersioned.Flags.
const (
	FlagReadOnly            = dlabi.FlagReadOnly
	FlagIsCopied            = dlabi.FlagIsCopied
	FlagIsSubbyteTypePadded = dlabi.FlagIsSubbyteTypePadded
)

// ProducerVersion is the DLPack version usmbridge implements: 1.2, whose
// rule that strides are non-NULL for ndim > 0 it follows on export.
var ProducerVersion = Version{Major: 1, Minor: 2}

// MaxNdim is the largest ndim usmbridge exports or imports (NumPy's limit).
const MaxNdim = 64
