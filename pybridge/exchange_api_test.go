package pybridge

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// exchangePyTables defines DLPack C exchange API producers in Python
// (ctypes): make(major, prev, from_py) returns an object whose type
// carries a table; its managed_tensor_from_py_object_no_sync takes numpy's
// versioned tensor (renaming numpy's capsule, so the consumer owns it) and
// counts its calls. __dlpack__ raises unless the case expects a fallback.
const exchangePyTables = `
import ctypes, numpy as np
capi = ctypes.pythonapi
capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
capi.PyCapsule_New.restype = ctypes.py_object
capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
# A capsule keeps its name's pointer: the names live as long as the module.
NAMES = {n: ctypes.create_string_buffer(n) for n in (b"dlpack_exchange_api", b"exchange")}
def capsule(p, name): return capi.PyCapsule_New(p, ctypes.addressof(NAMES[name]), None)
FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
class Table(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev", ctypes.c_void_p),
                ("alloc", ctypes.c_void_p), ("from_py", ctypes.c_void_p), ("to_py", ctypes.c_void_p),
                ("dltensor", ctypes.c_void_p), ("stream", ctypes.c_void_p)]
calls = [0]
@FROM_PY
def take(obj, out):
    x = ctypes.cast(obj, ctypes.py_object).value
    cap = x.a.__dlpack__(max_version=(1, 0))
    p = capi.PyCapsule_GetPointer(cap, b"dltensor_versioned")
    capi.PyCapsule_SetName(cap, b"used_dltensor_versioned")
    ctypes.c_void_p.from_address(out).value = p
    calls[0] += 1
    return 0
# dltensor_from_py_object_no_sync: a bare DLTensor (no flags, so no
# read-only), which the consumer must never take; counted if it is.
DLT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
bare_calls = [0]
@DLT
def bare(obj, out):
    bare_calls[0] += 1
    x = ctypes.cast(obj, ctypes.py_object).value
    cap = x.a.__dlpack__(max_version=(1, 0))
    ctypes.memmove(out, capi.PyCapsule_GetPointer(cap, b"dltensor_versioned") + 32, 48)
    return 0
tables = []
def table(major, prev=None, from_py=True, dltensor=False):
    t = Table(major, 3, prev, 0, ctypes.cast(take, ctypes.c_void_p).value if from_py else None, 0,
              ctypes.cast(bare, ctypes.c_void_p).value if dltensor else None, 0)
    tables.append(t)
    return t
def make(attr, fallback=False, readonly=False):
    a = np.arange(4.0)
    a.flags.writeable = not readonly
    class P:
        def __init__(self): self.a = a
        def __dlpack__(self, **kw):
            if not fallback: raise AssertionError("__dlpack__ called")
            return self.a.__dlpack__(**kw)
        def __dlpack_device__(self): return (1, 0)
    P.__c_dlpack_exchange_api__ = attr
    return P()
good = table(1)
cases = {
    "table": make(ctypes.addressof(good)),
    "read-only": make(ctypes.addressof(good), readonly=True),
    "capsule": make(capsule(ctypes.addressof(good), b"dlpack_exchange_api")),
    "newer major only": make(ctypes.addressof(table(2)), fallback=True),
    "newer major chained": make(ctypes.addressof(table(2, ctypes.addressof(good)))),
    "int 0": make(0, fallback=True),
    "NULL from_py": make(ctypes.addressof(table(1, from_py=False))),
    "bare DLTensor only": make(ctypes.addressof(table(1, from_py=False, dltensor=True)), readonly=True),
    "capsule name": make(capsule(ctypes.addressof(good), b"exchange")),
    "str": make("dlpack_exchange_api"),
}
`

// FromDLPack takes a producer's table when its type has one, with the
// import rules of every path, and falls back or refuses as
// exchangeAPI documents.
func TestFromDLPackExchangeAPI(t *testing.T) {
	py := embedded(t)
	run(t, py, exchangePyTables)
	cases := []struct {
		name     string
		opts     FromDLPackOptions
		viaTable bool  // the table's from_py was called
		readOnly bool  // the import carries READ_ONLY
		copied   bool  // copy=True made a copy
		err      error // the error kind, or nil
	}{
		{name: "table", viaTable: true},
		{name: "read-only", viaTable: true, readOnly: true},
		{name: "capsule", viaTable: true},
		{name: "table", opts: FromDLPackOptions{Copy: dlpack.CopyAlways}, viaTable: true, copied: true},
		{name: "newer major only"},
		{name: "newer major chained", viaTable: true},
		{name: "int 0"},
		{name: "NULL from_py", err: usm.ErrBuffer},
		// A bare DLTensor has no flags: a read-only array would come in
		// writable. The consumer never takes one (exchange.go).
		{name: "bare DLTensor only", err: usm.ErrBuffer},
		{name: "capsule name", err: usm.ErrType},
		{name: "str", err: usm.ErrType},
	}
	before := exportledger.Read()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls0, bare0 := evalGo(t, py, "calls[0]").(int64), evalGo(t, py, "bare_calls[0]").(int64)
			defer func() {
				if evalGo(t, py, "bare_calls[0]").(int64) != bare0 {
					t.Error("dltensor_from_py_object_no_sync was called: its bare DLTensor cannot carry read-only")
				}
			}()
			imports0 := exchangeImports.Load()
			err := py.Do(func(g *GIL) error {
				x, err := g.Eval("cases[" + quote(c.name) + "]")
				if err != nil {
					return err
				}
				defer g.DecRef(x)
				tns, err := g.FromDLPack(x, c.opts)
				if err != nil {
					return err
				}
				defer tns.Release()
				if v := float64s(t, tns); !slices.Equal(v, []float64{0, 1, 2, 3}) {
					t.Errorf("values %v", v)
				}
				if tns.ReadOnly != c.readOnly {
					t.Errorf("read-only = %v, want %v", tns.ReadOnly, c.readOnly)
				}
				if tns.IsCopied() != c.copied {
					t.Errorf("IS_COPIED = %v, want %v", tns.IsCopied(), c.copied)
				}
				return nil
			})
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			called := evalGo(t, py, "calls[0]").(int64) != calls0
			if called != c.viaTable || (exchangeImports.Load() != imports0) != c.viaTable {
				t.Errorf("through the table: %v (counted %d), want %v", called, exchangeImports.Load()-imports0, c.viaTable)
			}
		})
	}
	if s := exportledger.Read(); s.LiveImports != before.LiveImports {
		t.Errorf("live imports %d, before %d", s.LiveImports, before.LiveImports)
	}
}

// leavesErrorC wraps a producer's managed_tensor_from_py_object_no_sync
// (set_inner) in one that reports success and leaves a RuntimeError set,
// a producer bug ctypes cannot express (it clears what a callback
// raises). The Py* symbols come from the interpreter, which Embed loads
// RTLD_GLOBAL.
const leavesErrorC = `
typedef int (*from_py_fn)(void *, void **);
static from_py_fn inner;
void set_inner(from_py_fn f) { inner = f; }
extern void PyErr_SetString(void *, const char *);
extern void *PyExc_RuntimeError;
int from_py_leaves_error(void *obj, void **out) {
	int r = inner(obj, out);
	PyErr_SetString(PyExc_RuntimeError, "left set by the producer");
	return r;
}
int stream_leaves_error(int type, int id, void **out) {
	*out = 0;
	PyErr_SetString(PyExc_RuntimeError, "left set by the producer");
	return 0;
}
`

// buildLeavesError builds leavesErrorC and returns the library's path.
func buildLeavesError(t *testing.T) string {
	t.Helper()
	cc, err := testutil.CC()
	testutil.Runtime(t, testutil.CCompiler, err)
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "leaves.c"), filepath.Join(dir, "libleaves.so")
	require.NoError(t, os.WriteFile(src, []byte(leavesErrorC), 0o644))
	if out, err := exec.Command(cc[0], append(cc[1:], "-fPIC", "-shared", "-o", lib, src)...).CombinedOutput(); err != nil {
		t.Fatalf("building the fixture: %v\n%s", err, out)
	}
	return lib
}

// A producer's table function that reports success with an exception
// set has failed: FromDLPack raises that exception, drops the tensor,
// and calls nothing with the exception pending. Here the tensor's import
// (managed_tensor_from_py_object_no_sync), and for a kDLOneAPI tensor the
// producer's work stream (current_work_stream).
func TestFromDLPackExchangeSuccessWithExceptionSet(t *testing.T) {
	py, _ := withDpctl(t)
	lib := buildLeavesError(t)
	run(t, py, exchangePyTables+`
leaves = ctypes.CDLL(`+quote(lib)+`)
leaves.set_inner(take)
bad = table(1)
bad.from_py = ctypes.cast(leaves.from_py_leaves_error, ctypes.c_void_p).value
cases["import leaves an error"] = make(ctypes.addressof(bad))
bad_stream = table(1)
bad_stream.stream = ctypes.cast(leaves.stream_leaves_error, ctypes.c_void_p).value
class OnDevice:
    def __init__(self): self.a = dpt.arange(4.0, sycl_queue=q)
    def __dlpack__(self, **kw): raise AssertionError("__dlpack__ called")
    def __dlpack_device__(self): return self.a.__dlpack_device__()
OnDevice.__c_dlpack_exchange_api__ = ctypes.addressof(bad_stream)
cases["work stream leaves an error"] = OnDevice()
`)
	for _, name := range []string{"import leaves an error", "work stream leaves an error"} {
		t.Run(name, func(t *testing.T) { fromDLPackLeavesNothingPending(t, py, name) })
	}
}

func fromDLPackLeavesNothingPending(t *testing.T, py *Python, name string) {
	before := exportledger.Read()
	calls0 := evalGo(t, py, "calls[0]").(int64)
	err := py.Do(func(g *GIL) error {
		x := eval(t, g, "cases["+quote(name)+"]")
		defer g.DecRef(x)
		tns, err := g.FromDLPack(x, FromDLPackOptions{})
		if err == nil {
			tns.Release()
		}
		var pe *Exception
		if !errors.As(err, &pe) || pe.Type != "RuntimeError" || pe.Message != "left set by the producer" {
			t.Errorf("FromDLPack: %v, want the producer's RuntimeError", err)
		}
		if g.api().ErrOccurred() != 0 {
			t.Errorf("an exception is still pending: %v", g.fetch(""))
		}
		return nil
	})
	require.NoError(t, err)
	if evalGo(t, py, "calls[0]").(int64) == calls0 {
		t.Fatal("the table's function was not called")
	}
	run(t, py, "import gc; gc.collect()")
	if s := exportledger.Read(); s.LiveImports != before.LiveImports {
		t.Errorf("live imports %d, before %d: the tensor was kept", s.LiveImports, before.LiveImports)
	}
}
