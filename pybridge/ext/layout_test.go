//go:build cgo

package main

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
)

// The C half hands tensors to consumers that read them with dlpack.h's
// layout; internal/dlabi's is checked against dlpack.h in its own tests.
func TestCLayoutMatchesDLABI(t *testing.T) {
	var tn dlabi.Tensor
	var m dlabi.ManagedTensor
	var v dlabi.ManagedTensorVersioned
	var l dlpack.Ledger
	want := map[string]uintptr{
		"Ledger":                  unsafe.Sizeof(l),
		"Ledger.FreeMagic":        unsafe.Offsetof(l.FreeMagic),
		"Ledger.LiveExports":      unsafe.Offsetof(l.LiveExports),
		"Ledger.StrayDeletes":     unsafe.Offsetof(l.StrayDeletes),
		"Tensor":                  unsafe.Sizeof(tn),
		"Tensor.Device":           unsafe.Offsetof(tn.Device),
		"Tensor.Ndim":             unsafe.Offsetof(tn.Ndim),
		"Tensor.DType":            unsafe.Offsetof(tn.DType),
		"Tensor.Shape":            unsafe.Offsetof(tn.Shape),
		"Tensor.Strides":          unsafe.Offsetof(tn.Strides),
		"Tensor.ByteOffset":       unsafe.Offsetof(tn.ByteOffset),
		"Managed":                 unsafe.Sizeof(m),
		"Managed.ManagerCtx":      unsafe.Offsetof(m.ManagerCtx),
		"Managed.Deleter":         unsafe.Offsetof(m.Deleter),
		"Versioned":               unsafe.Sizeof(v),
		"Versioned.ManagerCtx":    unsafe.Offsetof(v.ManagerCtx),
		"Versioned.Deleter":       unsafe.Offsetof(v.Deleter),
		"Versioned.Flags":         unsafe.Offsetof(v.Flags),
		"Versioned.DLTensor":      unsafe.Offsetof(v.DLTensor),
		"Versioned.Version.Minor": unsafe.Offsetof(v.Version.Minor),
	}
	assert.Equal(t, want, cLayout())
}
