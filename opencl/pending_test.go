package opencl

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// A launch's event kept as an array's pending work (usm.Pending) holds a
// reference of its own to the cl_event (clRetainEvent): the launcher
// closes its event at once, a reader waits for the launch, held back by a
// user event, and the last reference goes with the wait. Done says, with
// no wait, that the held launch is not done.
func TestKernelEventAsPendingWork(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		l, err := lib()
		require.NoError(t, err)
		held, err := r.ctx.newQueue(r.dev)
		require.NoError(t, err)
		defer held.Close()
		ue, err := l.CreateUserEvent(clapi.Context(r.ctx.Native()))
		require.NoError(t, err)
		mk, err := l.EnqueueMarker(clapi.Queue(held.Native()), []clapi.Event{ue})
		require.NoError(t, err)
		defer l.ReleaseEvent(mk)
		p, err := usm.BuildProgram(held, kernelSrc)
		require.NoError(t, err)
		fill, err := p.Kernel("fill")
		require.NoError(t, err)
		yp, y := floats(t, r, 32)
		before := Live()["events"]
		ev, err := fill.Launch(held, usm.NDRange(32), nil, usm.Pointer(yp), usm.Scalar(float32(5)))
		require.NoError(t, err)
		done, err := ev.Done()
		require.NoError(t, err)
		assert.False(t, done, "held back: not done")
		a := &usm.Array{}
		require.NoError(t, a.WrittenBy(ev))
		require.NoError(t, ev.Close())
		assert.Equal(t, before+1, Live()["events"], "the Pending's own reference")
		require.NoError(t, l.Flush(clapi.Queue(held.Native())))

		read := make(chan error, 1)
		go func() { read <- a.Wait() }()
		select {
		case err := <-read:
			t.Fatalf("the wait returned before the launch ran (%v)", err)
		case <-time.After(50 * time.Millisecond):
		}
		assert.Zero(t, y[0])
		require.NoError(t, l.SetUserEventStatus(ue, 0))
		require.NoError(t, l.ReleaseEvent(ue))
		require.NoError(t, <-read)
		done, err = ev.Done()
		require.NoError(t, err)
		assert.True(t, done, "a released event is done")
		assert.Equal(t, float32(5), y[31])
		assert.Equal(t, before, Live()["events"], "released with the wait")
	})
}
