package levelzero

import (
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// orderPairs is how many orderings a producer list may have in flight
// (each holds two events until the consumer has passed it).
const orderPairs = 16

// OrderBefore makes consumer's later commands wait on the device for
// every command appended to q so far: q appends a barrier that signals
// an event, and consumer appends a barrier that waits for it (and
// signals a second event, which tells q when the pair may be reused).
// The host does not wait. Both must be immediate command lists of one
// context (a command queue runs lists the runtime submits; nothing can
// be appended to it); q itself needs nothing, an immediate list runs in
// order. Anything else is usm.ErrNotSupported and usm.Order waits on the
// host, as it does when orderPairs orderings are still in flight.
//
// The barriers append to the lists like any command, so the rule of
// UnsafeBorrowImmediateList holds: safe only while the runtime that owns
// a borrowed list does not append to it at the same time.
func (q *Queue) OrderBefore(consumer usm.Queue) error {
	const op = "levelzero.Queue.OrderBefore"
	c, ok := consumer.(*Queue)
	switch {
	case !ok || c == nil:
		return errkind.New(errkind.NotSupported, op, "the consumer is not a Level Zero queue")
	case q == nil:
		return errValue(op, "nil *levelzero.Queue")
	case q.kind != immediateList || c.kind != immediateList:
		return errkind.New(errkind.NotSupported, op, "only immediate command lists can be ordered on the device (nothing is appended to a command queue)")
	case q.ctx != c.ctx && q.ctx.Native() != c.ctx.Native():
		return errkind.New(errkind.NotSupported, op, "the lists belong to different contexts")
	case q == c || q.Native() == c.Native():
		return nil
	}
	p, err := q.orderPair(op)
	if err != nil {
		return err
	}
	if err := q.appendBarrier(p.ready); err != nil {
		q.order.put(p, false)
		return err
	}
	if err := c.appendBarrier(p.done, p.ready); err != nil {
		// ready will still be signalled by q: the pair cannot be reused
		// until done is, which never comes, so it stays in flight.
		q.order.put(p, true)
		return err
	}
	q.order.put(p, true)
	return nil
}

// orderEvents is a producer list's pool of event pairs for OrderBefore.
type orderEvents struct {
	mu   sync.Mutex
	pool *eventPool
	free []orderPair
	busy []orderPair // in flight: reusable once done is signalled
}

type orderPair struct{ ready, done *event }

// orderPair returns a pair to use, making the pool on first use and
// reclaiming pairs whose consumer has passed its barrier.
func (q *Queue) orderPair(op string) (orderPair, error) {
	q.orderOnce.Do(func() { q.order = &orderEvents{} })
	o := q.order
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pool == nil {
		pool, err := newEventPool(q.ctx, 2*orderPairs, true) // every device: the consumer may be on another
		if err != nil {
			return orderPair{}, err
		}
		for i := range uint32(orderPairs) {
			r, err1 := pool.newEvent(2 * i)
			d, err2 := pool.newEvent(2*i + 1)
			if err1 != nil || err2 != nil {
				_ = r.close()
				_ = d.close()
				o.pool = pool
				return orderPair{}, firstErr(err1, err2, o.closeLocked())
			}
			o.free = append(o.free, orderPair{r, d})
		}
		o.pool = pool
	}
	keep := o.busy[:0]
	for _, p := range o.busy {
		if p.done.hostSynchronize(zeapi.Poll) == nil && p.ready.hostReset() == nil && p.done.hostReset() == nil {
			o.free = append(o.free, p)
		} else {
			keep = append(keep, p)
		}
	}
	o.busy = keep
	if len(o.free) == 0 {
		return orderPair{}, errkind.New(errkind.NotSupported, op, itoa(orderPairs)+" orderings of this list are still in flight")
	}
	p := o.free[len(o.free)-1]
	o.free = o.free[:len(o.free)-1]
	return p, nil
}

func (o *orderEvents) put(p orderPair, inFlight bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if inFlight {
		o.busy = append(o.busy, p)
	} else {
		o.free = append(o.free, p)
	}
}

// close destroys the pairs and the pool. A pair still in flight (its
// consumer has not passed the barrier) may yet be touched by the device,
// so it and the pool are left alive rather than freed under it.
func (o *orderEvents) close() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closeLocked()
}

func (o *orderEvents) closeLocked() error {
	var first error
	for _, p := range o.busy {
		if p.done.hostSynchronize(zeapi.Poll) == nil {
			o.free = append(o.free, p)
		} else {
			first = firstErr(first, errValue("levelzero.Queue.Close", "an ordering of the list is still in flight; its events are left alive"))
		}
	}
	o.busy = nil
	for _, p := range o.free {
		first = firstErr(first, p.ready.close(), p.done.close())
	}
	o.free = nil
	if o.pool != nil && o.pool.events.Load() == 0 {
		first = firstErr(first, o.pool.close())
		o.pool = nil
	}
	return first
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
