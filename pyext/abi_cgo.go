package pyext

// #include "ubx.h"
import "C"

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/cmem"
)

// cLayout is the C compiler's layout of ubx.h's structs, for abi_test.go
// to hold against the Go mirrors (cgo is not allowed in test files).
func cLayout() map[string]uintptr {
	var t C.ub_dl_tensor
	var m C.ub_dl_managed
	var mv C.ub_dl_managed_versioned
	var x C.ub_dl_exchange_api
	var v C.ubx_view
	var val C.ubx_value
	var r C.ubx_result
	var p C.ubx_param
	var f C.ubx_func
	var d C.ubx_module_def
	var c C.ubx_class
	var pr C.ubx_prop
	var su C.ubx_suai
	var ex C.ubx_exc
	var co C.ubx_const
	return map[string]uintptr{
		"class.hidden":                     unsafe.Offsetof(c.hidden),
		"module.nexcs":                     unsafe.Offsetof(d.nexcs),
		"module.excs":                      unsafe.Offsetof(d.excs),
		"module.consts":                    unsafe.Offsetof(d.consts),
		"module.nconsts":                   unsafe.Offsetof(d.nconsts),
		"exc":                              unsafe.Sizeof(ex),
		"exc.base":                         unsafe.Offsetof(ex.base),
		"exc.baseExc":                      unsafe.Offsetof(ex.base_exc),
		"exc.type":                         unsafe.Offsetof(ex._type),
		"const":                            unsafe.Sizeof(co),
		"const.value":                      unsafe.Offsetof(co.value),
		"suai":                             unsafe.Sizeof(su),
		"suai.vals":                        unsafe.Offsetof(su.vals),
		"suai.looked":                      unsafe.Offsetof(su.looked),
		"value.suai":                       unsafe.Offsetof(val.suai),
		"ExchangeAPI":                      unsafe.Sizeof(x),
		"ExchangeAPI.PrevAPI":              unsafe.Offsetof(x.header.prev_api),
		"ExchangeAPI.Allocator":            unsafe.Offsetof(x.managed_tensor_allocator),
		"ExchangeAPI.FromPyObject":         unsafe.Offsetof(x.managed_tensor_from_py_object_no_sync),
		"ExchangeAPI.ToPyObject":           unsafe.Offsetof(x.managed_tensor_to_py_object_no_sync),
		"ExchangeAPI.DLTensorFromPyObject": unsafe.Offsetof(x.dltensor_from_py_object_no_sync),
		"ExchangeAPI.CurrentWorkStream":    unsafe.Offsetof(x.current_work_stream),
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
		"Versioned":                        unsafe.Sizeof(mv),
		"Versioned.ManagerCtx":             unsafe.Offsetof(mv.manager_ctx),
		"Versioned.Deleter":                unsafe.Offsetof(mv.deleter),
		"Versioned.Flags":                  unsafe.Offsetof(mv.flags),
		"Versioned.DLTensor":               unsafe.Offsetof(mv.dl_tensor),
		"Versioned.Version.Minor":          unsafe.Offsetof(mv.version.minor),
		"view":                             unsafe.Sizeof(v),
		"view.flags":                       unsafe.Offsetof(v.flags),
		"view.handle":                      unsafe.Offsetof(v.handle),
		"view.usmKind":                     unsafe.Offsetof(v.usm_kind),
		"view.wait":                        unsafe.Offsetof(v.wait),
		"view.noSync":                      unsafe.Offsetof(v.no_sync),
		"view.goExport":                    unsafe.Offsetof(v.go_export),
		"value":                            unsafe.Sizeof(val),
		"value.i":                          unsafe.Offsetof(val.i),
		"value.f":                          unsafe.Offsetof(val.f),
		"value.s":                          unsafe.Offsetof(val.s),
		"value.n":                          unsafe.Offsetof(val.n),
		"value.obj":                        unsafe.Offsetof(val.obj),
		"value.v":                          unsafe.Offsetof(val.v),
		"result":                           unsafe.Sizeof(r),
		"result.arg":                       unsafe.Offsetof(r.arg),
		"result.i":                         unsafe.Offsetof(r.i),
		"result.f":                         unsafe.Offsetof(r.f),
		"result.s":                         unsafe.Offsetof(r.s),
		"result.n":                         unsafe.Offsetof(r.n),
		"result.obj":                       unsafe.Offsetof(r.obj),
		"result.base":                      unsafe.Offsetof(r.base),
		"result.syclobj":                   unsafe.Offsetof(r.syclobj),
		"result.v":                         unsafe.Offsetof(r.v),
		"result.dims":                      unsafe.Offsetof(r.dims),
		"param":                            unsafe.Sizeof(p),
		"param.kind":                       unsafe.Offsetof(p.kind),
		"param.flags":                      unsafe.Offsetof(p.flags),
		"param.class":                      unsafe.Offsetof(p.cls),
		"module.classes":                   unsafe.Offsetof(d.classes),
		"module.nclasses":                  unsafe.Offsetof(d.nclasses),
		"class":                            unsafe.Sizeof(c),
		"class.doc":                        unsafe.Offsetof(c.doc),
		"class.ctor":                       unsafe.Offsetof(c.ctor),
		"class.methods":                    unsafe.Offsetof(c.methods),
		"class.props":                      unsafe.Offsetof(c.props),
		"class.nmethods":                   unsafe.Offsetof(c.nmethods),
		"class.nprops":                     unsafe.Offsetof(c.nprops),
		"prop":                             unsafe.Sizeof(pr),
		"prop.doc":                         unsafe.Offsetof(pr.doc),
		"prop.get":                         unsafe.Offsetof(pr.get),
		"prop.set":                         unsafe.Offsetof(pr.set),
		"func":                             unsafe.Sizeof(f),
		"func.doc":                         unsafe.Offsetof(f.doc),
		"func.params":                      unsafe.Offsetof(f.params),
		"func.nparams":                     unsafe.Offsetof(f.nparams),
		"func.builtin":                     unsafe.Offsetof(f.builtin),
		"func.index":                       unsafe.Offsetof(f.index),
		"func.releaseGIL":                  unsafe.Offsetof(f.release_gil),
		"module":                           unsafe.Sizeof(d),
		"module.arrayName":                 unsafe.Offsetof(d.array_name),
		"module.forkErrorName":             unsafe.Offsetof(d.fork_error_name),
		"module.funcs":                     unsafe.Offsetof(d.funcs),
		"module.nfuncs":                    unsafe.Offsetof(d.nfuncs),
		"module.minorFor":                  unsafe.Offsetof(d.minor_for),
		"module.minorNewer":                unsafe.Offsetof(d.minor_newer),
		"module.major":                     unsafe.Offsetof(d.major),
		"module.maxMajor":                  unsafe.Offsetof(d.max_major),
		"module.maxMinor":                  unsafe.Offsetof(d.max_minor),
	}
}

// cImportHost is C's import of a host tensor (dlimport.c's
// ubx_import_host), with the tables Go fills at module load, for the
// differential fuzz target: the view, its shape and strides, and whether
// C took the tensor.
func cImportHost(m uintptr, versioned bool) (v view, shape, strides []int64, ok bool) {
	fillTables()
	dims := make([]int64, 2*maxNdim)
	var cv C.ubx_view
	vers := C.int(0)
	if versioned {
		vers = 1
	}
	if C.ubx_import_host(cmem.Ptr(m), vers, &cv, (*C.int64_t)(unsafe.Pointer(&dims[0])), C.UBX_MAX_NDIM) == 0 {
		return view{}, nil, nil, false
	}
	v = *(*view)(unsafe.Pointer(&cv))
	n := int(v.t.Ndim)
	return v, dims[:n:n], dims[n : 2*n : 2*n], true
}
