package pybridge

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/usm"
)

type hostOnlyQueue struct{ waits int }

func (q *hostOnlyQueue) Wait() error { q.waits++; return nil }

// OrderBefore submits the barrier pair between two queues of one dpctl
// and nothing for the same in-order queue, and refuses (for usm.Order to
// wait on the host) an out-of-order consumer, a consumer of another kind
// and a library without the entry points. That the ordering holds on the device, with
// the producer held back, is python/tests/test_ordering.py.
func TestDpctlOrderBefore(t *testing.T) {
	_, d := withDpctl(t)
	require.True(t, d.order.Present(), "dpctl 0.22 has the barrier entry points")
	q, err := d.queue(0)
	require.NoError(t, err)
	newQueue := func(props int) *dpctlQueue {
		r := d.api.QueueCreateForDevice(d.devs[0].ref, props)
		require.NotZero(t, r)
		return d.ownQueue(r)
	}
	other, ooo := newQueue(dpctlapi.QueueInOrder), newQueue(0)
	for name, c := range map[string]usm.Queue{"another queue": other, "the same queue": q, "a borrowed ref of it": d.borrowQueue(q.ref)} {
		assert.NoError(t, q.OrderBefore(c), name)
		assert.NoError(t, usm.Order(q, c), name)
	}
	for name, c := range map[string]usm.Queue{"an out-of-order queue": ooo, "not a dpctl queue": &hostOnlyQueue{}} {
		assert.ErrorIs(t, q.OrderBefore(c), usm.ErrNotSupported, name)
		assert.NoError(t, usm.Order(q, c), name+": falls back to a host wait")
	}

	old := &Dpctl{api: d.api} // a library without the entry points: Ordering is zero
	oq := &dpctlQueue{d: old, ref: q.ref}
	assert.ErrorIs(t, oq.OrderBefore(old.borrowQueue(other.ref)), usm.ErrNotSupported)
	assert.NoError(t, usm.Order(oq, old.borrowQueue(other.ref)), "falls back to a host wait")
}
