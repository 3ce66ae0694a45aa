//go:build cgo

package main

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
)

// The C half hands tensors to consumers that read them with dlpack.h's
// layout; internal/dlabi's is checked against dlpack.h in its own tests.
func TestCLayoutMatchesDLABI(t *testing.T) {
	var tn dlabi.Tensor
	var m dlabi.ManagedTensor
	var v dlabi.ManagedTensorVersioned
	var l exportledger.Ledger
	var x dlabi.ExchangeAPI
	want := map[string]uintptr{
		"ExchangeAPI":                      56, // dlpack.h 1.3 on LP64
		"ExchangeAPI.PrevAPI":              8,
		"ExchangeAPI.Allocator":            16,
		"ExchangeAPI.FromPyObject":         24,
		"ExchangeAPI.ToPyObject":           32,
		"ExchangeAPI.DLTensorFromPyObject": 40,
		"ExchangeAPI.CurrentWorkStream":    48,
		"Ledger.ExchangeExports":           unsafe.Offsetof(l.ExchangeExports),
		"Ledger.ReplayedLive":              unsafe.Offsetof(l.ReplayedLive),
		"Ledger":                           unsafe.Sizeof(l),
		"Ledger.FreeMagic":                 unsafe.Offsetof(l.FreeMagic),
		"Ledger.LiveExports":               unsafe.Offsetof(l.LiveExports),
		"Ledger.StrayDeletes":              unsafe.Offsetof(l.StrayDeletes),
		"Tensor":                           unsafe.Sizeof(tn),
		"Tensor.Device":                    unsafe.Offsetof(tn.Device),
		"Tensor.Ndim":                      unsafe.Offsetof(tn.Ndim),
		"Tensor.DType":                     unsafe.Offsetof(tn.DType),
		"Tensor.Shape":                     unsafe.Offsetof(tn.Shape),
		"Tensor.Strides":                   unsafe.Offsetof(tn.Strides),
		"Tensor.ByteOffset":                unsafe.Offsetof(tn.ByteOffset),
		"Managed":                          unsafe.Sizeof(m),
		"Managed.ManagerCtx":               unsafe.Offsetof(m.ManagerCtx),
		"Managed.Deleter":                  unsafe.Offsetof(m.Deleter),
		"Versioned":                        unsafe.Sizeof(v),
		"Versioned.ManagerCtx":             unsafe.Offsetof(v.ManagerCtx),
		"Versioned.Deleter":                unsafe.Offsetof(v.Deleter),
		"Versioned.Flags":                  unsafe.Offsetof(v.Flags),
		"Versioned.DLTensor":               unsafe.Offsetof(v.DLTensor),
		"Versioned.Version.Minor":          unsafe.Offsetof(v.Version.Minor),
	}
	assert.Equal(t, want, cLayout())
	// Go's consumer reads producers' tables with dlabi.ExchangeAPI.
	assert.Equal(t, []uintptr{56, 8, 16, 24, 32, 40, 48}, []uintptr{unsafe.Sizeof(x), unsafe.Offsetof(x.PrevAPI),
		unsafe.Offsetof(x.ManagedTensorAllocator), unsafe.Offsetof(x.ManagedTensorFromPyObjectNoSync),
		unsafe.Offsetof(x.ManagedTensorToPyObjectNoSync), unsafe.Offsetof(x.DLTensorFromPyObjectNoSync),
		unsafe.Offsetof(x.CurrentWorkStream)})
}
