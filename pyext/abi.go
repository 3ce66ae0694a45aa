package pyext

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/pybridge"
)

// The structs of ubx.h, as Go reads and writes them: the C half passes
// pointers to them, and the cgo files convert those to these types.
// abi_test.go holds every size and offset to the C ones.

// view mirrors ubx_view: an array's DLPack tensor in dlpack.Export's form,
// and what C may do with it alone.
type view struct {
	t        dlabi.Tensor
	flags    uint64
	handle   int64
	usmKind  int32
	wait     int32
	noSync   int32
	goExport int32
}

// Value kinds (ubx.h UBX_V_*).
const (
	vMissing int32 = iota
	vNone
	vInt
	vFloat
	vBool
	vStr
	vArray
	vObject
	vInstance
	vSUAI
	vNew // __setstate__'s receiver without a value: i is the handle Go gives the new one
)

// value mirrors ubx_value: one argument as C read it.
type value struct {
	kind int32
	_    int32
	i    int64
	f    float64
	s    uintptr // *char, valid for the call
	n    int64
	obj  uintptr // PyObject*, borrowed
	v    view
	suai *suaiRead // vSUAI
}

// suaiRead mirrors ubx_suai: an argument's __sycl_usm_array_interface__ as
// C read it (pybridge.SUAIDict's fields).
type suaiRead struct {
	dict   uintptr
	vals   [len(pybridge.SUAIDict{}.Values)]uintptr
	looked int32
	_      int32
}

// to writes r into d, as pybridge reads it.
func (r *suaiRead) to(d *pybridge.SUAIDict) {
	d.Dict, d.Looked = pybridge.UnsafeObject(r.dict), r.looked != 0
	for i, v := range r.vals {
		d.Values[i] = pybridge.UnsafeObject(v)
	}
}

// str is the value's string, copied.
func (v *value) str() string {
	if v.n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(cmem.Ptr(v.s)), v.n))
}

// Result kinds (ubx.h UBX_R_*).
const (
	rNone int32 = iota
	rInt
	rFloat
	rBool
	rStr
	rArray
	rObject
	rArg
	rArgArray
	rUint
	rInstance
	rTuple
)

// maxNdim is ubx.h's UBX_MAX_NDIM, dlpack's limit (internal/dlabi).
const maxNdim = dlabi.MaxNdim

// result mirrors ubx_result: what a call returns to C.
type result struct {
	kind    int32
	arg     int32
	i       int64
	f       float64
	s       uintptr // malloc'd; C frees it
	n       int64
	obj     uintptr // a new reference
	base    uintptr // a new reference, or 0
	syclobj uintptr // a new reference, or 0
	v       view
	dims    [2 * maxNdim]int64
}

// Parameter kinds and flags (ubx.h UBX_P_*, UBX_F_*).
const (
	pObject int32 = iota
	pInt
	pFloat
	pBool
	pStr
	pArray
	pUint
	pInstance
)

const (
	fOptional int32 = 1 << iota
	fNone
	fKwOnly
	fWritable
	fPosOnly
	fSelf
	fCls // a class method's receiver: the class it is called on
	fNew // __setstate__'s receiver: an object without a value gets one (vNew)
)

// cParam mirrors ubx_param.
type cParam struct {
	name  uintptr // *char
	kind  int32
	flags int32
	class int32
	_     int32
}

// Built-in functions (ubx.h UBX_FN_*).
const (
	fnGo int32 = iota
	fnFromDLPack
	fnAsArray
)

// cFunc mirrors ubx_func.
type cFunc struct {
	name, doc  uintptr // *char
	params     uintptr // *cParam
	nparams    int32
	builtin    int32
	index      int32
	releaseGIL int32
}

// minorSlots is ubx.h's UBX_MINOR_SLOTS.
const minorSlots = 8

// cModule mirrors ubx_module_def.
type cModule struct {
	doc, arrayName, forkErrorName uintptr // *char
	funcs                         uintptr // *cFunc
	nfuncs                        int32
	minorFor                      [minorSlots]uint32
	minorNewer                    uint32
	major                         uint32
	maxMajor, maxMinor            uint32
	classes                       uintptr // *cClass
	nclasses                      int32
	nexcs                         int32
	excs                          uintptr // *cExc
	consts                        uintptr // *cConst
	nconsts                       int32
	_                             int32
}

// cExc mirrors ubx_exc: an exception class of the module.
type cExc struct {
	name, doc, base uintptr // *char
	baseExc         int32
	_               int32
	typ             uintptr // the class, once C made it
}

// cConst mirrors ubx_const: an attribute of the module.
type cConst struct {
	name  uintptr // *char
	value uintptr // PyObject*, a reference kept for the process
}

// cClass mirrors ubx_class: a class of the module.
type cClass struct {
	name, doc uintptr // *char: the qualified name ("saxpy.Plan"), the docstring
	ctor      uintptr // *cFunc, or 0
	methods   uintptr // *cFunc
	props     uintptr // *cProp
	nmethods  int32
	nprops    int32
	hidden    int32
	_         int32
}

// cProp mirrors ubx_prop: a property's accessors, functions of the module.
type cProp struct {
	name, doc uintptr // *char
	get, set  uintptr // *cFunc; set 0 for a read-only property
}
