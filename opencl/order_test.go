package opencl

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// copyAsync enqueues a copy of n bytes without waiting for it.
func (q *Queue) copyAsync(r rt, dst, src, n uintptr) error {
	if r.mem == svmMemory {
		return q.svmMemcpy(false, dst, src, n)
	}
	return q.memcpy(false, dst, src, n)
}

// TestOrderBeforeOnDevice holds the producer's queue back with a marker
// that waits for a user event, enqueues the producer's result behind it,
// and orders the consumer after the producer. OrderBefore must return
// while the user event is incomplete (a host wait would block forever:
// each case runs in a child with a timeout), and the consumer's next
// copy, enqueued before the event is completed, must see the result. The
// "no ordering" case shows that the consumer's copy otherwise reads the
// memory early.
func TestOrderBeforeOnDevice(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		for _, mode := range []string{"in-order consumer", "out-of-order consumer", "same queue", "no ordering"} {
			t.Run(mode, func(t *testing.T) {
				name := "order/" + r.name + "/" + mode
				if testutil.InChild(name) {
					orderCase(t, r, mode)
					return
				}
				testutil.RunChild(t, name, 60*time.Second).Expect(t, 0, "PASS")
			})
		}
	})
}

func orderCase(t *testing.T, r rt, mode string) {
	l, err := lib()
	require.NoError(t, err)
	p, err := r.ctx.newQueue(r.dev) // in order, and not the backend's: it is held back
	require.NoError(t, err)
	defer p.Close()
	var c *Queue
	switch mode {
	case "same queue":
		c = p
	case "out-of-order consumer":
		raw, err := l.CreateCommandQueueWith(clapi.Context(r.ctx.Native()), r.dev.id, clapi.QueueOutOfOrderExecModeEnable)
		require.NoError(t, err)
		c, err = UnsafeAdoptQueue(uintptr(raw))
		require.NoError(t, err)
		defer c.Close()
		ooo, err := l.QueueOutOfOrder(raw)
		require.NoError(t, err)
		require.True(t, ooo)
	default:
		c, err = r.ctx.newQueue(r.dev)
		require.NoError(t, err)
		defer c.Close()
	}
	const n = 1 << 16
	var bufs [3][]byte
	for i := range bufs {
		a, err := r.b.Alloc(r.local, usm.KindShared, n)
		require.NoError(t, err)
		defer a.Free()
		bufs[i] = a.Bytes()
	}
	x, src, h := bufs[0], bufs[1], bufs[2]
	for i := range src {
		src[i], x[i], h[i] = 7, 0, 0
	}
	ptr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) } // C memory

	uev, err := l.CreateUserEvent(clapi.Context(r.ctx.Native()))
	require.NoError(t, err)
	pid := clapi.Queue(p.Native())
	m, err := l.EnqueueMarker(pid, []clapi.Event{uev})
	require.NoError(t, err)
	require.NoError(t, l.ReleaseEvent(m))
	require.NoError(t, p.copyAsync(r, ptr(x), ptr(src), n)) // the producer's result, held back

	if mode != "no ordering" {
		require.NoError(t, p.OrderBefore(c)) // returns although p is held back
	}
	require.NoError(t, c.copyAsync(r, ptr(h), ptr(x), n)) // the consumer's next command
	if mode == "no ordering" {
		require.NoError(t, c.Wait())
		assert.Equal(t, byte(0), h[0], "the control: an unordered copy reads before the producer wrote")
	} else {
		assert.Equal(t, byte(0), h[0], "the consumer's copy ran before the producer's work")
	}
	require.NoError(t, l.SetUserEventStatus(uev, 0))
	require.NoError(t, l.ReleaseEvent(uev))
	require.NoError(t, c.Wait())
	require.NoError(t, p.Wait())
	if mode != "no ordering" {
		assert.Equal(t, src, h, "the consumer's copy saw the producer's result")
	}
}

// OrderBefore refuses what OpenCL cannot order on the device, and
// usm.Order then waits on the host.
func TestOrderBeforeRefuses(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		err := r.q.OrderBefore(hostQueue{})
		require.ErrorIs(t, err, usm.ErrNotSupported)
		require.NoError(t, usm.Order(r.q, hostQueue{}))
	})
	t.Run("another context", func(t *testing.T) {
		a, b := find(t, runtimes[0]), find(t, runtimes[1])
		require.ErrorIs(t, a.q.OrderBefore(b.q), usm.ErrNotSupported)
		require.NoError(t, usm.Order(a.q, b.q))
	})
}

type hostQueue struct{}

func (hostQueue) Wait() error { return nil }
