package main

// #include "ext.h"
import "C"

import "unsafe"

// cLayout reports the C compiler's layout of ext.h's DLPack structs and
// of ub_ledger, for layout_test.go to hold against internal/dlabi and
// exportledger.Ledger (cgo is not allowed in
// test files).
func cLayout() map[string]uintptr {
	var t C.ub_dl_tensor
	var m C.ub_dl_managed
	var v C.ub_dl_managed_versioned
	var l C.ub_ledger
	var x C.ub_dl_exchange_api
	return map[string]uintptr{
		"ExchangeAPI":                      unsafe.Sizeof(x),
		"ExchangeAPI.PrevAPI":              unsafe.Offsetof(x.header.prev_api),
		"ExchangeAPI.Allocator":            unsafe.Offsetof(x.managed_tensor_allocator),
		"ExchangeAPI.FromPyObject":         unsafe.Offsetof(x.managed_tensor_from_py_object_no_sync),
		"ExchangeAPI.ToPyObject":           unsafe.Offsetof(x.managed_tensor_to_py_object_no_sync),
		"ExchangeAPI.DLTensorFromPyObject": unsafe.Offsetof(x.dltensor_from_py_object_no_sync),
		"ExchangeAPI.CurrentWorkStream":    unsafe.Offsetof(x.current_work_stream),
		"Ledger.ExchangeExports":           unsafe.Offsetof(l.exchange_exports),
		"Ledger":                           unsafe.Sizeof(l),
		"Ledger.FreeMagic":                 unsafe.Offsetof(l.free_magic),
		"Ledger.LiveExports":               unsafe.Offsetof(l.live_exports),
		"Ledger.ReplayedLive":              unsafe.Offsetof(l.replayed_live),
		"Ledger.StrayDeletes":              unsafe.Offsetof(l.stray_deletes),
		"Tensor":                           unsafe.Sizeof(t),
		"Tensor.Device":                    unsafe.Offsetof(t.device),
		"Tensor.Ndim":                      unsafe.Offsetof(t.ndim),
		"Tensor.DType":                     unsafe.Offsetof(t.dtype),
		"Tensor.Shape":                     unsafe.Offsetof(t.shape),
		"Tensor.Strides":                   unsafe.Offsetof(t.strides),
		"Tensor.ByteOffset":                unsafe.Offsetof(t.byte_offset),
		"Managed":                          unsafe.Sizeof(m),
		"Managed.ManagerCtx":               unsafe.Offsetof(m.manager_ctx),
		"Managed.Deleter":                  unsafe.Offsetof(m.deleter),
		"Versioned":                        unsafe.Sizeof(v),
		"Versioned.ManagerCtx":             unsafe.Offsetof(v.manager_ctx),
		"Versioned.Deleter":                unsafe.Offsetof(v.deleter),
		"Versioned.Flags":                  unsafe.Offsetof(v.flags),
		"Versioned.DLTensor":               unsafe.Offsetof(v.dl_tensor),
		"Versioned.Version.Minor":          unsafe.Offsetof(v.version.minor),
	}
}
