package dpctl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/dpctl/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/usm"
)

type hostOnlyQueue struct{ waits int }

func (q *hostOnlyQueue) Wait() error { q.waits++; return nil }

// OrderBefore submits the barrier pair between two queues of one Backend
// and nothing for the same in-order queue, and refuses (for usm.Order to
// wait on the host) an out-of-order consumer, a consumer of another kind
// and a library without the entry points. That the ordering holds on the
// device, with the producer held back, is python/tests/test_ordering.py.
func TestOrderBefore(t *testing.T) {
	_, b := loaded(t)
	require.True(t, b.API().Ordering().Present(), "dpctl 0.22 has the barrier entry points")
	uq, err := b.Queue(0)
	require.NoError(t, err)
	q := uq.(*dpctl.Queue)
	newQueue := func(props int) *dpctl.Queue {
		r := b.API().QueueCreateForDevice(b.DeviceRef(0), props)
		require.NotZero(t, r)
		return b.OwnQueue(r)
	}
	other, ooo := newQueue(dpctlapi.QueueInOrder), newQueue(0)
	for name, c := range map[string]usm.Queue{"another queue": other, "the same queue": q, "a borrowed ref of it": b.UnsafeBorrowQueue(q.Ref())} {
		assert.NoError(t, q.OrderBefore(c), name)
		assert.NoError(t, usm.Order(q, c), name)
	}
	for name, c := range map[string]usm.Queue{"an out-of-order queue": ooo, "not a dpctl queue": &hostOnlyQueue{}} {
		assert.ErrorIs(t, q.OrderBefore(c), usm.ErrNotSupported, name)
		assert.NoError(t, usm.Order(q, c), name+": falls back to a host wait")
	}

	old := b.WithoutOrdering() // a library without the entry points
	oq := old.UnsafeBorrowQueue(q.Ref())
	assert.ErrorIs(t, oq.OrderBefore(old.UnsafeBorrowQueue(other.Ref())), usm.ErrNotSupported)
	assert.NoError(t, usm.Order(oq, old.UnsafeBorrowQueue(other.Ref())), "falls back to a host wait")
	assert.ErrorIs(t, q.OrderBefore(old.UnsafeBorrowQueue(other.Ref())), usm.ErrNotSupported, "a queue of another Backend")
}
