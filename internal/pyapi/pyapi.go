// Package pyapi is the raw CPython C API that pybridge uses, resolved with
// internal/ffi from a libpython handle (embedding) or from the running
// process (a Go library loaded by Python). It is a symbol table with thin
// wrappers: no reference counting policy, no GIL policy, no error policy.
// Every wrapper must be called with the GIL held unless its comment says
// otherwise. No C variadic function is bound (purego cannot call them):
// tuples are built with PyTuple_New/SetItem and errors are raised with
// PyErr_SetObject (ErrSetString).
//
// Only the regular (GIL) build of CPython ≥ 3.10 is supported; its object
// header is {ob_refcnt, ob_type}, so Py_TYPE(o) is the word at offset 8.
package pyapi

import (
	"runtime"
	"strings"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
)

// Start symbols of PyRun_String and friends.
const (
	FileInput = 257
	EvalInput = 258
)

// Type flags (tp_flags) of the built-in types, for the Py*_Check macros.
const (
	TPFlagsImmutableType   = 1 << 8 // Py_TPFLAGS_IMMUTABLETYPE (3.10+)
	TPFlagsLongSubclass    = 1 << 24
	TPFlagsListSubclass    = 1 << 25
	TPFlagsTupleSubclass   = 1 << 26
	TPFlagsBytesSubclass   = 1 << 27
	TPFlagsUnicodeSubclass = 1 << 28
	TPFlagsDictSubclass    = 1 << 29
	TPFlagsBaseExcSubclass = 1 << 30
	TPFlagsTypeSubclass    = 1 << 31
)

// API holds the resolved symbols. The zero value is unusable; see Load.
type API struct {
	pyInitializeEx, pyIsInitialized, evalSaveThread, evalRestoreThread ffi.Fn
	gilEnsure, gilRelease, gilCheck, incRef, decRef, importModule      ffi.Fn
	getAttrString, setAttrString                                       ffi.Fn
	call, callObject, str, repr, isTrue, isInstance, callableCheck     ffi.Fn
	length, typeGetFlags, tupleNew, tupleSetItem, tupleGetItem         ffi.Fn
	listGetItem, dictNew, dictSetItemString, dictGetItemString         ffi.Fn
	dictGetItemWithError, listAsTuple, indexCheck                      ffi.Fn
	longAsLongLongAndOverflow, unicodeAsUTF8AndSize                    ffi.Fn
	longFromLongLong, longFromULongLong, longAsLongLong                ffi.Fn
	longAsULongLong, numberIndex, boolFromLong                         ffi.Fn
	unicodeFromStringAndSize, unicodeAsUTF8                            ffi.Fn
	capsuleNew, capsuleGetPointer, capsuleGetName, capsuleSetName      ffi.Fn
	errOccurred, errClear, errWriteUnraisable                          ffi.Fn
	errSetObject, unicodeDecodeUTF8                                    ffi.Fn
	errGivenMatches, exceptionSetCause                                 ffi.Fn
	floatFromDoubleFn, floatAsDoubleFn                                 ffi.Fn

	// Taking and raising exceptions: PyErr_GetRaisedException and
	// PyErr_SetRaisedException (3.12+), else PyErr_Fetch,
	// PyErr_NormalizeException and PyErr_Restore, with the traceback
	// moved through PyException_Get/SetTraceback (see ErrTake).
	errGetRaised, errSetRaised                   ffi.Fn
	errFetch, errNormalize, errRestore           ffi.Fn
	exceptionGetTraceback, exceptionSetTraceback ffi.Fn

	// Reading an attribute that may be missing without an AttributeError
	// (LookupAttr): PyObject_GetOptionalAttr (3.13+) or _PyObject_LookupAttr
	// (3.7 to 3.12); PyObject_GetAttr only where neither exists.
	getOptionalAttr, lookupAttrOld, getAttr ffi.Fn

	floatFromDouble func(float64) uintptr
	floatAsDouble   func(uintptr) float64

	// Singletons and type objects (addresses of the static objects).
	None, True, False                                   uintptr
	LongType, FloatType, UnicodeType, TupleType         uintptr
	ListType, DictType, BoolType, CapsuleType, TypeType uintptr

	// Exception types (the PyObject* the PyExc_* variables hold).
	Exc map[string]uintptr

	// layout is true when the object layout below was verified at Load;
	// then type flags and tuple/list items are read from memory, as
	// CPython's own macros do, instead of one FFI call each.
	layout bool

	// minor is the interpreter's 3.minor (Py_GetVersion), -1 if unknown.
	minor int

	// fastRefs: IncRef and DecRef touch ob_refcnt from Go (see IncRef).
	// Set at Load: the layout was verified, the interpreter is 3.10 or
	// 3.11 (3.12 made some objects immortal: their count must not move),
	// and it is not a debug build (_Py_RefTotal, Py_TRACE_REFS).
	fastRefs bool

	// fastLongs: LongValue reads small exact ints from memory; fastDicts:
	// DictLen reads ma_used; fastASCII: ASCII finds the characters of
	// compact ASCII strs. Set by CheckRuntimeLayout once the interpreter
	// runs (it makes test objects).
	fastLongs, fastDicts, fastASCII bool

	callOneArg       ffi.Fn // PyObject_CallOneArg (exported since 3.9), or 0
	vectorcallMethod ffi.Fn // PyObject_VectorcallMethod (exported since 3.9)
}

// Object layout of the default (GIL) build of CPython 3.8–3.13 on 64-bit:
// PyVarObject is {ob_refcnt, ob_type, ob_size}; tuples store items inline
// after it, lists point to them from there; PyTypeObject.tp_flags follows
// 18 pointer-sized fields. checkLayout verifies these against the API
// before they are used.
const (
	offObSize      = 16
	offItems       = 24 // PyTupleObject.ob_item[0], PyListObject.ob_item
	offTpBasicsize = 32
	offTpFlags     = 168
)

func (a *API) checkLayout() bool {
	for _, t := range []uintptr{a.TupleType, a.ListType, a.DictType, a.LongType, a.UnicodeType, a.TypeType, a.CapsuleType} {
		if *(*uint64)(cmem.Ptr(t + offTpFlags)) != a.TypeFlagsCall(t) {
			return false
		}
	}
	return *(*int64)(cmem.Ptr(a.TupleType + offTpBasicsize)) == offItems &&
		*(*int64)(cmem.Ptr(a.ListType + offTpBasicsize)) == offItems+16
}

var excNames = []string{"BaseException", "Exception", "TypeError", "ValueError", "BufferError",
	"AttributeError", "OverflowError", "MemoryError", "NotImplementedError", "RuntimeError",
	"KeyError", "IndexError", "ImportError", "ModuleNotFoundError", "StopIteration", "SystemError",
	"RecursionError"}

// Load resolves the symbols from lib (libpython, or the process). Every
// symbol below is called by pybridge; a missing one is reported with all
// the others in one *ffi.MissingSymbolsError, which matches
// errkind.NotAvailable.
func Load(lib *ffi.Lib) (*API, error) {
	a := &API{Exc: map[string]uintptr{}}
	syms := []ffi.Symbol{
		ffi.Required(&a.pyInitializeEx, "Py_InitializeEx"), ffi.Required(&a.pyIsInitialized, "Py_IsInitialized"),
		ffi.Required(&a.evalSaveThread, "PyEval_SaveThread"), ffi.Required(&a.evalRestoreThread, "PyEval_RestoreThread"),
		ffi.Required(&a.gilEnsure, "PyGILState_Ensure"), ffi.Required(&a.gilRelease, "PyGILState_Release"),
		ffi.Required(&a.gilCheck, "PyGILState_Check"),
		ffi.Required(&a.incRef, "Py_IncRef"), ffi.Required(&a.decRef, "Py_DecRef"),
		ffi.Required(&a.importModule, "PyImport_ImportModule"),
		ffi.Required(&a.getAttrString, "PyObject_GetAttrString"), ffi.Required(&a.setAttrString, "PyObject_SetAttrString"),
		ffi.Required(&a.getAttr, "PyObject_GetAttr"),
		ffi.Required(&a.call, "PyObject_Call"), ffi.Required(&a.callObject, "PyObject_CallObject"),
		ffi.Required(&a.str, "PyObject_Str"), ffi.Required(&a.repr, "PyObject_Repr"), ffi.Required(&a.isTrue, "PyObject_IsTrue"),
		ffi.Required(&a.isInstance, "PyObject_IsInstance"), ffi.Required(&a.callableCheck, "PyCallable_Check"),
		ffi.Required(&a.length, "PyObject_Size"), ffi.Required(&a.typeGetFlags, "PyType_GetFlags"),
		ffi.Required(&a.tupleNew, "PyTuple_New"), ffi.Required(&a.tupleSetItem, "PyTuple_SetItem"),
		ffi.Required(&a.tupleGetItem, "PyTuple_GetItem"), ffi.Required(&a.listGetItem, "PyList_GetItem"),
		ffi.Required(&a.dictNew, "PyDict_New"), ffi.Required(&a.dictSetItemString, "PyDict_SetItemString"),
		ffi.Required(&a.dictGetItemString, "PyDict_GetItemString"),
		ffi.Required(&a.dictGetItemWithError, "PyDict_GetItemWithError"),
		ffi.Required(&a.listAsTuple, "PyList_AsTuple"), ffi.Required(&a.indexCheck, "PyIndex_Check"),
		ffi.Required(&a.longAsLongLongAndOverflow, "PyLong_AsLongLongAndOverflow"),
		ffi.Required(&a.unicodeAsUTF8AndSize, "PyUnicode_AsUTF8AndSize"),
		ffi.Required(&a.longFromLongLong, "PyLong_FromLongLong"), ffi.Required(&a.longFromULongLong, "PyLong_FromUnsignedLongLong"),
		ffi.Required(&a.longAsLongLong, "PyLong_AsLongLong"), ffi.Required(&a.longAsULongLong, "PyLong_AsUnsignedLongLong"),
		ffi.Required(&a.numberIndex, "PyNumber_Index"), ffi.Required(&a.boolFromLong, "PyBool_FromLong"),
		ffi.Required(&a.unicodeFromStringAndSize, "PyUnicode_FromStringAndSize"),
		ffi.Required(&a.unicodeAsUTF8, "PyUnicode_AsUTF8"),
		ffi.Required(&a.capsuleNew, "PyCapsule_New"), ffi.Required(&a.capsuleGetPointer, "PyCapsule_GetPointer"),
		ffi.Required(&a.capsuleGetName, "PyCapsule_GetName"), ffi.Required(&a.capsuleSetName, "PyCapsule_SetName"),
		ffi.Required(&a.errOccurred, "PyErr_Occurred"),
		ffi.Required(&a.errSetObject, "PyErr_SetObject"), ffi.Required(&a.unicodeDecodeUTF8, "PyUnicode_DecodeUTF8"),
		ffi.Required(&a.errClear, "PyErr_Clear"), ffi.Required(&a.errWriteUnraisable, "PyErr_WriteUnraisable"),
		ffi.Required(&a.errGivenMatches, "PyErr_GivenExceptionMatches"),
		ffi.Required(&a.exceptionSetCause, "PyException_SetCause"),
		ffi.Required(&a.floatFromDoubleFn, "PyFloat_FromDouble"), ffi.Required(&a.floatAsDoubleFn, "PyFloat_AsDouble"),
		ffi.RequiredVar(&a.None, "_Py_NoneStruct"), ffi.RequiredVar(&a.True, "_Py_TrueStruct"),
		ffi.RequiredVar(&a.False, "_Py_FalseStruct"),
		ffi.RequiredVar(&a.LongType, "PyLong_Type"), ffi.RequiredVar(&a.FloatType, "PyFloat_Type"),
		ffi.RequiredVar(&a.UnicodeType, "PyUnicode_Type"), ffi.RequiredVar(&a.TupleType, "PyTuple_Type"),
		ffi.RequiredVar(&a.ListType, "PyList_Type"), ffi.RequiredVar(&a.DictType, "PyDict_Type"),
		ffi.RequiredVar(&a.BoolType, "PyBool_Type"), ffi.RequiredVar(&a.CapsuleType, "PyCapsule_Type"),
		ffi.RequiredVar(&a.TypeType, "PyType_Type"),
		// Optional: CallOneArg falls back to a tuple and CallObject.
		ffi.Optional(&a.callOneArg, "PyObject_CallOneArg"),
		ffi.Required(&a.vectorcallMethod, "PyObject_VectorcallMethod"),
		// PyErr_GetRaisedException (3.12+) replaces PyErr_Fetch (deprecated
		// there); either family is enough, checked below.
		ffi.Optional(&a.errGetRaised, "PyErr_GetRaisedException"),
		// Optional: LookupAttr uses whichever exists, else PyObject_GetAttr
		// (checked below).
		ffi.Optional(&a.getOptionalAttr, "PyObject_GetOptionalAttr"),
		ffi.Optional(&a.lookupAttrOld, "_PyObject_LookupAttr"),
	}
	excVars := make([]uintptr, len(excNames))
	for i, n := range excNames {
		syms = append(syms, ffi.RequiredVar(&excVars[i], "PyExc_"+n))
	}
	if err := lib.Resolve(syms...); err != nil {
		return nil, err
	}
	// One of each family is required, whichever the interpreter has; what
	// is missing is reported in one error with the rest of the family.
	var family []ffi.Symbol
	if a.errGetRaised.Present() {
		family = append(family, ffi.Required(&a.errSetRaised, "PyErr_SetRaisedException"))
	} else {
		family = append(family,
			ffi.Required(&a.errFetch, "PyErr_Fetch"), ffi.Required(&a.errNormalize, "PyErr_NormalizeException"),
			ffi.Required(&a.errRestore, "PyErr_Restore"),
			ffi.Required(&a.exceptionGetTraceback, "PyException_GetTraceback"),
			ffi.Required(&a.exceptionSetTraceback, "PyException_SetTraceback"))
	}
	if err := lib.Resolve(family...); err != nil {
		return nil, err
	}
	for i, n := range excNames {
		a.Exc[n] = *(*uintptr)(cmem.Ptr(excVars[i]))
	}
	// The free-threaded build has a different object header.
	if _, err := lib.Lookup("_Py_DecRefShared"); err == nil {
		return nil, errkind.New(errkind.NotSupported, "pyapi.Load", "the free-threaded CPython build is not supported")
	}
	a.layout = a.checkLayout()
	a.minor = -1
	if v, err := lib.Lookup("Py_GetVersion"); err == nil {
		a.minor = parseMinor(GoString(v.Call0())) // callable before Py_Initialize
	}
	_, err := lib.Lookup("_Py_RefTotal") // only Py_REF_DEBUG builds have it
	refDebug := err == nil
	a.fastRefs = a.layout && a.minor >= 10 && a.minor <= 11 && !refDebug
	a.floatFromDoubleFn.Register(&a.floatFromDouble)
	a.floatAsDoubleFn.Register(&a.floatAsDouble)
	return a, nil
}

// parseMinor returns the minor version of a Py_GetVersion string
// ("3.11.2 (main, ...)"), or -1 unless it is 3.x.
func parseMinor(v string) int {
	if !strings.HasPrefix(v, "3.") {
		return -1
	}
	n, digits := 0, 0
	for _, c := range v[2:] {
		if c < '0' || c > '9' {
			break
		}
		n, digits = n*10+int(c-'0'), digits+1
	}
	if digits == 0 {
		return -1
	}
	return n
}

// cstr returns a NUL-terminated copy of s in Go memory; the pointer is
// valid while the returned slice is reachable (use runtime.KeepAlive or
// keep it on the stack across the call).
func cstr(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

func p(b *byte) uintptr { return uintptr(unsafe.Pointer(b)) }

// GoString copies a NUL-terminated C string.
func GoString(c uintptr) string {
	if c == 0 {
		return ""
	}
	n := 0
	for *(*byte)(cmem.Ptr(c + uintptr(n))) != 0 {
		n++
	}
	return string(cmem.Bytes(c, uintptr(n)))
}

// --- life cycle (no GIL needed before initialisation) ---

func (a *API) InitializeEx(initsigs int) { a.pyInitializeEx.Call1(uintptr(initsigs)) }
func (a *API) IsInitialized() bool       { return a.pyIsInitialized.Call0() != 0 }
func (a *API) SaveThread() uintptr       { return a.evalSaveThread.Call0() }
func (a *API) RestoreThread(ts uintptr)  { a.evalRestoreThread.Call1(ts) }

// GILEnsure may be called without the GIL; the OS thread must stay the
// same until the matching GILRelease.
func (a *API) GILEnsure() uintptr    { return a.gilEnsure.Call0() }
func (a *API) GILRelease(st uintptr) { a.gilRelease.Call1(st) }

// GILCheck reports whether this OS thread holds the GIL (any thread may ask).
func (a *API) GILCheck() bool { return a.gilCheck.Call0() != 0 }

// GILCheckPending is GILCheck, then, for a thread that holds the GIL,
// ErrOccurred (which only such a thread may call): the pending exception
// type or 0. One crossing into C with cgo (ffi.Fn.Call0Then).
func (a *API) GILCheckPending() (held bool, pending uintptr) {
	h, p := a.gilCheck.Call0Then(a.errOccurred)
	return h != 0, p
}

// IncRef adds a reference to o (NULL is ignored, as by Py_IncRef). With
// fastRefs it is Py_INCREF itself, ob_refcnt++, which is what the macro
// compiles to on a 3.10/3.11 release build: the GIL, which the caller
// holds, is what makes it safe, in C as here.
func (a *API) IncRef(o uintptr) {
	if a.fastRefs {
		if o != 0 {
			*(*int64)(cmem.Ptr(o))++
		}
		return
	}
	a.incRef.Call1(o)
}

// DecRef drops a reference (NULL is ignored). With fastRefs a count above
// one is decremented in place; the last reference goes through Py_DecRef,
// so that deallocation (tp_dealloc, finalisers, weakref callbacks) stays
// in C.
func (a *API) DecRef(o uintptr) {
	if a.fastRefs {
		if o == 0 {
			return
		}
		if rc := (*int64)(cmem.Ptr(o)); *rc > 1 {
			*rc--
			return
		}
	}
	a.decRef.Call1(o)
}

// IncRefCall and DecRefCall always call Py_IncRef/Py_DecRef (for tests
// that compare them with the in-memory forms).
func (a *API) IncRefCall(o uintptr) { a.incRef.Call1(o) }
func (a *API) DecRefCall(o uintptr) { a.decRef.Call1(o) }

// FastRefs reports whether IncRef/DecRef work in memory.
func (a *API) FastRefs() bool { return a.fastRefs }

// Minor is the interpreter's minor version (3.minor), -1 if unknown.
func (a *API) Minor() int { return a.minor }

func (a *API) RefCount(o uintptr) int { return int(*(*int64)(cmem.Ptr(o))) }

// --- objects ---

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

// --- containers ---

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

// --- scalars ---

func (a *API) LongFromInt64(v int64) uintptr {
	a.noPending("LongFromInt64")
	return a.longFromLongLong.Call1(uintptr(v))
}
func (a *API) LongFromUint64(v uint64) uintptr {
	a.noPending("LongFromUint64")
	return a.longFromULongLong.Call1(uintptr(v))
}

// Layout of int objects on 3.10 and 3.11 (PyLongObject): ob_size holds the
// number of 30-bit digits with the value's sign, the digits (uint32, least
// significant first) follow it. 3.12 replaced ob_size with lv_tag.
const (
	offLongDigits = 24
	longShift     = 30
)

// LongValue returns the value of an exact int (not a subclass, not bool)
// of at most two digits, |v| < 2**60, read from memory; ok is false for
// anything else, or when the layout was not verified (CheckRuntimeLayout),
// and the caller then uses LongAsInt64.
func (a *API) LongValue(o uintptr) (v int64, ok bool) {
	if !a.fastLongs || a.Type(o) != a.LongType {
		return 0, false
	}
	n := *(*int64)(cmem.Ptr(o + offObSize))
	switch n {
	case 0:
		return 0, true
	case 1, -1:
		v = int64(*(*uint32)(cmem.Ptr(o + offLongDigits)))
	case 2, -2:
		v = int64(*(*uint32)(cmem.Ptr(o + offLongDigits))) | int64(*(*uint32)(cmem.Ptr(o + offLongDigits + 4)))<<longShift
	default:
		return 0, false
	}
	if n < 0 {
		v = -v
	}
	return v, true
}

// CheckRuntimeLayout verifies the layouts that only objects can show, and
// enables the memory reads that passed: LongValue (checkLongLayout) and
// DictLen (ma_used follows the header, as ob_size does). Call it once, with
// the GIL, before the API is shared between goroutines.
func (a *API) CheckRuntimeLayout() {
	a.checkLongLayout()
	a.checkDictLayout()
	a.checkASCIILayout()
}

// Layout of str objects on 3.10 and 3.11 (PyASCIIObject): the state bit
// field after length and hash, then wstr; a compact ASCII str's
// characters, NUL-terminated, follow at offASCIIData (3.12 dropped wstr).
const (
	offStrLength    = 16
	offStrState     = 32
	offASCIIData    = 48
	strCompactASCII = 1<<5 | 1<<6 | 1<<7 // state.compact, .ascii, .ready
)

// ASCII returns the characters and length of an exact str that is compact
// ASCII, in place (valid while the str lives); ok is false for anything
// else, or when the layout was not verified, and the caller then uses
// UnicodeUTF8. For such a str, that is the pointer PyUnicode_AsUTF8
// returns.
func (a *API) ASCII(o uintptr) (data uintptr, n int, ok bool) {
	if !a.fastASCII || a.Type(o) != a.UnicodeType {
		return 0, 0, false
	}
	if *(*uint32)(cmem.Ptr(o + offStrState))&strCompactASCII != strCompactASCII {
		return 0, 0, false
	}
	return o + offASCIIData, int(*(*int64)(cmem.Ptr(o + offStrLength))), true
}

// checkASCIILayout enables ASCII on 3.10/3.11 if it agrees with
// PyUnicode_AsUTF8 on test strings, and declines a non-ASCII one.
func (a *API) checkASCIILayout() {
	a.fastASCII = false
	if !a.layout || a.minor < 10 || a.minor > 11 {
		return
	}
	a.fastASCII = true // tentatively, for ASCII below
	ok := true
	for _, c := range []struct {
		s     string
		ascii bool
	}{{"", true}, {"<f4", true}, {"opencl:cpu:0", true}, {"h\u00e9", false}, {"\u20ac", false}} {
		o := a.UnicodeFromString(c.s)
		if o == 0 {
			a.ErrClear()
			ok = false
			break
		}
		p, n, fast := a.ASCII(o)
		u := a.UnicodeUTF8(o)
		if u == 0 {
			a.ErrClear()
		}
		if fast != c.ascii || u == 0 || (fast && (p != u || n != len(c.s) || string(cmem.Bytes(p, uintptr(n))) != c.s)) {
			ok = false
		}
		a.decRef.Call1(o)
		if !ok {
			break
		}
	}
	a.fastASCII = ok
}

// FastASCII reports whether ASCII reads from memory.
func (a *API) FastASCII() bool { return a.fastASCII }

func (a *API) checkDictLayout() {
	a.fastDicts = false
	if !a.layout {
		return
	}
	d := a.DictNew()
	if d == 0 {
		a.ErrClear()
		return
	}
	defer a.decRef.Call1(d)
	ok := true
	for i, k := range []string{"a", "b", "c"} {
		if *(*int64)(cmem.Ptr(d + offObSize)) != int64(i) || a.Length(d) != i {
			ok = false
			break
		}
		if a.DictSetItemString(d, k, a.None) != 0 {
			a.ErrClear()
			ok = false
			break
		}
	}
	a.fastDicts = ok && *(*int64)(cmem.Ptr(d + offObSize)) == 3 && a.Length(d) == 3
}

// DictLen returns len(d) of a dict (the caller has checked the type).
func (a *API) DictLen(d uintptr) int {
	if a.fastDicts {
		return int(*(*int64)(cmem.Ptr(d + offObSize)))
	}
	return a.Length(d)
}

// checkLongLayout enables LongValue on 3.10/3.11 if, for test ints made
// with PyLong_FromLongLong, it reads what PyLong_AsLongLong returns (a
// build with 15-bit digits, for one, fails at 2**30).
func (a *API) checkLongLayout() {
	a.fastLongs = false
	if !a.layout || a.minor < 10 || a.minor > 11 {
		return
	}
	a.fastLongs = true // tentatively, for LongValue below
	ok := true
	for _, c := range []struct {
		v    int64
		fast bool // must be read from memory (at most two digits)
	}{
		{0, true}, {1, true}, {-1, true}, {1<<30 - 1, true}, {1 << 30, true}, {-(1 << 40), true},
		{1<<60 - 1, true}, {-(1<<60 - 1), true}, {1 << 60, false}, {-(1 << 62) - 5, false},
	} {
		o := a.LongFromInt64(c.v)
		if o == 0 {
			a.ErrClear()
			ok = false
			break
		}
		got, fast := a.LongValue(o)
		want := a.LongAsInt64(o)
		a.decRef.Call1(o)
		if fast != c.fast || (fast && got != want) || want != c.v {
			ok = false
			break
		}
	}
	a.fastLongs = ok
}

// FastLongs and FastDicts report whether LongValue and DictLen read from
// memory.
func (a *API) FastLongs() bool { return a.fastLongs }
func (a *API) FastDicts() bool { return a.fastDicts }

// UnicodeUTF8 is PyUnicode_AsUTF8: a pointer to the UTF-8 of a str, valid
// while the str lives, or 0 with an error set.
func (a *API) UnicodeUTF8(o uintptr) uintptr {
	a.noPending("UnicodeUTF8")
	return a.unicodeAsUTF8.Call1(o)
}

// LongAsInt64 returns -1 with an error set on failure.
func (a *API) LongAsInt64(o uintptr) int64 {
	a.noPending("LongAsInt64")
	return int64(a.longAsLongLong.Call1(o))
}
func (a *API) LongAsUint64(o uintptr) uint64 {
	a.noPending("LongAsUint64")
	return uint64(a.longAsULongLong.Call1(o))
}
func (a *API) NumberIndex(o uintptr) uintptr {
	a.noPending("NumberIndex")
	return a.numberIndex.Call1(o)
}

// IndexCheck reports whether o's type has __index__ (PyIndex_Check); it
// runs no Python code.
func (a *API) IndexCheck(o uintptr) bool {
	a.noPending("IndexCheck")
	return a.indexCheck.Call1(o) != 0
}

// LongAsInt64Overflow is PyLong_AsLongLongAndOverflow: the value of an int
// (or the result of __index__, which it calls on other objects), with
// overflow -1 or +1, and no exception set, when it is outside int64. An
// error (from __index__) is -1 with overflow 0 and the exception set. On
// an int or int subclass it runs no Python code.
func (a *API) LongAsInt64Overflow(o uintptr) (v int64, overflow int) {
	a.noPending("LongAsInt64Overflow")
	// The out-parameter lives in C memory: the call may run Python code
	// that enters Go again and moves this goroutine's stack.
	blk := cmem.Alloc(8)
	defer cmem.Free(blk, 8)
	*(*int32)(cmem.Ptr(blk)) = 0
	v = int64(a.longAsLongLongAndOverflow.Call2(o, blk))
	return v, int(*(*int32)(cmem.Ptr(blk)))
}
func (a *API) BoolFromLong(v bool) uintptr {
	a.noPending("BoolFromLong")
	if v {
		return a.boolFromLong.Call1(1)
	}
	return a.boolFromLong.Call1(0)
}
func (a *API) FloatFromDouble(v float64) uintptr {
	a.noPending("FloatFromDouble")
	return a.floatFromDouble(v)
}
func (a *API) FloatAsDouble(o uintptr) float64 {
	a.noPending("FloatAsDouble")
	return a.floatAsDouble(o)
}

func (a *API) UnicodeFromString(s string) uintptr {
	a.noPending("UnicodeFromString")
	b := cstr(s)
	r := a.unicodeFromStringAndSize.Call2(p(b), uintptr(len(s)))
	runtime.KeepAlive(b)
	return r
}

// UnicodeAsString copies the UTF-8 of a str (or str subclass), every
// character of it, NULs included; ok is false with an error set on failure
// (a lone surrogate). It runs no Python code.
func (a *API) UnicodeAsString(o uintptr) (string, bool) {
	c, n, ok := a.UnicodeUTF8AndSize(o)
	if !ok {
		return "", false
	}
	return string(cmem.Bytes(c, uintptr(n))), true
}

// UnicodeUTF8AndSize returns the UTF-8 of a str in place (valid while the
// str lives) and its length in bytes: from memory for a compact ASCII str
// (see ASCII), else PyUnicode_AsUTF8AndSize. ok is false with an error set
// on failure.
func (a *API) UnicodeUTF8AndSize(o uintptr) (data uintptr, n int, ok bool) {
	a.noPending("UnicodeUTF8AndSize")
	if c, n, ok := a.ASCII(o); ok {
		return c, n, true
	}
	blk := cmem.Alloc(8)
	defer cmem.Free(blk, 8)
	c := a.unicodeAsUTF8AndSize.Call2(o, blk)
	if c == 0 {
		return 0, 0, false
	}
	return c, int(*(*int64)(cmem.Ptr(blk))), true
}

// --- capsules ---

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

// --- errors ---

func (a *API) ErrOccurred() uintptr { return a.errOccurred.Call0() }
func (a *API) ErrClear()            { a.errClear.Call0() }

// ErrSetString raises exc with msg, every byte of it: PyErr_SetString
// reads a C string, which ends at the first NUL, and a decoding error of
// bytes that are not UTF-8 would replace the exception meant. So the
// message is decoded with its length, invalid bytes replaced (U+FFFD), and
// raised with PyErr_SetObject.
func (a *API) ErrSetString(exc uintptr, msg string) {
	b := cstr(msg)
	s := a.unicodeDecodeUTF8.Call3(p(b), uintptr(len(msg)), p(errorsReplace))
	runtime.KeepAlive(b)
	if s == 0 {
		return // MemoryError is set
	}
	a.errSetObject.Call2(exc, s)
	a.DecRef(s)
}

var errorsReplace = cstr("replace")

func (a *API) ErrWriteUnraisable(o uintptr) { a.errWriteUnraisable.Call1(o) }
func (a *API) ErrGivenMatches(given, exc uintptr) bool {
	return a.errGivenMatches.Call2(given, exc) != 0
}

// ErrTake removes the current exception and returns its type and value
// (new references; value may be 0 only if type is 0). It uses
// PyErr_GetRaisedException where present, PyErr_Fetch otherwise; then the
// traceback is attached to the value (__traceback__), as 3.12 keeps it, so
// that ErrRestore can raise the same exception with its traceback.
func (a *API) ErrTake() (typ, val uintptr) {
	if a.errGetRaised != 0 {
		v := a.errGetRaised.Call0()
		if v == 0 {
			return 0, 0
		}
		t := a.Type(v)
		a.IncRef(t)
		return t, v
	}
	// Out-parameters live in C memory: Go stacks may move during a call.
	blk := cmem.Alloc(24)
	defer cmem.Free(blk, 24)
	a.errFetch.Call3(blk, blk+8, blk+16)
	if *(*uintptr)(cmem.Ptr(blk)) == 0 {
		return 0, 0
	}
	a.errNormalize.Call3(blk, blk+8, blk+16)
	t, v, tb := *(*uintptr)(cmem.Ptr(blk)), *(*uintptr)(cmem.Ptr(blk + 8)), *(*uintptr)(cmem.Ptr(blk + 16))
	if v == 0 {
		v = a.None
		a.IncRef(v)
	}
	if tb != 0 {
		if v != a.None {
			a.exceptionSetTraceback.Call2(v, tb) // takes its own reference
		}
		a.DecRef(tb)
	}
	return t, v
}

// ErrRestore makes exc (an exception instance, as ErrTake returns it) the
// current exception, with the traceback it carries; it steals the
// reference to exc.
func (a *API) ErrRestore(exc uintptr) {
	if a.errSetRaised != 0 {
		a.errSetRaised.Call1(exc)
		return
	}
	t := a.Type(exc)
	a.IncRef(t)
	tb := a.exceptionGetTraceback.Call1(exc) // a new reference, or NULL
	a.errRestore.Call3(t, exc, tb)           // steals all three
}

// ExceptionSetCause sets exc.__cause__ = cause (and __suppress_context__);
// it steals the reference to cause.
func (a *API) ExceptionSetCause(exc, cause uintptr) { a.exceptionSetCause.Call2(exc, cause) }
