package pybridge

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// A Go launch recorded with Submitted is among the events dpnp's next
// operation on the queue depends on: the launch is held back (an OpenCL
// user event before it on an in-order queue, python/tests/pending.py),
// so the manager has exactly one unfinished event once it is recorded,
// and none before. The manager keeps a copy: the launcher's Close does
// not take it away.
func TestSubmittedJoinsDpnpOrder(t *testing.T) {
	py, _ := withDpctl(t)
	tests, err := filepath.Abs("../python/tests")
	require.NoError(t, err)
	run(t, py, "import dpnp, dpctl.utils, importlib.util\n"+
		"spec = importlib.util.spec_from_file_location('pending', "+pyQuote(filepath.Join(tests, "pending.py"))+")\n"+
		"pending = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(pending)\n"+
		"sq = dpctl.SyclQueue('opencl:cpu', property='in_order')\n"+
		"sy = dpnp.zeros(4096, dtype='f4', usm_type='shared', sycl_queue=sq)\nsq.wait()\n"+
		"def unfinished(q):\n"+
		"    done = dpctl.event_status_type.complete\n"+
		"    return sum(e.execution_status != done for e in dpctl.utils.SequentialOrderManager[q].submitted_events)\n")
	y, err := asArray(t, py, "sy")
	require.NoError(t, err)
	defer y.Owner.Release()
	_, k := testutil.BuildKernel(t, y.Queue, usm.ProgramSource{OpenCLC: testutil.KernelSource()}, "fill")

	run(t, py, "spend = pending.Pending(sq)")
	defer run(t, py, "spend.complete()")
	ev, err := k.Launch(y.Queue, usm.NDRange(4096), nil, usm.Pointer(y.ElementPointer()), usm.Scalar(float32(5)))
	require.NoError(t, err)
	assert.EqualValues(t, 0, evalGo(t, py, "unfinished(sq)"))
	require.NoError(t, py.Do(func(g *GIL) error {
		ok, err := g.Submitted(y.Queue, ev)
		assert.True(t, ok)
		return err
	}))
	require.NoError(t, ev.Close())
	assert.EqualValues(t, 1, evalGo(t, py, "unfinished(sq)"), "the launch is among the queue's submitted events")
	run(t, py, "spend.complete()\nsz = sy * 2\ndpctl.utils.SequentialOrderManager[sq].wait()")
	assert.EqualValues(t, 1, evalGo(t, py, "int((dpnp.asnumpy(sz) == 10).all())"))

	// Nothing is recorded for a released event, the zero Event, or a queue
	// that is not dpctl's.
	require.NoError(t, py.Do(func(g *GIL) error {
		for _, c := range []struct {
			q  usm.Queue
			ev usm.Event
		}{{y.Queue, ev}, {y.Queue, usm.Event{}}, {nil, ev}} {
			ok, err := g.Submitted(c.q, c.ev)
			assert.False(t, ok)
			assert.NoError(t, err)
		}
		return nil
	}))
}

// pyQuote quotes s as a Python string literal.
func pyQuote(s string) string {
	b := []byte{'\''}
	for _, c := range []byte(s) {
		if c == '\'' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return string(append(b, '\''))
}

// ReleaseSoon from a goroutine queues the reference without taking the
// GIL; the releaser drops it a moment later when nothing enters the
// interpreter meanwhile.
func TestReleaseSoon(t *testing.T) {
	py := embedded(t)
	var owner usm.Owner
	var obj Object
	var before int
	require.NoError(t, py.Do(func(g *GIL) error {
		obj = eval(t, g, "object()")
		before = g.api().RefCount(obj.p)
		owner = g.Hold(obj)
		return nil
	}))
	done := make(chan struct{})
	go func() { ReleaseSoon(owner); close(done) }()
	<-done
	assert.NotZero(t, nReleased.Load(), "queued, not dropped: the goroutine has no GIL")
	for i := 0; i < 100 && nReleased.Load() != 0; i++ {
		time.Sleep(time.Millisecond)
	}
	assert.Zero(t, nReleased.Load(), "the releaser dropped it")
	require.NoError(t, py.Do(func(g *GIL) error {
		assert.Equal(t, before, g.api().RefCount(obj.p))
		g.DecRef(obj)
		return nil
	}))
}
