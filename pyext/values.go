package pyext

import (
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// values is the table of the Go values that objects of the module's
// classes hold: C keeps a handle (index+1) in each object, as an Array
// keeps its Go state's (state.go). The table is the one owner of each
// value's Python side (RATIONALE.md, "Go types as Python classes: one
// owner per value"):
//
//   - A value is in the table once, however often Go returns it, so that
//     its one object is returned again (byValue).
//   - A value leaves the table when its object goes (dropValue), and Close
//     runs then, once. A value of a type with Close is remembered as closed
//     for as long as Go can still reach it (closed, by weak pointer): Go
//     returning it afterwards is refused (adopt reports valueClosed), where
//     a second object over it would have been a closed value passed off as
//     alive, and closed a second time when that object went.
//   - A value of a zero-size type has no identity: Go gives every
//     zero-size allocation one address, so two constructions would be one
//     value. Each of its objects is its own (never in byValue or closed),
//     and each is closed once when it goes.
//
// A value of a type without Close that Go returns after its object went
// is wrapped in a new object: nothing happened to it.
type valueTable struct {
	mu      sync.Mutex
	tab     []slot
	free    []int
	byValue map[any]int64
	closed  map[valueKey]closedValue
	sweepAt int // the size of closed at which prune runs next
	live    atomic.Int64
}

// slot is a value of the table and its class.
type slot struct {
	v any // a *T; nil: the slot is free
	c *class
}

// valueKey is a value of a class by its address: for the closed records,
// which must not hold the value.
type valueKey struct {
	c    *class
	addr uintptr
}

// closedValue records that the value at a valueKey was closed: w reaches
// the value while it lives, and is nil once Go has freed it (the address
// may then be another value's). foreign is a value outside Go's memory
// (a *T into C memory), which Go never frees and no weak pointer reaches:
// its record stays.
type closedValue struct {
	w       weak.Pointer[byte]
	foreign bool
}

// alive reports whether the closed value is still the one at its address.
func (cv closedValue) alive() bool { return cv.foreign || cv.w.Value() != nil }

var values = valueTable{byValue: map[any]int64{}, closed: map[valueKey]closedValue{}, sweepAt: minSweep}

// adoption is what adopt found: a new handle, the handle of a value whose
// object is alive, or a closed value (no handle).
type adoption int

const (
	valueNew adoption = iota
	valueAlive
	valueClosed
)

// adopt returns the handle of v, a value of class c: the one it has (its
// object is alive), or a new one; valueClosed, and no handle, for a value
// whose object went and closed it.
func (t *valueTable) adopt(v any, c *class) (int64, adoption) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !c.zeroSize {
		if h, ok := t.byValue[v]; ok {
			return h, valueAlive
		}
		if c.closer {
			k := valueKey{c, uintptr(reflect.ValueOf(v).UnsafePointer())}
			if cv, ok := t.closed[k]; ok {
				if cv.alive() {
					return 0, valueClosed
				}
				delete(t.closed, k) // that value is gone; v is another at its address
			}
		}
	}
	t.live.Add(1)
	var h int64
	if n := len(t.free); n > 0 {
		i := t.free[n-1]
		t.free = t.free[:n-1]
		t.tab[i] = slot{v, c}
		h = int64(i + 1)
	} else {
		t.tab = append(t.tab, slot{v, c})
		h = int64(len(t.tab))
	}
	if !c.zeroSize {
		t.byValue[v] = h
	}
	return h, valueNew
}

func (t *valueTable) get(h int64) any {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h > 0 && h <= int64(len(t.tab)) {
		return t.tab[h-1].v
	}
	return nil
}

// remove takes value h out of the table, for its object went; a value of
// a type with Close is recorded as closed, before Close runs, so that Go
// cannot hand it back meanwhile.
func (t *valueTable) remove(h int64) slot {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h <= 0 || h > int64(len(t.tab)) || t.tab[h-1].v == nil {
		return slot{}
	}
	s := t.tab[h-1]
	t.tab[h-1] = slot{}
	t.free = append(t.free, int(h-1))
	t.live.Add(-1)
	if !s.c.zeroSize {
		delete(t.byValue, s.v)
		if s.c.closer {
			t.recordClosed(s)
		}
	}
	return s
}

// recordClosed remembers that s's value was closed, until Go frees it: a
// weak pointer tells the value from a later one at its address. Records
// of freed values are swept when the map has doubled since the last sweep
// (prune), a constant cost per record, rather than by a cleanup per value
// that a goroutine of the runtime would run against the table's lock. The
// caller holds t.mu.
func (t *valueTable) recordClosed(s slot) {
	p := (*byte)(reflect.ValueOf(s.v).UnsafePointer())
	k := valueKey{s.c, uintptr(unsafe.Pointer(p))}
	cv := closedValue{foreign: !goMemory(p)}
	if !cv.foreign {
		cv.w = weak.Make(p)
	}
	t.closed[k] = cv
	if len(t.closed) >= t.sweepAt {
		t.prune()
	}
}

// prune drops the records of closed values Go has freed; the next sweep
// is due when the map has doubled. The caller holds t.mu.
func (t *valueTable) prune() {
	for k, cv := range t.closed {
		if !cv.alive() {
			delete(t.closed, k)
		}
	}
	t.sweepAt = max(2*len(t.closed), minSweep)
}

const minSweep = 1024

// goMemory reports whether p is Go's memory (its heap, or a variable of
// the program), to which a weak pointer may point; weak.Make takes the
// process down for any other pointer (a *T into C memory). AddCleanup
// tells them apart without a fatal error, and Stop takes the cleanup
// back at once.
func goMemory(p *byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	runtime.AddCleanup(p, func(struct{}) {}, struct{}{}).Stop()
	return true
}

// closedCount is the number of closed records, for tests.
func (t *valueTable) closedCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.closed)
}

// dropValue ends the Go side of an object: its value leaves the table and
// is closed if it is an io.Closer. A panic in Close is the user's, named
// by the class's method (Plan.Close), as a method's panic is.
func dropValue(h int64) (err error) {
	s := values.remove(h)
	c, ok := s.v.(interface{ Close() error })
	if !ok {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = userPanic(s.c.name+".Close", p)
		}
	}()
	return c.Close()
}
