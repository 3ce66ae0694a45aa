package pybridge

import (
	"os"
	"sync"
	"testing"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

var (
	embedOnce sync.Once
	embedPy   *Python
	embedErr  error
)

// embedded returns the test interpreter: $USMBRIDGE_PYTHON's libpython.
func embedded(t testing.TB) *Python {
	t.Helper()
	embedOnce.Do(func() {
		if os.Getenv("USMBRIDGE_PYTHON") == "" {
			embedErr = errkind.New(errkind.NotAvailable, "test", "USMBRIDGE_PYTHON is not set (scripts/setup-10-venv.sh prints it)")
			return
		}
		embedPy, embedErr = Embed("")
		if embedErr == nil {
			embedErr = embedPy.Do(func(g *GIL) error {
				m, err := g.importModule("numpy")
				if err != nil {
					return errkind.Wrap(errkind.NotAvailable, "test", "numpy", err)
				}
				g.DecRef(m)
				return nil
			})
		}
	})
	testutil.Runtime(t, testutil.Python, embedErr)
	return embedPy
}

// withDpctl returns the interpreter with dpctl, dpnp.tensor and an
// opencl:cpu queue "q" in __main__.
func withDpctl(t testing.TB) (*Python, *dpctl.Backend) {
	t.Helper()
	py := embedded(t)
	d, err := py.Dpctl()
	if err == nil {
		err = py.Do(func(g *GIL) error {
			if err := g.Exec("import dpctl, dpctl.memory, dpnp.tensor as dpt, numpy as np\nq = dpctl.SyclQueue('opencl:cpu')"); err != nil {
				return errkind.Wrap(errkind.NotAvailable, "test", "dpnp.tensor / opencl:cpu queue", err)
			}
			return nil
		})
	}
	testutil.Runtime(t, testutil.Dpctl, err)
	return py, d
}

// run executes Python statements, failing the test on error.
func run(t testing.TB, py *Python, code string) {
	t.Helper()
	if err := py.Do(func(g *GIL) error { return g.Exec(code) }); err != nil {
		t.Fatalf("python: %v\n%s", err, code)
	}
}

// evalGo evaluates an expression and converts it to Go.
func evalGo(t testing.TB, py *Python, expr string) any {
	t.Helper()
	var v any
	if err := py.Do(func(g *GIL) error {
		o, err := g.Eval(expr)
		if err != nil {
			return err
		}
		defer g.DecRef(o)
		v, err = g.goValue(o)
		return err
	}); err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	return v
}

// inParallel runs fn(w) on workers goroutines at once and fails the test
// with the first error any of them returned.
func inParallel(t *testing.T, workers int, fn func(w int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(w); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
