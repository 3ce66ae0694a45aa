package pybridge

import (
	"testing"
	"time"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// While one goroutine imports dpctl (Python.Dpctl), another that holds the
// GIL asks for it too (AsArray with no registry). The second must wait
// without the GIL, or the import, which needs the GIL to go on, never ends.
// A hang is the failure, so the case runs in a child process; an import
// hook holds the import for a while, so the waiter arrives in time.
func TestDpctlImportWhileAnotherWaits(t *testing.T) {
	if testutil.InChild("dpctl-import-wait") {
		py := embedded(t)
		run(t, py, `
import sys, time
STARTED = False
class SlowDpctl:
    def find_spec(self, name, path=None, target=None):
        global STARTED
        if name == "dpctl" and not STARTED:
            STARTED = True
            time.sleep(0.5)  # releases the GIL: the waiter takes it now
        return None
sys.meta_path.insert(0, SlowDpctl())
`)
		loaded := make(chan error, 1)
		go func() { _, err := py.Dpctl(); loaded <- err }()
		for !evalGo(t, py, "STARTED").(bool) {
			time.Sleep(time.Millisecond)
		}
		err := py.Do(func(g *GIL) error {
			// An SUAI that reads (and then fails to bind): AsArray reads
			// it before it asks for dpctl's registry.
			o := eval(t, g, "type('V', (), {'__sycl_usm_array_interface__': {}})()")
			defer g.DecRef(o)
			_, err := g.AsArray(o, nil) // needs dpctl's registry
			g.ReleaseError(err)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-loaded; err != nil {
			t.Fatal(err)
		}
		t.Log("both callers got dpctl")
		return
	}
	testutil.RunChild(t, "dpctl-import-wait", 30*time.Second).Expect(t, 0, "both callers got dpctl")
}

// An object whose __sycl_usm_array_interface__ raises gets its own
// exception from AsArray even where dpctl cannot be imported (a
// numpy-only install): the SUAI is read before dpctl is asked for. In a
// child process, whose Python has not loaded dpctl and cannot import it.
func TestAsArrayRaisesTheObjectsExceptionBeforeDpctl(t *testing.T) {
	if testutil.InChild("asarray-no-dpctl") {
		py := embedded(t)
		run(t, py, `
import sys
sys.modules["dpctl"] = None  # import dpctl raises ImportError
class Custom(Exception): pass
raised = Custom("no interface")
class V:
    @property
    def __sycl_usm_array_interface__(self): raise raised
`)
		if err := py.Do(func(g *GIL) error {
			o := eval(t, g, "V()")
			defer g.DecRef(o)
			_, err := g.AsArray(o, nil)
			pe, same := errkind.Origin[*Exception](err)
			if pe == nil || !same {
				t.Fatalf("AsArray: %v, want the property's exception", err)
			}
			eo := pe.object(g)
			defer g.DecRef(eo)
			if r := eval(t, g, "raised"); r.p != eo.p {
				g.DecRef(r)
				t.Fatalf("AsArray raised %v, not the property's exception object", err)
			} else {
				g.DecRef(r)
			}
			g.ReleaseError(err)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		t.Log("the property's exception came back")
		return
	}
	testutil.RunChild(t, "asarray-no-dpctl", 30*time.Second).Expect(t, 0, "the property's exception came back")
}
