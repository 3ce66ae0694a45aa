package dlpack_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
)

// The offsets below are those of dlpack.h compiled for x86-64 (LP64, SysV)
// and arm64 Linux (the same on both).
func TestABILayout(t *testing.T) {
	var v dlpack.Version
	assert.EqualValues(t, 8, unsafe.Sizeof(v))
	assert.EqualValues(t, 4, unsafe.Alignof(v))
	assert.EqualValues(t, 4, unsafe.Offsetof(v.Minor))

	var d dlpack.Device
	assert.EqualValues(t, 8, unsafe.Sizeof(d))
	assert.EqualValues(t, 4, unsafe.Offsetof(d.ID))

	var dt dlabi.DataType
	assert.EqualValues(t, 4, unsafe.Sizeof(dt))
	assert.EqualValues(t, 2, unsafe.Alignof(dt))
	assert.EqualValues(t, 1, unsafe.Offsetof(dt.Bits))
	assert.EqualValues(t, 2, unsafe.Offsetof(dt.Lanes))

	var tn dlabi.Tensor
	assert.EqualValues(t, 48, unsafe.Sizeof(tn))
	assert.EqualValues(t, 8, unsafe.Alignof(tn))
	for name, got := range map[string]uintptr{
		"data": unsafe.Offsetof(tn.Data), "device": unsafe.Offsetof(tn.Device), "ndim": unsafe.Offsetof(tn.Ndim),
		"dtype": unsafe.Offsetof(tn.DType), "shape": unsafe.Offsetof(tn.Shape), "strides": unsafe.Offsetof(tn.Strides),
		"byte_offset": unsafe.Offsetof(tn.ByteOffset),
	} {
		want := map[string]uintptr{"data": 0, "device": 8, "ndim": 16, "dtype": 20, "shape": 24, "strides": 32, "byte_offset": 40}[name]
		assert.Equal(t, want, got, "DLTensor.%s", name)
	}

	var m dlabi.ManagedTensor
	assert.EqualValues(t, 64, unsafe.Sizeof(m))
	assert.EqualValues(t, 48, unsafe.Offsetof(m.ManagerCtx))
	assert.EqualValues(t, 56, unsafe.Offsetof(m.Deleter))

	var mv dlabi.ManagedTensorVersioned
	assert.EqualValues(t, 80, unsafe.Sizeof(mv))
	assert.EqualValues(t, 0, unsafe.Offsetof(mv.Version))
	assert.EqualValues(t, 8, unsafe.Offsetof(mv.ManagerCtx))
	assert.EqualValues(t, 16, unsafe.Offsetof(mv.Deleter))
	assert.EqualValues(t, 24, unsafe.Offsetof(mv.Flags))
	assert.EqualValues(t, 32, unsafe.Offsetof(mv.DLTensor))
	// Absolute offsets inside the versioned struct.
	base := unsafe.Offsetof(mv.DLTensor)
	assert.EqualValues(t, 40, base+unsafe.Offsetof(mv.DLTensor.Device))
	assert.EqualValues(t, 44, base+unsafe.Offsetof(mv.DLTensor.Device)+unsafe.Offsetof(mv.DLTensor.Device.ID))
	assert.EqualValues(t, 48, base+unsafe.Offsetof(mv.DLTensor.Ndim))
	assert.EqualValues(t, 52, base+unsafe.Offsetof(mv.DLTensor.DType))
	assert.EqualValues(t, 56, base+unsafe.Offsetof(mv.DLTensor.Shape))
	assert.EqualValues(t, 64, base+unsafe.Offsetof(mv.DLTensor.Strides))
	assert.EqualValues(t, 72, base+unsafe.Offsetof(mv.DLTensor.ByteOffset))
}

func TestEnumValues(t *testing.T) {
	assert.EqualValues(t, 1, dlpack.CPU)
	assert.EqualValues(t, 14, dlpack.OneAPI)
	assert.EqualValues(t, 1, dlabi.FlagReadOnly)
	assert.EqualValues(t, 2, dlabi.FlagIsCopied)
	assert.EqualValues(t, 4, dlabi.FlagIsSubbyteTypePadded)
	assert.Equal(t, "kDLOneAPI", dlpack.OneAPI.String())
	assert.Equal(t, "DLDeviceType(5)", dlpack.DeviceType(5).String())
	assert.Equal(t, "DLDeviceType(-3)", dlpack.DeviceType(-3).String())
}
