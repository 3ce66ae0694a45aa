package pyapi

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// called is the C API pybridge calls, written out here independently of
// Load's table: a libpython that has these loads, whatever else it lacks.
var called = []string{
	"Py_InitializeEx", "Py_IsInitialized", "PyEval_SaveThread", "PyEval_RestoreThread",
	"PyGILState_Ensure", "PyGILState_Release", "PyGILState_Check", "Py_IncRef", "Py_DecRef", "PyImport_ImportModule",
	"PyObject_GetAttrString", "PyObject_SetAttrString", "PyObject_GetAttr",
	"PyObject_Call", "PyObject_CallObject", "PyObject_Str", "PyObject_Repr", "PyObject_IsTrue",
	"PyObject_IsInstance", "PyCallable_Check", "PyObject_Size", "PyType_GetFlags",
	"PyTuple_New", "PyTuple_SetItem", "PyTuple_GetItem", "PyList_GetItem", "PyDict_New",
	"PyDict_SetItemString", "PyDict_GetItemString", "PyDict_GetItemWithError", "PyList_AsTuple",
	"PyIndex_Check", "PyLong_AsLongLongAndOverflow", "PyUnicode_AsUTF8AndSize",
	"PyLong_FromLongLong", "PyLong_FromUnsignedLongLong", "PyLong_AsLongLong",
	"PyLong_AsUnsignedLongLong", "PyNumber_Index", "PyBool_FromLong",
	"PyUnicode_FromStringAndSize", "PyUnicode_AsUTF8", "PyCapsule_New", "PyCapsule_GetPointer",
	"PyCapsule_GetName", "PyCapsule_SetName", "PyErr_Occurred", "PyErr_SetObject", "PyUnicode_DecodeUTF8", "PyErr_Clear",
	"PyErr_WriteUnraisable", "PyErr_GivenExceptionMatches", "PyException_SetCause",
	"PyFloat_FromDouble", "PyFloat_AsDouble", "PyObject_VectorcallMethod",
}

// Exceptions before 3.12, and after; attributes that may be missing
// (3.7 to 3.12, 3.13 on; PyObject_GetAttr, which every CPython has, is the
// lookup where neither exists).
var (
	fetchFamily  = []string{"PyErr_Fetch", "PyErr_NormalizeException", "PyErr_Restore", "PyException_GetTraceback", "PyException_SetTraceback"}
	raisedFamily = []string{"PyErr_GetRaisedException", "PyErr_SetRaisedException"}
	lookupOld    = []string{"_PyObject_LookupAttr"}
	lookupNew    = []string{"PyObject_GetOptionalAttr"}
)

func objects() []string {
	v := []string{"_Py_NoneStruct", "_Py_TrueStruct", "_Py_FalseStruct", "PyLong_Type", "PyFloat_Type",
		"PyUnicode_Type", "PyTuple_Type", "PyList_Type", "PyDict_Type", "PyBool_Type", "PyCapsule_Type", "PyType_Type"}
	for _, n := range excNames {
		v = append(v, "PyExc_"+n)
	}
	return v
}

func without(names []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
}

// A libpython lacking entry points nobody calls still loads: Load requires
// only what pybridge calls (and one of the two exception families), and
// names every missing one at once.
func TestLoadRequiresOnlyWhatIsCalled(t *testing.T) {
	for _, c := range []struct {
		name    string
		funcs   []string
		vars    []string
		missing []string // nil: loads
	}{
		{name: "called, 3.11 exceptions", funcs: slices.Concat(called, fetchFamily, lookupOld), vars: objects()},
		{name: "called, 3.12 exceptions", funcs: slices.Concat(called, raisedFamily, lookupOld), vars: objects()},
		{name: "3.13 attribute lookup", funcs: slices.Concat(called, raisedFamily, lookupNew), vars: objects()},
		{name: "plain attribute lookup", funcs: slices.Concat(called, raisedFamily), vars: objects()},
		{name: "no exception family", funcs: slices.Concat(called, lookupOld), vars: objects(), missing: fetchFamily},
		{
			name:    "no attribute lookup, half of the 3.12 family",
			funcs:   slices.Concat(called, raisedFamily[:1]),
			vars:    objects(),
			missing: raisedFamily[1:],
		},
		{
			name:  "two required missing",
			funcs: without(slices.Concat(called, fetchFamily, lookupOld), "Py_IncRef", "PyCapsule_New"),
			vars:  without(objects(), "PyExc_TypeError"),
			// Reported in table order, all of them.
			missing: []string{"Py_IncRef", "PyCapsule_New", "PyExc_TypeError"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, testutil.BuildStubLibrary(t, c.funcs, c.vars))
			require.NoError(t, err)
			a, err := Load(lib)
			if c.missing == nil {
				require.NoError(t, err)
				assert.False(t, a.FastLayout(), "a stub's type objects are no CPython layout")
				assert.Equal(t, -1, a.Minor(), "the stub has no Py_GetVersion")
				return
			}
			var ms *ffi.MissingSymbolsError
			require.True(t, errors.As(err, &ms), "%v", err)
			assert.Equal(t, c.missing, ms.Symbols)
			assert.ErrorIs(t, err, errkind.NotAvailable)
		})
	}
}
