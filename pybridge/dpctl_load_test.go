package pybridge

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// The first load of dpctl in a process is what these tests are about, so
// each runs in a child process of its own; the parent only makes sure
// dpctl is there (skipping, or failing under USMBRIDGE_REQUIRE, if not).
func inFirstLoadChild(t *testing.T, name string, body func(t *testing.T, py *Python)) {
	t.Helper()
	if testutil.InChild(name) {
		body(t, embedded(t))
		return
	}
	withDpctl(t)
	testutil.RunChild(t, name, 2*time.Minute).Expect(t, 0, "--- PASS: "+t.Name())
}

// wantDpctlWorks fails the test unless dpctl loads now and its runtime
// answers.
func wantDpctlWorks(t *testing.T, py *Python) {
	t.Helper()
	d, err := py.Dpctl()
	if err != nil {
		t.Fatalf("a later Dpctl() still fails: %v", err)
	}
	if len(d.Devices()) == 0 {
		t.Fatal("dpctl loaded without devices")
	}
	run(t, py, "import dpctl\n_q = dpctl.SyclQueue()")
}

// The reported path: the extension's asarray of an object without
// __sycl_usm_array_interface__ is the first call to need dpctl; it used to
// import dpctl with the AttributeError of reading the attribute pending,
// the import failed, and the failure was kept for the life of the
// process. The C half now clears the AttributeError and hands Go no dict.
func TestAsArrayReadWithoutSUAIThenDpctl(t *testing.T) {
	inFirstLoadChild(t, "asarray-read-no-suai", func(t *testing.T, py *Python) {
		err := py.Do(func(g *GIL) error {
			obj := eval(t, g, "object()")
			defer g.DecRef(obj)
			a := g.api()
			if a.GetAttrC(obj.p, cSUAI) != 0 || a.ErrOccurred() == 0 {
				t.Fatal("reading the attribute of object() did not raise")
			}
			a.ErrClear()
			_, _, err := g.ArrayFromSUAI(obj, &SUAIDict{}, nil)
			if !errors.Is(err, usm.ErrValue) || !strings.Contains(err.Error(), "does not expose `__sycl_usm_array_interface__`") {
				t.Errorf("asarray of object(): %v, want dpctl's ValueError for a missing attribute", err)
			}
			if a.ErrOccurred() != 0 {
				t.Errorf("an exception is still pending: %v", g.fetch(""))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantDpctlWorks(t, py)
	})
}

// The class of that bug: whatever Go runs on a thread whose caller holds
// a pending exception and released the GIL (here the wait for dpctl's
// import itself) runs with the exception set aside, and the caller finds
// its own exception pending again afterwards, unchanged.
func TestDpctlLoadsWithAnExceptionPending(t *testing.T) {
	inFirstLoadChild(t, "dpctl-load-pending", func(t *testing.T, py *Python) {
		err := py.Do(func(g *GIL) error {
			a := g.api()
			a.ErrSetString(a.Exc["ValueError"], "the caller's own")
			if _, err := g.dpctlUnderGIL(); err != nil {
				a.ErrClear()
				t.Fatalf("loading dpctl with an exception pending: %v", err)
			}
			var pe *Exception
			if !errors.As(g.fetch(""), &pe) || pe.Type != "ValueError" || pe.Message != "the caller's own" {
				t.Errorf("the caller's exception afterwards: %+v, want its own ValueError", pe)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantDpctlWorks(t, py)
	})
}

// interruptOnce installs a meta-path finder that raises exc (a Python
// expression) the first time module is imported. It counts the attempts
// to import "dpctl" in dpctl_finds, and holds the n-th attempt until
// dpctl_gate reaches n (it starts open), so that concurrent callers can
// all be waiting for that attempt before it ends.
func interruptOnce(t *testing.T, py *Python, module, exc string) {
	t.Helper()
	run(t, py, `
import sys, time
dpctl_finds, dpctl_gate = 0, 1 << 30
class InterruptOnce:
    fired = False
    def find_spec(self, name, path=None, target=None):
        global dpctl_finds
        if name == "dpctl":
            dpctl_finds += 1
            while dpctl_gate < dpctl_finds:
                time.sleep(0.005)  # releases the GIL
        if name == `+quote(module)+` and not InterruptOnce.fired:
            InterruptOnce.fired = True
            raise `+exc+`
        return None
sys.meta_path.insert(0, InterruptOnce())
`)
}

// A KeyboardInterrupt in the middle of dpctl's import (some of its modules
// imported, the package not) reaches the caller as itself, not as "dpctl
// is not available", and the next call imports dpctl.
func TestDpctlImportInterruptedIsRetried(t *testing.T) {
	inFirstLoadChild(t, "dpctl-import-interrupted", func(t *testing.T, py *Python) {
		interruptOnce(t, py, "dpctl._sycl_queue", "KeyboardInterrupt")
		_, err := py.Dpctl()
		var pe *Exception
		if !errors.As(err, &pe) || pe.Type != "KeyboardInterrupt" || errors.Is(err, usm.ErrNotAvailable) {
			t.Fatalf("interrupted import: %v, want the KeyboardInterrupt itself", err)
		}
		wantDpctlWorks(t, py)
	})
}

// A RecursionError during the import is no statement about dpctl either.
func TestDpctlImportRecursionErrorIsRetried(t *testing.T) {
	inFirstLoadChild(t, "dpctl-import-recursion", func(t *testing.T, py *Python) {
		interruptOnce(t, py, "dpctl", "RecursionError('maximum recursion depth exceeded')")
		_, err := py.Dpctl()
		var pe *Exception
		if !errors.As(err, &pe) || pe.Type != "RecursionError" {
			t.Fatalf("import at the recursion limit: %v, want the RecursionError itself", err)
		}
		wantDpctlWorks(t, py)
	})
}

// An import that fails for a reason about dpctl (here an ImportError) is
// "not available", and is retried too.
func TestDpctlImportErrorIsRetried(t *testing.T) {
	inFirstLoadChild(t, "dpctl-import-error", func(t *testing.T, py *Python) {
		interruptOnce(t, py, "dpctl", "ImportError('no SYCL runtime today')")
		_, err := py.Dpctl()
		if !errors.Is(err, usm.ErrNotAvailable) || !strings.Contains(err.Error(), "no SYCL runtime today") {
			t.Fatalf("failed import: %v, want usm.ErrNotAvailable with the ImportError", err)
		}
		wantDpctlWorks(t, py)
	})
}

// Callers that arrive while a load is under way share it: one import
// attempt for all of them. When it fails every one of them sees that
// failure, and the next call makes one new attempt; a success is kept.
func TestDpctlConcurrentFirstCallsLoadOnce(t *testing.T) {
	inFirstLoadChild(t, "dpctl-concurrent-load", func(t *testing.T, py *Python) {
		interruptOnce(t, py, "dpctl", "ImportError('first attempt fails')")
		const callers = 8
		// round starts the callers, and lets import attempt n end once
		// they have all called Dpctl.
		round := func(n int) ([]*dpctl.Backend, []error) {
			run(t, py, "dpctl_gate = "+itoa(n-1))
			var started, done sync.WaitGroup
			ds, errs := make([]*dpctl.Backend, callers), make([]error, callers)
			for i := range callers {
				started.Add(1)
				done.Add(1)
				go func() {
					defer done.Done()
					started.Done()
					ds[i], errs[i] = py.Dpctl()
				}()
			}
			started.Wait()
			time.Sleep(100 * time.Millisecond) // from started.Done to waiting in Dpctl
			run(t, py, "dpctl_gate = "+itoa(n))
			done.Wait()
			return ds, errs
		}
		_, errs := round(1)
		for i, err := range errs {
			if !errors.Is(err, usm.ErrNotAvailable) || !strings.Contains(err.Error(), "first attempt fails") {
				t.Errorf("caller %d of the failing attempt: %v", i, err)
			}
		}
		if n := evalGo(t, py, "dpctl_finds"); n != int64(1) {
			t.Errorf("%v import attempts for %d concurrent callers, want 1", n, callers)
		}
		ds, errs := round(2)
		for i, err := range errs {
			if err != nil || ds[i] != ds[0] {
				t.Errorf("caller %d of the second attempt: %p, %v; want the one Dpctl", i, ds[i], err)
			}
		}
		if n := evalGo(t, py, "dpctl_finds"); n != int64(2) {
			t.Errorf("%v import attempts in all, want 2", n)
		}
		wantDpctlWorks(t, py)
		if d, _ := py.Dpctl(); d != ds[0] || evalGo(t, py, "dpctl_finds") != int64(2) {
			t.Errorf("a success was not kept: %d import attempts", evalGo(t, py, "dpctl_finds"))
		}
	})
}
