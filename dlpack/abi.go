package dlpack

import "github.com/usmbridge/usmbridge/internal/dlabi"

// The parts of the DLPack 1.x C ABI a Go user names: the version
// (max_version, a tensor's version) and the device (dl_device,
// __dlpack_device__). Sizes equal dlpack.h on LP64 Linux (amd64, arm64);
// layout_test.go asserts them. The structs themselves (DLTensor, the two
// managed layouts), the element type (dtype.DataType) and the flag bits
// are internal/dlabi's: Export writes them, Import reads them into a
// Tensor, and a Go program that hands a Managed to C passes its Pointer.
type (
	Version    = dlabi.Version    // DLPackVersion, 8 bytes
	DeviceType = dlabi.DeviceType // DLDeviceType, 4 bytes
	Device     = dlabi.Device     // DLDevice, 8 bytes
)

// Device types used by usmbridge (all of dlpack.h's are in internal/dlabi).
const (
	CPU    DeviceType = dlabi.CPU    // kDLCPU = 1
	OneAPI DeviceType = dlabi.OneAPI // kDLOneAPI = 14
)

// ProducerVersion is the DLPack version usmbridge implements: 1.2, whose
// rule that strides are non-NULL for ndim > 0 it follows on export.
var ProducerVersion = Version{Major: 1, Minor: 2}

// maxNdim is the largest ndim usmbridge exports or imports (NumPy's limit).
const maxNdim = dlabi.MaxNdim
