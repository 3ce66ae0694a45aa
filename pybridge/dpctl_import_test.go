package pybridge

import (
	"testing"
	"time"

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
			o := eval(t, g, "object()")
			defer g.DecRef(o)
			_, err := g.AsArray(o, nil) // needs dpctl's registry
			g.releaseError(err)
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
