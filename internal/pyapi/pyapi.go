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
