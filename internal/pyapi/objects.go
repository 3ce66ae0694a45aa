package pyapi

import (
	"runtime"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/ffi"
)

// Objects: their type and layout, attributes, calls, the containers the
// readers walk, and capsules.

func (a *API) Type(o uintptr) uintptr { return *(*uintptr)(cmem.Ptr(o + 8)) }
func (a *API) TypeFlags(t uintptr) uint64 {
	if a.layout {
		return *(*uint64)(cmem.Ptr(t + offTpFlags))
	}
	return a.TypeFlagsCall(t)
}

// TypeFlagsCall is TypeFlags through PyType_GetFlags, never from memory.
func (a *API) TypeFlagsCall(t uintptr) uint64 { return uint64(a.typeGetFlags.Call1(t)) }

// SeqSize returns the length of a tuple or list (the caller has checked
// the type).
func (a *API) SeqSize(o uintptr) int {
	if a.layout {
		return int(*(*int64)(cmem.Ptr(o + offObSize)))
	}
	return a.Length(o)
}

// TupleItem returns item i of a tuple, borrowed; the caller has checked
// the type and 0 <= i < SeqSize.
func (a *API) TupleItem(t uintptr, i int) uintptr {
	if a.layout {
		return *(*uintptr)(cmem.Ptr(t + offItems + uintptr(i)*8))
	}
	return a.TupleGetItem(t, i)
}

// ListItem is TupleItem for a list.
func (a *API) ListItem(l uintptr, i int) uintptr {
	if a.layout {
		return *(*uintptr)(cmem.Ptr(*(*uintptr)(cmem.Ptr(l + offItems)) + uintptr(i)*8))
	}
	return a.ListGetItem(l, i)
}

// FastLayout reports whether the verified memory layout is in use.
func (a *API) FastLayout() bool { return a.layout }
func (a *API) HasFlag(o uintptr, f uint64) bool {
	return a.TypeFlags(a.Type(o))&f != 0
}

// TypeName returns tp_name of o's type (module-qualified for non-builtins).
func (a *API) TypeName(o uintptr) string { return TypeObjectName(a.Type(o)) }

// TypeObjectName returns tp_name of a type object (offset 24 in PyTypeObject
// on the GIL build: ob_refcnt, ob_type, ob_size, tp_name).
func TypeObjectName(t uintptr) string { return GoString(*(*uintptr)(cmem.Ptr(t + 24))) }

func (a *API) Import(name string) uintptr {
	a.noPending("Import")
	b := cstr(name)
	r := a.importModule.Call1(p(b))
	runtime.KeepAlive(b)
	return r
}

func (a *API) GetAttrString(o uintptr, name string) uintptr {
	a.noPending("GetAttrString")
	b := cstr(name)
	r := a.getAttrString.Call2(o, p(b))
	runtime.KeepAlive(b)
	return r
}

// GetAttrC is GetAttrString with a NUL-terminated name in static memory.
func (a *API) GetAttrC(o uintptr, name *byte) uintptr {
	a.noPending("GetAttrC")
	return a.getAttrString.Call2(o, p(name))
}

func (a *API) SetAttrString(o uintptr, name string, v uintptr) int {
	a.noPending("SetAttrString")
	b := cstr(name)
	r := int(int32(a.setAttrString.Call3(o, p(b), v)))
	runtime.KeepAlive(b)
	return r
}

// LookupAttr reads o.name (name a str object): (v, 1) with a new
// reference, (0, 0) when o has no such attribute (no exception is left
// set), or (0, -1) with the exception another failure raised. A miss
// costs no exception object where the interpreter has the optional-lookup
// function.
func (a *API) LookupAttr(o, name uintptr) (uintptr, int) {
	a.noPending("LookupAttr")
	if fn := a.optionalAttrFn(); fn.Present() {
		// The out-parameter lives in C memory: a descriptor may run
		// Python code, and that Go code, which can move this stack.
		blk := cmem.Alloc(8)
		defer cmem.Free(blk, 8)
		r := int(int32(fn.Call3(o, name, blk)))
		if r > 0 {
			return *(*uintptr)(cmem.Ptr(blk)), 1
		}
		return 0, r
	}
	v := a.getAttr.Call2(o, name)
	if v != 0 {
		return v, 1
	}
	if t := a.ErrOccurred(); t != 0 && !a.ErrGivenMatches(t, a.Exc["AttributeError"]) {
		return 0, -1
	}
	a.ErrClear()
	return 0, 0
}

// optionalAttrFn is the interpreter's lookup of an attribute that may be
// missing, if it has one (both take the same arguments).
func (a *API) optionalAttrFn() ffi.Fn {
	if a.getOptionalAttr.Present() {
		return a.getOptionalAttr
	}
	return a.lookupAttrOld
}

// GetAttr is PyObject_GetAttr: o.name for a str object name, a new
// reference, or 0 with the exception. A name made once (a str object kept
// by the caller) spares the str that GetAttrC builds on every call.
func (a *API) GetAttr(o, name uintptr) uintptr {
	a.noPending("GetAttr")
	return a.getAttr.Call2(o, name)
}

func (a *API) Call(callable, args, kwargs uintptr) uintptr {
	a.noPending("Call")
	return a.call.Call3(callable, args, kwargs)
}
func (a *API) CallObject(callable, args uintptr) uintptr {
	a.noPending("CallObject")
	return a.callObject.Call2(callable, args)
}
func (a *API) Str(o uintptr) uintptr {
	a.noPending("Str")
	return a.str.Call1(o)
}
func (a *API) Repr(o uintptr) uintptr {
	a.noPending("Repr")
	return a.repr.Call1(o)
}
func (a *API) IsTrue(o uintptr) int {
	a.noPending("IsTrue")
	return int(int32(a.isTrue.Call1(o)))
}
func (a *API) Callable(o uintptr) bool {
	a.noPending("Callable")
	return a.callableCheck.Call1(o) != 0
}
func (a *API) Length(o uintptr) int {
	a.noPending("Length")
	return int(int64(a.length.Call1(o)))
}

// CallOneArg calls callable(arg) (PyObject_CallOneArg, or a 1-tuple and
// PyObject_CallObject where that is missing).
// VectorcallMethod calls the method name (a str object) of args[0] with
// args[1:nargs] as positional arguments and the rest as keyword arguments
// named by kwnames (a tuple of str objects, or 0): one C call
// (PyObject_VectorcallMethod) where GetAttr, a tuple, a dict and Call are
// six. args holds borrowed references.
func (a *API) VectorcallMethod(name uintptr, args []uintptr, nargs int, kwnames uintptr) uintptr {
	a.noPending("VectorcallMethod")
	return a.vectorcallMethod.Call4(name, uintptr(unsafe.Pointer(&args[0])), uintptr(nargs), kwnames)
}

func (a *API) CallOneArg(callable, arg uintptr) uintptr {
	a.noPending("CallOneArg")
	if a.callOneArg != 0 {
		return a.callOneArg.Call2(callable, arg)
	}
	t := a.TupleNew(1)
	if t == 0 {
		return 0
	}
	a.IncRef(arg)
	a.TupleSetItem(t, 0, arg)
	r := a.CallObject(callable, t)
	a.DecRef(t)
	return r
}

func (a *API) IsInstance(o, cls uintptr) int {
	a.noPending("IsInstance")
	return int(int32(a.isInstance.Call2(o, cls)))
}

func (a *API) TupleNew(n int) uintptr {
	a.noPending("TupleNew")
	return a.tupleNew.Call1(uintptr(n))
}

// TupleSetItem steals v.
func (a *API) TupleSetItem(t uintptr, i int, v uintptr) int {
	a.noPending("TupleSetItem")
	return int(int32(a.tupleSetItem.Call3(t, uintptr(i), v)))
}
func (a *API) TupleGetItem(t uintptr, i int) uintptr {
	a.noPending("TupleGetItem")
	return a.tupleGetItem.Call2(t, uintptr(i))
}
func (a *API) ListGetItem(l uintptr, i int) uintptr {
	a.noPending("ListGetItem")
	return a.listGetItem.Call2(l, uintptr(i))
}
func (a *API) DictNew() uintptr {
	a.noPending("DictNew")
	return a.dictNew.Call0()
}

// DictSetItemString does not steal v.
func (a *API) DictSetItemString(d uintptr, k string, v uintptr) int {
	a.noPending("DictSetItemString")
	b := cstr(k)
	r := int(int32(a.dictSetItemString.Call3(d, p(b), v)))
	runtime.KeepAlive(b)
	return r
}

// DictGetItemWithError returns d[k] borrowed; 0 if absent, or with an
// exception set if hashing or comparing the key raised (PyDict_GetItem
// swallows that). d may be a dict subclass: its __getitem__ is not called.
func (a *API) DictGetItemWithError(d, k uintptr) uintptr {
	a.noPending("DictGetItemWithError")
	return a.dictGetItemWithError.Call2(d, k)
}

// ListAsTuple returns a new tuple of the items of a list (or list
// subclass, whose __iter__ and __getitem__ are not called); it runs no
// Python code.
func (a *API) ListAsTuple(l uintptr) uintptr {
	a.noPending("ListAsTuple")
	return a.listAsTuple.Call1(l)
}

// DictGetItemString returns d[k] borrowed, or 0 (no error set) if absent.
func (a *API) DictGetItemString(d uintptr, k string) uintptr {
	a.noPending("DictGetItemString")
	b := cstr(k)
	r := a.dictGetItemString.Call2(d, p(b))
	runtime.KeepAlive(b)
	return r
}

// CapsuleNew: name must be static (it is kept, not copied).
func (a *API) CapsuleNew(ptr uintptr, name *byte, destructor uintptr) uintptr {
	a.noPending("CapsuleNew")
	return a.capsuleNew.Call3(ptr, p(name), destructor)
}
func (a *API) CapsuleGetPointer(c uintptr, name *byte) uintptr {
	a.noPending("CapsuleGetPointer")
	return a.capsuleGetPointer.Call2(c, p(name))
}

// CapsuleGetName returns the name pointer (0 for an unnamed capsule).
func (a *API) CapsuleGetName(c uintptr) uintptr { return a.capsuleGetName.Call1(c) }

// CapsuleSetName: name must be static.
func (a *API) CapsuleSetName(c uintptr, name *byte) int {
	a.noPending("CapsuleSetName")
	return int(int32(a.capsuleSetName.Call2(c, p(name))))
}
