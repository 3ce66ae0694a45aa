package usm

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// Pending is the work that writes an array and that nobody has waited
// for yet: the events of kernels launched on the array's queue by code
// that returned without waiting for them (a Python extension's function
// defined with pyext.NoWait, a Go program that hands an NDArray's kernel
// to its readers with WrittenBy). An Array points to one (Array.Pending);
// its copies, the views of an NDArray and the arrays pyext's Keep gives
// share it, so that a wait through any of them is a wait for all.
// Array.Wait, and with it every host reader of this package (View, At,
// Values, CopyToSlice, CopyFromSlice, Bytes, SUAI, the NDArray's
// accessors and Close) and dlpack's exports without a stream, waits for
// it before the array's queue (RATIONALE.md, "Launches that return before
// their kernel ends").
//
// Its events are of work on the array's own queue (Array.Queue), so work
// ordered after that queue (Order, a DLPack consumer's stream) follows
// them too. Pending takes references of its own to them: whoever hands
// one over still closes it. Events nobody waited for are released once
// nothing refers to the Pending.
// The zero Pending is empty; its methods are safe for concurrent use.
type Pending struct {
	evs atomic.Pointer[pendingEvents] // made by the first Add, with the cleanup that releases what is left
}

// pendingEvents are a Pending's events, apart from it so that a cleanup
// can release them once the Pending itself is unreachable.
type pendingEvents struct {
	mu      sync.Mutex
	list    []Event
	waiting bool       // a waiter has taken list's first event, and waits for it
	wait    sync.Mutex // one waiter at a time: the others then find the list empty
}

// eventCopier is implemented by event sources whose runtime counts
// references to its events (dpctl's DPCTLEvent_Copy, OpenCL's
// clRetainEvent): CopyEvent returns a new id for the same native event,
// released on its own.
type eventCopier interface {
	CopyEvent(id uint64) (uint64, error)
}

// Add records ev, an event of work on the array's queue that writes the
// array, with a reference of its own: the caller still closes ev. An
// event whose source cannot copy its events (Level Zero's, whose pool
// reuses them; a copy that is ErrNotSupported) is waited for here
// instead, and the zero Event, which is complete, adds nothing.
func (p *Pending) Add(ev Event) error {
	src, id := ev.Source()
	if src == nil {
		return nil
	}
	c, ok := src.(eventCopier)
	if !ok {
		return ev.Wait()
	}
	cid, err := c.CopyEvent(id)
	if errors.Is(err, ErrNotSupported) { // a runtime without the copy (an older dpctl)
		return ev.Wait()
	}
	if err != nil {
		return err
	}
	e := p.events()
	e.mu.Lock()
	e.list = append(e.list, NewEvent(src, cid))
	e.mu.Unlock()
	return nil
}

// events returns the Pending's events, made on first use.
func (p *Pending) events() *pendingEvents {
	if e := p.evs.Load(); e != nil {
		return e
	}
	e := &pendingEvents{}
	if !p.evs.CompareAndSwap(nil, e) {
		return p.evs.Load()
	}
	runtime.AddCleanup(p, func(e *pendingEvents) { _ = e.close() }, e)
	return e
}

// Empty reports whether no work is recorded: no event, and none that a
// Wait under way still waits for (a nil Pending is empty).
func (p *Pending) Empty() bool {
	e := p.loaded()
	if e == nil {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.list) == 0 && !e.waiting
}

// Events returns the recorded events, which the Pending still owns:
// valid until its Wait or Close.
func (p *Pending) Events() []Event {
	e := p.loaded()
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.list...)
}

// Wait returns once the recorded work has completed, and releases its
// events: later calls return at once, until the next Add. Two callers
// at once wait one after the other; the second finds nothing left. A nil
// Pending has nothing to wait for.
func (p *Pending) Wait() error {
	e := p.loaded()
	if e == nil {
		return nil
	}
	e.wait.Lock()
	defer e.wait.Unlock()
	var first error
	for {
		e.mu.Lock()
		if len(e.list) == 0 {
			e.mu.Unlock()
			return first
		}
		ev := e.list[0] // the waiter's from here: a Close meanwhile leaves it be
		e.list[0] = Event{}
		e.list = e.list[1:]
		e.waiting = true
		e.mu.Unlock()
		err := ev.Wait()
		if cerr := ev.Close(); err == nil {
			err = cerr
		}
		e.mu.Lock()
		e.waiting = false
		e.mu.Unlock()
		if first == nil {
			first = err
		}
	}
}

// loaded is p's events, nil for a nil Pending or one never added to.
func (p *Pending) loaded() *pendingEvents {
	if p == nil {
		return nil
	}
	return p.evs.Load()
}

func (e *pendingEvents) close() error {
	e.mu.Lock()
	list := e.list
	e.list = nil
	e.mu.Unlock()
	var first error
	for _, ev := range list {
		if err := ev.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// WrittenBy records ev, an event of work on the array's queue that writes
// it (a kernel launched there), in the array's Pending, which it makes if
// the array has none: every reader of the array and of its copies made
// from now on waits for it first. The caller still closes ev.
func (a *Array) WrittenBy(ev Event) error {
	if src, _ := ev.Source(); src == nil {
		return nil
	}
	if a.Pending == nil {
		a.Pending = new(Pending)
	}
	return a.Pending.Add(ev)
}
