package usm_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// recQueue records how it was synchronised: host waits, and the consumers
// it was asked to order before it.
type recQueue struct {
	waits   int
	ordered []usm.Queue
	refuse  error // OrderBefore's error
}

func (q *recQueue) Wait() error { q.waits++; return nil }

// plainQueue can only be waited on.
type plainQueue struct{ waits int }

func (q *plainQueue) Wait() error { q.waits++; return nil }

// orderQueue is a recQueue that is also an Orderer.
type orderQueue struct{ recQueue }

func (q *orderQueue) OrderBefore(c usm.Queue) error {
	if q.refuse != nil {
		return q.refuse
	}
	q.ordered = append(q.ordered, c)
	return nil
}

// Order orders on the device when it can and waits on the host only where
// nothing else is possible.
func TestOrder(t *testing.T) {
	broken := errors.New("barrier failed")
	for _, tc := range []struct {
		name       string
		refuse     error
		consumer   bool
		wantWaits  int
		wantOrders int
		wantErr    error
	}{
		{"device", nil, true, 0, 1, nil},
		{"refused: host wait", errkind.New(errkind.NotSupported, "t", "other context"), true, 1, 0, nil},
		{"failed: no fallback", broken, true, 0, 0, broken},
		{"no consumer: host wait", nil, false, 1, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &orderQueue{recQueue{refuse: tc.refuse}}
			var c usm.Queue
			if tc.consumer {
				c = &plainQueue{}
			}
			err := usm.Order(p, c)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.wantWaits, p.waits)
			assert.Len(t, p.ordered, tc.wantOrders)
		})
	}
	t.Run("not an Orderer: host wait", func(t *testing.T) {
		p, c := &plainQueue{}, &plainQueue{}
		assert.NoError(t, usm.Order(p, c))
		assert.Equal(t, 1, p.waits)
		assert.Equal(t, 0, c.waits)
	})
	t.Run("no producer queue: nothing pending", func(t *testing.T) {
		assert.NoError(t, usm.Order(nil, &plainQueue{}))
	})
}
