package pyext

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// The work a call leaves on its arrays (RATIONALE.md, "Launches that
// return before their kernel ends"): the pending events a Go function
// recorded on its arguments (AnyArray.WrittenBy) and on a new Array
// result (usm.Array.WrittenBy). A call waits for them as it returns,
// unless its function is NoWait; then it records them where the arrays'
// readers look (dpctl's SequentialOrderManager of their queue; the
// Pending that the module's Arrays and kept views wait for) and holds
// the arguments until the work is done (holdUntilDone).

// pendingOn is an array's pending work and the queue it was submitted to.
type pendingOn struct {
	p *usm.Pending
	q usm.Queue
}

// settle ends a call's work on its arrays, before the call's Arrays go
// stale (end), with the GIL: the pending work of the arguments and of a
// new Array result is waited for (with the GIL released: the work may
// follow dpnp's host tasks, which take the GIL), or, for a NoWait
// function that succeeded, handed on. It returns the call's error, or
// the first of the waits'.
func (c *frame) settle(r *result, err error) error {
	var work []pendingOn
	c.mu.Lock()
	for i := range c.args {
		if a := &c.args[i]; !a.none && !a.arr.Pending.Empty() {
			work = append(work, pendingOn{a.arr.Pending, a.arr.Queue})
		}
	}
	c.mu.Unlock()
	work = resultWork(r, work)
	if len(work) == 0 {
		return err
	}
	failed := err != nil
	if !failed && c.fn.noWait {
		if err = c.handOff(work); err == nil {
			return nil
		}
	}
	ts := c.c.saveThread()
	for _, w := range work {
		if werr := w.p.Wait(); err == nil {
			err = werr
		}
	}
	c.c.restoreThread(ts)
	if err != nil && !failed { // C makes no result of a call that fails
		c.discard(r)
	}
	return err
}

// resultWork adds the pending work of the new Arrays among a call's
// results (its result, or a tuple's) to work.
func resultWork(r *result, work []pendingOn) []pendingOn {
	switch r.kind {
	case rArray:
		if st := handles.get(r.v.handle); r.v.handle != 0 && st != nil && st.arr != nil && !st.arr.Pending.Empty() {
			work = append(work, pendingOn{st.arr.Pending, st.arr.Queue})
		}
	case rTuple:
		rs := unsafe.Slice((*result)(cmem.Ptr(r.obj)), r.n)
		for i := range rs {
			work = resultWork(&rs[i], work)
		}
	}
	return work
}

// handOff records the work among its queues' submitted events in dpctl's
// SequentialOrderManager (a queue that is not dpctl's has no such
// bookkeeping: the module's own readers wait for the Pending), and holds
// every array argument of the call until the work is done. An error
// (dpctl.utils that does not import) leaves the work to settle's wait.
func (c *frame) handOff(work []pendingOn) error {
	err := c.py.DoHeld(func(g *pybridge.GIL) error {
		for _, w := range work {
			for _, ev := range w.p.Events() {
				if _, err := g.Submitted(w.q, ev); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var owners []usm.Owner
	c.mu.Lock()
	for i := range c.args {
		a := &c.args[i]
		if !a.decoded || a.none {
			continue
		}
		if o, err := c.holdMemory(a); err == nil {
			owners = append(owners, o)
		}
	}
	c.mu.Unlock()
	ps := make([]*usm.Pending, len(work))
	for i, w := range work {
		ps[i] = w.p
	}
	holdUntilDone(ps, owners)
	return nil
}

// holds are what calls that returned before their work was done hold.
// One goroutine, started on first use, looks at them from time to time
// (pollMin after a release, backing off to pollMax while nothing
// completes) and releases those whose work is done. It asks each event
// whether it is done rather than wait for it: a thread waiting for an
// event of Intel's OpenCL CPU runtime spins on a core, which the kernel
// it waits for would otherwise run on (RATIONALE.md, "Launches that
// return before their kernel ends").
var holds struct {
	mu   sync.Mutex
	q    []launchHold // not yet released
	wake chan struct{}
	once sync.Once
	live atomic.Int64
}

const (
	pollMin = 50 * time.Microsecond
	pollMax = time.Millisecond
)

// launchHold is the work of one call and what it holds until then.
type launchHold struct {
	work   []*usm.Pending
	owners []usm.Owner
}

// holdUntilDone releases owners once the work of ps is done.
func holdUntilDone(ps []*usm.Pending, owners []usm.Owner) {
	holds.once.Do(func() {
		holds.wake = make(chan struct{}, 1)
		go reap()
	})
	holds.live.Add(1)
	holds.mu.Lock()
	holds.q = append(holds.q, launchHold{ps, owners})
	holds.mu.Unlock()
	select {
	case holds.wake <- struct{}{}:
	default: // awake already: it takes the new hold when it looks next
	}
}

func reap() {
	for range holds.wake {
		delay := pollMin
		for {
			holds.mu.Lock()
			q := holds.q
			holds.q = nil
			holds.mu.Unlock()
			if len(q) == 0 {
				break
			}
			var left []launchHold
			released := false
			for _, h := range q {
				if h.done() {
					h.release()
					released = true
				} else {
					left = append(left, h)
				}
			}
			holds.mu.Lock()
			holds.q = append(left, holds.q...)
			holds.mu.Unlock()
			if len(left) == 0 {
				continue // none left but those added meanwhile
			}
			if released {
				delay = pollMin
			} else {
				delay = min(2*delay, pollMax)
			}
			time.Sleep(delay)
		}
	}
}

// done reports whether the hold's work has completed. An event whose
// source cannot say without a wait is waited for here (no runtime that
// copies its events, which a Pending holds, is such a source).
func (h launchHold) done() bool {
	for _, p := range h.work {
		if p.Empty() {
			continue
		}
		evs := p.Events()
		if len(evs) == 0 {
			return false // a reader is waiting for the last one
		}
		for _, ev := range evs {
			done, err := ev.Done()
			if err != nil {
				_ = p.Wait()
				break
			}
			if !done {
				return false
			}
		}
	}
	return true
}

// release lets the hold's events and owners go, its work done. The
// references go soon, not now: the next call drops them as it returns,
// rather than each release taking the GIL from the thread that makes the
// calls.
func (h launchHold) release() {
	for _, p := range h.work {
		// Done already: Wait only releases the events. A failed wait is
		// the readers' to meet (each waits for the Pending itself).
		_ = p.Wait()
	}
	for _, o := range h.owners {
		if k, ok := o.(*keptArg); ok {
			k.releaseSoon()
		} else {
			pybridge.ReleaseSoon(o)
		}
	}
	holds.live.Add(-1)
}
