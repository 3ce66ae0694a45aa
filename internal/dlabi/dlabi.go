// Package dlabi mirrors the DLPack 1.x C ABI (dlpack.h) as Go types whose
// size, alignment and field offsets equal the C ones on LP64 Linux
// (amd64, arm64). Tests assert every offset. Package dlpack re-exports
// these types; they live here so that typestr can map dtypes without
// importing dlpack.
package dlabi

import "runtime"

// Version is DLPackVersion.
type Version struct {
	Major uint32
	Minor uint32
}

// DeviceType is DLDeviceType (a C enum, 4 bytes).
type DeviceType int32

const (
	CPU          DeviceType = 1
	CUDA         DeviceType = 2
	CUDAHost     DeviceType = 3
	OpenCL       DeviceType = 4
	Vulkan       DeviceType = 7
	Metal        DeviceType = 8
	VPI          DeviceType = 9
	ROCM         DeviceType = 10
	ROCMHost     DeviceType = 11
	ExtDev       DeviceType = 12
	CUDAManaged  DeviceType = 13
	OneAPI       DeviceType = 14
	WebGPU       DeviceType = 15
	Hexagon      DeviceType = 16
	MAIA         DeviceType = 17
	Trn          DeviceType = 18
	maxKnownType            = Trn
)

var deviceNames = [...]string{
	CPU: "kDLCPU", CUDA: "kDLCUDA", CUDAHost: "kDLCUDAHost", OpenCL: "kDLOpenCL",
	Vulkan: "kDLVulkan", Metal: "kDLMetal", VPI: "kDLVPI", ROCM: "kDLROCM",
	ROCMHost: "kDLROCMHost", ExtDev: "kDLExtDev", CUDAManaged: "kDLCUDAManaged",
	OneAPI: "kDLOneAPI", WebGPU: "kDLWebGPU", Hexagon: "kDLHexagon", MAIA: "kDLMAIA",
	Trn: "kDLTrn",
}

// String returns the dlpack.h name, or "DLDeviceType(N)" for values the
// header does not define.
func (t DeviceType) String() string {
	if t >= 0 && t <= maxKnownType && deviceNames[t] != "" {
		return deviceNames[t]
	}
	return "DLDeviceType(" + itoa(int64(t)) + ")"
}

// Known reports whether dlpack.h 1.3 defines t.
func (t DeviceType) Known() bool { return t >= 0 && t <= maxKnownType && deviceNames[t] != "" }

// Device is DLDevice.
type Device struct {
	Type DeviceType
	ID   int32
}

// MaxNdim is the largest ndim usmbridge exports or imports: NumPy's limit,
// dlpack's and pyext's (ubx.h's UBX_MAX_NDIM: pyext's abi_test.go holds
// ubx_result, which has room for that many, to its Go mirror).
const MaxNdim = 64

// AcceptsNoSync reports whether __dlpack__(stream=-1), the array API's "do
// not synchronize", is accepted for an array on d: only kDLOneAPI arrays
// have streams (RATIONALE.md, "__dlpack__'s stream"). pybridge reads the
// stream keyword by it, and pyext's C half answers a plain stream=-1 by it
// (the view's no_sync).
func AcceptsNoSync(d Device) bool { return d.Type == OneAPI }

func (d Device) String() string { return "(" + d.Type.String() + ", " + itoa(int64(d.ID)) + ")" }

// TypeCode is DLDataTypeCode, stored in DLDataType as a uint8.
type TypeCode uint8

const (
	Int          TypeCode = 0
	UInt         TypeCode = 1
	Float        TypeCode = 2
	OpaqueHandle TypeCode = 3
	Bfloat       TypeCode = 4
	Complex      TypeCode = 5
	Bool         TypeCode = 6
	// 7..17 are the FP8/FP6/FP4 codes added in DLPack 1.1.
	Float8E3M4        TypeCode = 7
	Float8E4M3        TypeCode = 8
	Float8E4M3B11FNUZ TypeCode = 9
	Float8E4M3FN      TypeCode = 10
	Float8E4M3FNUZ    TypeCode = 11
	Float8E5M2        TypeCode = 12
	Float8E5M2FNUZ    TypeCode = 13
	Float8E8M0FNU     TypeCode = 14
	Float6E2M3FN      TypeCode = 15
	Float6E3M2FN      TypeCode = 16
	Float4E2M1FN      TypeCode = 17
	maxKnownTypeCode           = Float4E2M1FN
)

var codeNames = [...]string{
	"kDLInt", "kDLUInt", "kDLFloat", "kDLOpaqueHandle", "kDLBfloat", "kDLComplex", "kDLBool",
	"kDLFloat8_e3m4", "kDLFloat8_e4m3", "kDLFloat8_e4m3b11fnuz", "kDLFloat8_e4m3fn",
	"kDLFloat8_e4m3fnuz", "kDLFloat8_e5m2", "kDLFloat8_e5m2fnuz", "kDLFloat8_e8m0fnu",
	"kDLFloat6_e2m3fn", "kDLFloat6_e3m2fn", "kDLFloat4_e2m1fn",
}

// String is the dlpack.h name ("kDLBfloat"), or "DLDataTypeCode(N)" for
// codes the header does not define.
func (c TypeCode) String() string {
	if c <= maxKnownTypeCode {
		return codeNames[c]
	}
	return "DLDataTypeCode(" + itoa(int64(c)) + ")"
}

// DataType is DLDataType.
type DataType struct {
	Code  TypeCode
	Bits  uint8
	Lanes uint16
}

// String is "(code C, bits B, lanes L)", the numbers as the struct holds
// them, so that a message names exactly what a producer wrote.
func (d DataType) String() string {
	return "(code " + itoa(int64(d.Code)) + ", bits " + itoa(int64(d.Bits)) + ", lanes " + itoa(int64(d.Lanes)) + ")"
}

// Tensor is DLTensor. Pointers are uintptr because they always point into
// C memory (never the Go heap).
type Tensor struct {
	Data       uintptr
	Device     Device
	Ndim       int32
	DType      DataType
	Shape      uintptr // *int64
	Strides    uintptr // *int64, in elements
	ByteOffset uint64
}

// ManagedTensor is the legacy DLManagedTensor.
type ManagedTensor struct {
	DLTensor   Tensor
	ManagerCtx uintptr
	Deleter    uintptr // void (*)(DLManagedTensor*)
}

// ManagedTensorVersioned is DLManagedTensorVersioned.
type ManagedTensorVersioned struct {
	Version    Version
	ManagerCtx uintptr
	Deleter    uintptr // void (*)(DLManagedTensorVersioned*)
	Flags      uint64
	DLTensor   Tensor
}

// Flag bits of ManagedTensorVersioned.Flags.
const (
	FlagReadOnly            uint64 = 1 << 0
	FlagIsCopied            uint64 = 1 << 1
	FlagIsSubbyteTypePadded uint64 = 1 << 2
)

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var b [24]byte
	i := len(b)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	for u > 0 {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// MaxUserAddress bounds the bytes a tensor may touch: no process memory
// lies above it (x86-64 user space ends below 2^47, or 2^56 with 5-level
// paging; arm64 below 2^52), so a window reaching past it (byte_offset
// 2^63, say) can only fault in the consumer, or alias through ignored tag
// bits. Other architectures are bounded by wrap-around alone. dlpack's
// import checks it, and so does the C import of the extension modules,
// which reads it from here.
var MaxUserAddress = func() uint64 {
	switch runtime.GOARCH {
	case "amd64":
		return 1 << 56
	case "arm64":
		return 1 << 52
	}
	return uint64(^uintptr(0))
}()
