package dpctl_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// The library is only usable once dpctl's Python package loaded it (Open
// binds that instance), so the tests embed Python and open the Backend
// through pybridge's Python.Dpctl, as a program does.

var (
	loadOnce sync.Once
	loadedPy *pybridge.Python
	loadedB  *dpctl.Backend
	loadErr  error
)

// TestMain ends the process with exit_group directly once the SYCL
// runtime has been loaded: under -race, os.Exit runs the race runtime's
// finaliser, which calls libc exit(), and the static destructors of
// Intel's SYCL and CPU OpenCL runtimes then crash while their worker
// threads are still alive (pybridge's TestMain says more).
func TestMain(m *testing.M) {
	code := m.Run()
	if n := dpctl.Live()["events"]; code == 0 && n != 0 {
		fmt.Fprintf(os.Stderr, "dpctl: LEAK CHECK FAILED: %d launch events not closed\n", n)
		code = 99
	}
	if loadedB != nil {
		os.Stdout.Sync()
		syscall.Exit(code)
	}
	os.Exit(code)
}

// loaded returns the embedded interpreter, with dpctl, dpnp.tensor and an
// opencl:cpu queue "q" in __main__, and the Backend of its dpctl.
func loaded(t testing.TB) (*pybridge.Python, *dpctl.Backend) {
	t.Helper()
	loadOnce.Do(func() {
		if os.Getenv("USMBRIDGE_PYTHON") == "" {
			loadErr = errkind.New(errkind.NotAvailable, "test", "USMBRIDGE_PYTHON is not set (scripts/setup-10-venv.sh prints it)")
			return
		}
		py, err := pybridge.Embed("")
		if err != nil {
			loadErr = err
			return
		}
		b, err := py.Dpctl()
		if err == nil {
			err = py.Do(func(g *pybridge.GIL) error {
				if err := g.Exec("import dpctl, dpctl.memory, dpnp.tensor as dpt, numpy as np\nq = dpctl.SyclQueue('opencl:cpu')"); err != nil {
					return errkind.Wrap(errkind.NotAvailable, "test", "dpnp.tensor / opencl:cpu queue", err)
				}
				return nil
			})
		}
		loadedPy, loadedB, loadErr = py, b, err
	})
	testutil.Runtime(t, testutil.Dpctl, loadErr)
	return loadedPy, loadedB
}

// run executes Python statements, failing the test on error.
func run(t testing.TB, py *pybridge.Python, code string) {
	t.Helper()
	if err := py.Do(func(g *pybridge.GIL) error { return g.Exec(code) }); err != nil {
		t.Fatalf("python: %v\n%s", err, code)
	}
}

// evalInt evaluates a Python expression whose value is an int.
func evalInt(t testing.TB, py *pybridge.Python, expr string) int64 {
	t.Helper()
	var s string
	err := py.Do(func(g *pybridge.GIL) error {
		o, err := g.Eval(expr)
		if err != nil {
			return err
		}
		defer g.DecRef(o)
		s, err = g.String(o)
		return err
	})
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("eval %s: %q is not an int", expr, s)
	}
	return v
}

// asArray binds the SUAI of the object expr evaluates to, with dpctl's
// registry.
func asArray(t testing.TB, py *pybridge.Python, expr string) (*usm.Array, error) {
	t.Helper()
	var arr *usm.Array
	err := py.Do(func(g *pybridge.GIL) error {
		o, err := g.Eval(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		defer g.DecRef(o)
		arr, err = g.AsArray(o, nil)
		return err
	})
	return arr, err
}

// isNotSupported reports usm.ErrNotSupported (a device without the USM
// kind asked for).
func isNotSupported(err error) bool { return errors.Is(err, usm.ErrNotSupported) }

// unsafePointer is the address of Go memory, for pointers no runtime knows.
func unsafePointer[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }
