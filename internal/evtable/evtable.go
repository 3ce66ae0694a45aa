// Package evtable keeps the native events a backend hands out as
// usm.Event values: a slot per live event, reused once the event is
// released, with a generation that makes a released (or forged) id find
// nothing. So an Event is two words the caller copies freely, a launch
// allocates nothing once the table has grown to the events in flight, and
// a second Close of an Event (or a Close of a copy) never reaches the
// runtime. A waiter pins its slot (Use, Done), so an event released while
// someone waits on it is handed back to the runtime by the last waiter
// instead of under it. A launch goes through the events it follows with
// Follow, which waits on the host for those of other runtimes and pins
// its own table's until Unpin: one rule for every backend.
package evtable

import (
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/live"
)

// Table holds native events of type T (a cl_event, a DPCTLSyclEventRef,
// a Level Zero event). Its methods are safe for concurrent use.
type Table[T any] struct {
	mu    sync.Mutex
	slots []slot[T]
	free  []uint32
	count *live.Counter
}

type slot[T any] struct {
	h     T
	gen   uint32
	live  bool // given out and not released
	users int  // Use calls not yet Done
	used  bool // the slot holds an event (live, or released with users left)
}

// New returns a table whose live events count, when count is not nil.
func New[T any](count *live.Counter) *Table[T] { return &Table[T]{count: count} }

// Put stores h and returns its id: the slot index in the low 32 bits and
// the slot's generation in the high ones. Never 0.
func (t *Table[T]) Put(h T) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i uint32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		i = uint32(len(t.slots))
		t.slots = append(t.slots, slot[T]{})
	}
	s := &t.slots[i]
	s.gen++
	if s.gen == 0 {
		s.gen = 1
	}
	s.h, s.live, s.used, s.users = h, true, true, 0
	if t.count != nil {
		t.count.Add(1)
	}
	return uint64(s.gen)<<32 | uint64(i)
}

// Use returns the live event id names and pins it until Done: a Take
// meanwhile leaves the native release to Done. ok is false for an id
// that was released or never given out.
func (t *Table[T]) Use(id uint64) (h T, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.find(id)
	if s == nil || !s.live {
		return h, false
	}
	s.users++
	return s.h, true
}

// Done ends a Use. When the event was taken meanwhile and this was its
// last user, it returns the event with release true: the caller hands it
// back to the runtime.
func (t *Table[T]) Done(id uint64) (h T, release bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.find(id)
	if s == nil || s.users == 0 {
		return h, false
	}
	s.users--
	if s.live || s.users > 0 {
		return h, false
	}
	return t.drop(uint32(id)), true
}

// Take releases the event id names, once: it returns the event with
// release true when the caller is to hand it back to the runtime now,
// false when a waiter still uses it (Done then returns it) or when the
// id names no live event (a second Take, a forged id).
func (t *Table[T]) Take(id uint64) (h T, release bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.find(id)
	if s == nil || !s.live {
		return h, false
	}
	s.live = false
	if t.count != nil {
		t.count.Add(-1)
	}
	if s.users > 0 {
		return h, false
	}
	return t.drop(uint32(id)), true
}

// Live returns the number of events given out and not taken.
func (t *Table[T]) Live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for i := range t.slots {
		if t.slots[i].live {
			n++
		}
	}
	return n
}

// drop empties slot i for reuse and returns what it held; t.mu is held.
func (t *Table[T]) drop(i uint32) T {
	s := &t.slots[i]
	h := s.h
	var zero T
	s.h, s.used = zero, false
	t.free = append(t.free, i)
	return h
}

func (t *Table[T]) find(id uint64) *slot[T] {
	i, gen := uint32(id), uint32(id>>32)
	if id == 0 || int(i) >= len(t.slots) {
		return nil
	}
	s := &t.slots[i]
	if !s.used || s.gen != gen {
		return nil
	}
	return s
}

// Event is an event a launch follows, as Follow sees it: usm.Event's
// methods (evtable imports nothing above internal/, so usm.Event is a
// type argument; S is usm.EventSource).
type Event[S comparable] interface {
	Source() (S, uint64)
	Wait() error
}

// Pins are the ids of a table's events that one launch follows, pinned
// (Use) from Follow until Unpin. A launcher keeps its Pins, so a launch
// allocates nothing once they have grown to its longest list.
type Pins []uint64

// Follow goes through the events a launch follows, in order. One of
// another source than self (another runtime's, another Backend's) is
// waited for on the host, there and then. One of self, whose table t is,
// is pinned, its id added to pins, and handed to own with its index: own
// puts it on the launch's wait list, or waits for it itself. A released
// event of t is an ErrValue error, as is a failed wait for another's (op
// names the launch). Whatever Follow returns, the caller ends the pins
// with Unpin once the runtime no longer reads the wait list.
func Follow[T any, S comparable, E Event[S]](t *Table[T], self S, after []E, pins *Pins, op string, own func(i int, h T) error) error {
	for i, e := range after {
		src, id := e.Source()
		if src != self {
			if err := e.Wait(); err != nil {
				return errkind.Wrap(errkind.Value, op, "event "+strconv.Itoa(i)+" of another runtime", err)
			}
			continue
		}
		h, ok := t.Use(id)
		if !ok {
			return errkind.New(errkind.Value, op, "event "+strconv.Itoa(i)+" was released")
		}
		*pins = append(*pins, id)
		if err := own(i, h); err != nil {
			return err
		}
	}
	return nil
}

// Unpin ends a launch's pins (Done): each event released meanwhile, whose
// last user the launch was, goes to release. pins is then empty, for the
// next launch.
func (t *Table[T]) Unpin(pins *Pins, release func(h T)) {
	for _, id := range *pins {
		if h, rel := t.Done(id); rel {
			release(h)
		}
	}
	*pins = (*pins)[:0]
}
