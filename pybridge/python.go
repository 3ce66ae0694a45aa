package pybridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/pyapi"
)

// interpMode says how pybridge found the interpreter.
type interpMode uint8

const (
	modeEmbedded interpMode = iota + 1 // Go loaded libpython and initialised it
	modeAttached                       // Go code runs inside a Python process
)

func (m interpMode) String() string {
	switch m {
	case modeEmbedded:
		return "embedded"
	case modeAttached:
		return "attached"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Python is a CPython interpreter in this process. There is at most one per
// process; Embed and attach return the same value on every call. All
// methods are safe for concurrent use from any goroutine.
type Python struct {
	api     *pyapi.API
	mode    interpMode
	library string // libpython path (Embedded) or "" (symbols of the process)
	version string

	dpMu     sync.Mutex
	dpLoad   *dpctlLoad                    // the load under way, if any (under dpMu)
	dpLoaded atomic.Pointer[dpctl.Backend] // dpctl's backend, once a load succeeded
	dpQueues queueCache                    // SyclQueue objects pinned in it (dpctl.go)
	// SyclQueue objects over dpctl's default queues, by device, made once
	// (order.go): from_dlpack's stream for producers without a queue.
	streamMu   sync.Mutex
	streamObjs map[int]uintptr

	types cachedTypes

	// gil is the one GIL value Do and enterHeld hand out (it holds nothing but
	// py), so that entering the interpreter allocates nothing.
	gil GIL

	// The releaser drops references released without the GIL (ref.go).
	releaserOnce sync.Once
	releaserWake chan struct{}
	soonArmed    atomic.Bool // a ReleaseSoon timer is pending

	keysMu sync.Mutex
	keys   []uintptr // str objects of suaiKeyNames; see suaiKeyObjects
	// suaiName is the str "__sycl_usm_array_interface__", made with keys
	// (0 until then); see suaiAttrName.
	suaiName atomic.Uintptr
	// getters are operator.itemgetter of all SUAI keys, and of all but
	// "offset" (0 if they could not be made); see suaiValues.
	getters     [2]uintptr
	gettersDone bool
}

// Version is sys.version_info as "3.11.2".
func (py *Python) Version() string { return py.version }

// Library is the libpython that was loaded ("" when attached to a process
// whose executable holds the interpreter).
func (py *Python) Library() string { return py.library }

var (
	procMu sync.Mutex
	procPy *Python
)

// interpInfo is what the python executable tells about itself.
type interpInfo struct {
	LibDir     string   `json:"libdir"`
	InstSOName string   `json:"instsoname"`
	LDLibrary  string   `json:"ldlibrary"`
	Shared     any      `json:"shared"`
	GILOff     any      `json:"gil_disabled"`
	Path       []string `json:"path"`
	Prefix     string   `json:"prefix"`
	ExecPrefix string   `json:"exec_prefix"`
	Executable string   `json:"executable"`
	Version    string   `json:"version"`
}

const probeScript = `import json, sys, sysconfig
v = sysconfig.get_config_var
print(json.dumps({"libdir": v("LIBDIR") or "", "instsoname": v("INSTSONAME") or "",
  "ldlibrary": v("LDLIBRARY") or "", "shared": v("Py_ENABLE_SHARED"),
  "gil_disabled": v("Py_GIL_DISABLED"), "path": [p for p in sys.path if p],
  "prefix": sys.prefix, "exec_prefix": sys.exec_prefix, "executable": sys.executable,
  "version": "%d.%d.%d" % sys.version_info[:3]}))`

// Embed loads the libpython of the given python executable (for example a
// virtual environment's bin/python), initialises it with Py_InitializeEx(0)
// (no signal handlers), gives it that executable's sys.path, prefix and
// executable, so that the environment's site-packages import, and releases
// the GIL. An empty python uses $USMBRIDGE_PYTHON, then python3 on $PATH.
//
// The library is opened RTLD_GLOBAL, because extension modules resolve the
// Py* symbols from the global scope. A missing or static-only interpreter
// is a usm.ErrNotAvailable error. Embed in a process that already runs
// Python (the extension module's case, attach) is an error; a second Embed returns the first result.
func Embed(python string) (*Python, error) {
	procMu.Lock()
	defer procMu.Unlock()
	if procPy != nil {
		if procPy.mode != modeEmbedded {
			return nil, errkind.New(errkind.Value, "pybridge.Embed", "this process already runs Python (use Attach)")
		}
		return procPy, nil
	}
	if python == "" {
		python = os.Getenv("USMBRIDGE_PYTHON")
	}
	if python == "" {
		python = "python3"
	}
	exe, err := exec.LookPath(python)
	if err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "pybridge.Embed", "no python executable "+errkind.Quote(python), err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(exe, "-c", probeScript)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "pybridge.Embed", exe+" failed: "+stderr.String(), err)
	}
	var info interpInfo
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "pybridge.Embed", "cannot read what "+exe+" says about itself", err)
	}
	if truthyConfig(info.GILOff) {
		return nil, errkind.New(errkind.NotSupported, "pybridge.Embed", exe+" is a free-threaded build, which pybridge does not support")
	}
	var names []string
	for _, n := range []string{info.InstSOName, info.LDLibrary} {
		if n == "" || filepath.Ext(n) == ".a" {
			continue
		}
		if info.LibDir != "" {
			names = append(names, filepath.Join(info.LibDir, n))
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, errkind.New(errkind.NotAvailable, "pybridge.Embed", exe+" has no shared libpython (built without --enable-shared)")
	}
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDGlobal, names...)
	if err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "pybridge.Embed", "cannot load libpython of "+exe, err)
	}
	api, err := pyapi.Load(lib)
	if err != nil {
		return nil, err
	}
	if api.IsInitialized() {
		return nil, errkind.New(errkind.Value, "pybridge.Embed", "Python is already initialised in this process (use Attach)")
	}
	py := &Python{api: api, mode: modeEmbedded, library: lib.Name(), version: info.Version}
	py.gil.py = py

	// Initialise on a locked thread, configure sys, and release the GIL
	// so that any thread can take it with PyGILState_Ensure.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	api.InitializeEx(0)
	api.CheckRuntimeLayout()
	err = py.gil.configureSys(info)
	api.SaveThread()
	if err != nil {
		return nil, err
	}
	procPy = py
	return py, nil
}

func truthyConfig(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != 0
	case bool:
		return x
	case string:
		return x != "" && x != "0"
	}
	return false
}

func (g *GIL) configureSys(info interpInfo) error {
	sys, err := g.importModule("sys")
	if err != nil {
		return err
	}
	defer g.DecRef(sys)
	paths := make([]any, len(info.Path))
	for i, p := range info.Path {
		paths[i] = p
	}
	for _, kv := range []struct {
		name string
		v    any
	}{{"path", paths}, {"prefix", info.Prefix}, {"exec_prefix", info.ExecPrefix}, {"executable", info.Executable}} {
		o, err := g.fromGo(kv.v)
		if err != nil {
			return err
		}
		rc := g.api().SetAttrString(sys.p, kv.name, o.p)
		g.DecRef(o)
		if rc != 0 {
			return g.fetch("pybridge.Embed: setting sys." + kv.name)
		}
	}
	return nil
}

// attach finds the interpreter of the Python process this Go code runs in
// (a c-shared library loaded with ctypes, or a Go library dlopened by an
// extension): libpython3.X.so.1.0 if it is loaded (RTLD_NOLOAD), otherwise
// the symbols of the process itself (a python executable that links the
// interpreter statically). Python must already be initialised.
func attach() (*Python, error) {
	procMu.Lock()
	defer procMu.Unlock()
	if procPy != nil {
		if procPy.mode != modeAttached {
			return nil, errkind.New(errkind.Value, "pybridge.attach", "this process embeds Python (use Embed)")
		}
		return procPy, nil
	}
	var names []string
	for minor := 20; minor >= 8; minor-- {
		names = append(names, "libpython3."+strconv.Itoa(minor)+".so.1.0")
	}
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, names...)
	library := ""
	if err == nil {
		library = lib.Name()
	} else if lib, err = openSelf(); err != nil {
		// The executable itself: dlopen("") is the main program, whose
		// dlsym searches the global scope.
		return nil, errkind.Wrap(errkind.NotAvailable, "pybridge.attach", "no Python in this process", err)
	}
	api, err := pyapi.Load(lib)
	if err != nil {
		return nil, err
	}
	if !api.IsInitialized() {
		return nil, errkind.New(errkind.NotAvailable, "pybridge.attach", "Python is not initialised in this process")
	}
	py := &Python{api: api, mode: modeAttached, library: library}
	py.gil.py = py
	if err := py.Do(func(g *GIL) error {
		g.api().CheckRuntimeLayout()
		v, err := g.Eval("'%d.%d.%d' % __import__('sys').version_info[:3]")
		if err != nil {
			return err
		}
		defer g.DecRef(v)
		py.version, _ = g.api().UnicodeAsString(v.p)
		return nil
	}); err != nil {
		return nil, err
	}
	procPy = py
	return py, nil
}

func openSelf() (*ffi.Lib, error) { return ffi.OpenLib(ffi.RTLDNow, "") }

// Do runs fn holding the GIL on a locked OS thread (LockOSThread,
// PyGILState_Ensure, fn, PyGILState_Release, UnlockOSThread), so any
// goroutine may call it, concurrently with others. It may be nested. fn
// must not start goroutines that wait for the GIL while it runs, and the
// *GIL must not be used after fn returns. Python references Go let go of
// without the GIL (see Exception) are dropped first.
//
// fn starts with no Python exception pending, and Do leaves the thread's
// exception as it found it. The C API must not be called with an
// exception set (an import then fails, and can leave modules half
// initialised), yet this thread may have one pending when Do is entered:
// code further up its stack that holds an exception and released the GIL
// to wait for Go (the extension's asarray of an object whose
// __sycl_usm_array_interface__ raised, waiting for dpctl's import) gets
// here with it. Do sets it aside while fn runs and puts it back after. An
// exception fn leaves pending is a failure fn did not report: it becomes
// Do's error if fn returned none, and is dropped otherwise.
func (py *Python) Do(fn func(g *GIL) error) (err error) {
	// A goroutine that does not hold the GIL waits for its turn here, in
	// Go, before it locks a thread and waits in PyGILState_Ensure: each
	// waiter in C is an OS thread, and twenty thousand goroutines calling
	// Do at once would pass Go's limit of ten thousand (RATIONALE.md, "Do
	// waits in Go"). Only a thread that holds the GIL (a nested Do, Go
	// called from Python) skips the turn, which it could never get while
	// the goroutines waiting for the GIL it holds fill the turns.
	nested := py.api.GILCheck()
	if !nested {
		gilTurns <- struct{}{}
	}
	runtime.LockOSThread()
	st := py.api.GILEnsure()
	if !nested {
		<-gilTurns // the turn is only for the wait: the holder runs fn without one
	}
	g := &py.gil
	aside := g.setAside()
	defer func() {
		g.putBack(aside, &err)
		py.api.GILRelease(st)
		runtime.UnlockOSThread()
	}()
	g.dropReleased()
	return fn(g)
}

// gilTurns bounds the goroutines of Do waiting in PyGILState_Ensure, each
// on a thread of its own. The bound only spends threads: one goroutine at a
// time holds the GIL, and one that got it gives its turn back at once, so a
// holder that waits for another goroutine's Do (through Python code that
// released the GIL) never keeps that goroutine from its turn.
var gilTurns = make(chan struct{}, 32)

// DoHeld is Do for Go code that C calls with the GIL held (an extension
// module's entry points, a deallocator): fn runs with the GIL the calling
// thread holds, without PyGILState_Ensure and Release (one C call to check
// instead of two). The pending exception, if any, is set aside and put
// back, and an exception left pending becomes the error, as in Do. A
// thread that does not hold the GIL gets an error and fn does not run.
func (py *Python) DoHeld(fn func(g *GIL) error) (err error) {
	held, pending := py.api.GILCheckPending() // one crossing: an extension call makes one per array it imports
	if !held {
		return errors.New("pybridge.DoHeld: the calling thread does not hold the GIL") // no kind: RuntimeError
	}
	g := &py.gil
	var aside uintptr
	if pending != 0 {
		aside = g.takePending()
	}
	defer g.putBack(aside, &err)
	g.dropReleased()
	return fn(g)
}

// setAside takes the pending Python exception, if any (0 if none), so
// that the calls that follow run with none; putBack restores it.
func (g *GIL) setAside() uintptr {
	if g.api().ErrOccurred() == 0 {
		return 0
	}
	return g.takePending()
}

// takePending is setAside for a caller that knows an exception is
// pending.
func (g *GIL) takePending() uintptr {
	t, v := g.api().ErrTake()
	g.api().DecRef(t)
	return v
}

// putBack ends what setAside began: an exception pending now was left
// by a failure nobody reported, and becomes *err unless *err already says
// what failed; then the set-aside exception is pending again.
func (g *GIL) putBack(aside uintptr, err *error) {
	a := g.api()
	if a.ErrOccurred() != 0 {
		left := g.fetch("")
		if *err == nil {
			*err = left
		} else {
			g.ReleaseError(left)
		}
	}
	if aside != 0 {
		a.ErrRestore(aside)
	}
}

// GIL is the capability to call the C API: it exists only inside Do (or,
// in the extension module, between enterHeld and exitHeld).
type GIL struct{ py *Python }

func (g *GIL) api() *pyapi.API { return g.py.api }

// Attach returns the interpreter of the Python process this Go code runs
// in: a Go library that Python loaded (an extension module built with
// pyext, a c-shared library opened with ctypes). It finds libpython (or the
// executable's own symbols) and uses that interpreter, which must be
// running; it never initialises one. A program that hosts Python calls
// Embed instead. Attach and Embed return the same *Python on every call.
func Attach() (*Python, error) { return attach() }
