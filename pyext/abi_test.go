//go:build cgo

package pyext

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/dlabi"
)

// The C half and Go read the same structs (ubx.h): each Go mirror has the
// C compiler's layout. The DLPack structs are dlabi's, which its own tests
// hold to dlpack.h.
func TestABILayout(t *testing.T) {
	var tn dlabi.Tensor
	var m dlabi.ManagedTensor
	var mv dlabi.ManagedTensorVersioned
	var x dlabi.ExchangeAPI
	var v view
	var val value
	var r result
	var p cParam
	var f cFunc
	var d cModule
	var c cClass
	var pr cProp
	var su suaiRead
	var ex cExc
	var co cConst
	want := map[string]uintptr{
		"class.hidden": unsafe.Offsetof(c.hidden),
		"module.nexcs": unsafe.Offsetof(d.nexcs), "module.excs": unsafe.Offsetof(d.excs),
		"module.consts": unsafe.Offsetof(d.consts), "module.nconsts": unsafe.Offsetof(d.nconsts),
		"exc": unsafe.Sizeof(ex), "exc.base": unsafe.Offsetof(ex.base), "exc.baseExc": unsafe.Offsetof(ex.baseExc),
		"exc.type": unsafe.Offsetof(ex.typ), "const": unsafe.Sizeof(co), "const.value": unsafe.Offsetof(co.value),
		"suai": unsafe.Sizeof(su), "suai.vals": unsafe.Offsetof(su.vals), "suai.looked": unsafe.Offsetof(su.looked),
		"value.suai":  unsafe.Offsetof(val.suai),
		"ExchangeAPI": unsafe.Sizeof(x), "ExchangeAPI.PrevAPI": unsafe.Offsetof(x.PrevAPI),
		"ExchangeAPI.Allocator":            unsafe.Offsetof(x.ManagedTensorAllocator),
		"ExchangeAPI.FromPyObject":         unsafe.Offsetof(x.ManagedTensorFromPyObjectNoSync),
		"ExchangeAPI.ToPyObject":           unsafe.Offsetof(x.ManagedTensorToPyObjectNoSync),
		"ExchangeAPI.DLTensorFromPyObject": unsafe.Offsetof(x.DLTensorFromPyObjectNoSync),
		"ExchangeAPI.CurrentWorkStream":    unsafe.Offsetof(x.CurrentWorkStream),
		"Tensor":                           unsafe.Sizeof(tn), "Tensor.Device": unsafe.Offsetof(tn.Device),
		"Tensor.Ndim": unsafe.Offsetof(tn.Ndim), "Tensor.DType": unsafe.Offsetof(tn.DType),
		"Tensor.Shape": unsafe.Offsetof(tn.Shape), "Tensor.Strides": unsafe.Offsetof(tn.Strides),
		"Tensor.ByteOffset": unsafe.Offsetof(tn.ByteOffset),
		"Managed":           unsafe.Sizeof(m), "Managed.ManagerCtx": unsafe.Offsetof(m.ManagerCtx),
		"Managed.Deleter": unsafe.Offsetof(m.Deleter),
		"Versioned":       unsafe.Sizeof(mv), "Versioned.ManagerCtx": unsafe.Offsetof(mv.ManagerCtx),
		"Versioned.Deleter": unsafe.Offsetof(mv.Deleter), "Versioned.Flags": unsafe.Offsetof(mv.Flags),
		"Versioned.DLTensor": unsafe.Offsetof(mv.DLTensor), "Versioned.Version.Minor": unsafe.Offsetof(mv.Version.Minor),
		"view": unsafe.Sizeof(v), "view.flags": unsafe.Offsetof(v.flags), "view.handle": unsafe.Offsetof(v.handle),
		"view.usmKind": unsafe.Offsetof(v.usmKind), "view.wait": unsafe.Offsetof(v.wait),
		"view.noSync": unsafe.Offsetof(v.noSync), "view.goExport": unsafe.Offsetof(v.goExport),
		"value": unsafe.Sizeof(val), "value.i": unsafe.Offsetof(val.i), "value.f": unsafe.Offsetof(val.f),
		"value.s": unsafe.Offsetof(val.s), "value.n": unsafe.Offsetof(val.n), "value.obj": unsafe.Offsetof(val.obj),
		"value.v": unsafe.Offsetof(val.v),
		"result":  unsafe.Sizeof(r), "result.arg": unsafe.Offsetof(r.arg), "result.i": unsafe.Offsetof(r.i),
		"result.f": unsafe.Offsetof(r.f), "result.s": unsafe.Offsetof(r.s), "result.n": unsafe.Offsetof(r.n),
		"result.obj": unsafe.Offsetof(r.obj), "result.base": unsafe.Offsetof(r.base),
		"result.syclobj": unsafe.Offsetof(r.syclobj), "result.v": unsafe.Offsetof(r.v),
		"result.dims": unsafe.Offsetof(r.dims),
		"param":       unsafe.Sizeof(p), "param.kind": unsafe.Offsetof(p.kind), "param.flags": unsafe.Offsetof(p.flags),
		"func": unsafe.Sizeof(f), "func.doc": unsafe.Offsetof(f.doc), "func.params": unsafe.Offsetof(f.params),
		"func.nparams": unsafe.Offsetof(f.nparams), "func.builtin": unsafe.Offsetof(f.builtin),
		"func.index": unsafe.Offsetof(f.index), "func.releaseGIL": unsafe.Offsetof(f.releaseGIL),
		"module": unsafe.Sizeof(d), "module.arrayName": unsafe.Offsetof(d.arrayName),
		"module.forkErrorName": unsafe.Offsetof(d.forkErrorName), "module.funcs": unsafe.Offsetof(d.funcs),
		"module.nfuncs": unsafe.Offsetof(d.nfuncs), "module.minorFor": unsafe.Offsetof(d.minorFor),
		"module.minorNewer": unsafe.Offsetof(d.minorNewer), "module.major": unsafe.Offsetof(d.major),
		"module.maxMajor": unsafe.Offsetof(d.maxMajor), "module.maxMinor": unsafe.Offsetof(d.maxMinor),
		"param.class": unsafe.Offsetof(p.class), "module.classes": unsafe.Offsetof(d.classes),
		"module.nclasses": unsafe.Offsetof(d.nclasses),
		"class":           unsafe.Sizeof(c), "class.doc": unsafe.Offsetof(c.doc), "class.ctor": unsafe.Offsetof(c.ctor),
		"class.methods": unsafe.Offsetof(c.methods), "class.props": unsafe.Offsetof(c.props),
		"class.nmethods": unsafe.Offsetof(c.nmethods), "class.nprops": unsafe.Offsetof(c.nprops),
		"prop": unsafe.Sizeof(pr), "prop.doc": unsafe.Offsetof(pr.doc), "prop.get": unsafe.Offsetof(pr.get),
		"prop.set": unsafe.Offsetof(pr.set),
	}
	assert.Equal(t, want, cLayout())
}
