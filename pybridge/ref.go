package pybridge

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/usmbridge/usmbridge/internal/refcount"
	"github.com/usmbridge/usmbridge/usm"
)

// pyRef is a strong reference to a Python object that lives outside the
// GIL: it can be stored in Go structures and released from any goroutine.
// It is a usm.Owner (Retain/Release counting on top of the one Python
// reference): the Owner of the arrays AsArray makes, which users hold as
// usm.Owner, so the type itself is not exported.
type pyRef struct {
	py   *Python
	p    uintptr
	refs refcount.Count
}

func (py *Python) newRef(o Object) *pyRef {
	py.api.IncRef(o.p)
	r := &pyRef{py: py, p: o.p}
	r.refs.Init()
	return r
}

// newRef returns a pyRef holding a new reference to o.
func (g *GIL) newRef(o Object) *pyRef { return g.py.newRef(o) }

// Object returns the object; use it only while holding the GIL and the pyRef.
func (r *pyRef) Object() Object { return Object{r.p} }

// Retain adds a reference; false once the Python reference was dropped.
func (r *pyRef) Retain() bool { return r.refs.Retain() }

// Release drops a reference; the last one drops the Python reference. A
// caller that holds the GIL (a deallocator, a function Python called)
// drops it at once. Any other goroutine hands it to the releaser, which
// drops it as soon as the interpreter lets it in, and the next entry into
// the interpreter from Go drops it first: Release never waits for the GIL,
// since the thread that holds it may be waiting for this goroutine (a Go
// function that waits for its workers, each releasing what it kept;
// RATIONALE.md, "Releasing without the GIL"). After interpreter shutdown the
// object is leaked rather than touched.
func (r *pyRef) Release() {
	if !r.refs.Release() {
		return
	}
	a := r.py.api
	if !a.IsInitialized() {
		return
	}
	if a.GILCheck() {
		a.DecRef(r.p)
		return
	}
	releaseLater(r.p)
	r.py.wakeReleaser()
}

// releaseSoon is Release for a goroutine in no hurry (the keeper of a
// launch's arguments, once its kernel is done): the last reference is
// queued for the next entry into the interpreter from Go, which an
// extension module's next call makes as it returns, and the releaser is
// woken only if none has come a moment later (soonDelay). A chain of
// calls then never hands the GIL to the releaser.
func (r *pyRef) releaseSoon() {
	if !r.refs.Release() {
		return
	}
	a := r.py.api
	if !a.IsInitialized() {
		return
	}
	if a.GILCheck() {
		a.DecRef(r.p)
		return
	}
	releaseLater(r.p)
	r.py.wakeReleaserSoon()
}

// ReleaseSoon releases o, an Owner, without waiting for the GIL and
// without asking for it at once: a Python reference that o's last
// release drops goes at the next entry into the interpreter from Go, or
// a moment later (Release wakes the releaser at once). For releases that
// come often, from a goroutine, while Python code runs: each would
// otherwise take the GIL from the running thread. An Owner other than
// the ones pybridge makes is released as usual.
func ReleaseSoon(o usm.Owner) {
	if r, ok := o.(*pyRef); ok {
		r.releaseSoon()
		return
	}
	if o != nil {
		o.Release()
	}
}

// soonDelay is how long a reference ReleaseSoon queued waits for an entry
// into the interpreter before the releaser takes the GIL for it.
const soonDelay = 2 * time.Millisecond

// wakeReleaserSoon wakes the releaser after soonDelay unless the queue has
// been dropped by then; one timer at a time.
func (py *Python) wakeReleaserSoon() {
	if !py.soonArmed.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(soonDelay, func() {
		py.soonArmed.Store(false)
		if nReleased.Load() != 0 {
			py.wakeReleaser()
		}
	})
}

// ReleaseHeld is Release for a caller that holds the GIL (inside Do or
// held, or a deallocator that Python calls): the last reference is dropped
// at once, without Py_IsInitialized and PyGILState_Ensure/Release. The
// interpreter is running, since the caller holds its GIL.
func (r *pyRef) ReleaseHeld(g *GIL) {
	if r.refs.Release() {
		g.api().DecRef(r.p)
	}
}

// ReleaseOwner releases o, the Owner of an array (an import's: ReadArray,
// AsArray, FromDLPack), for a caller that holds the GIL: a Python
// reference pybridge took is dropped at once, without the two C calls
// Owner.Release makes to learn whether it may (Py_IsInitialized,
// PyGILState_Check); any other Owner is released as usual. An extension
// call drops what it imported this way as it returns.
func (g *GIL) ReleaseOwner(o usm.Owner) {
	if r, ok := o.(*pyRef); ok {
		r.ReleaseHeld(g)
		return
	}
	if o != nil {
		o.Release()
	}
}

func (r *pyRef) String() string { return "pybridge.Ref(0x" + strconv.FormatUint(uint64(r.p), 16) + ")" }

// Python references that Go let go of without the GIL (pyRef.Release on
// a goroutine, the garbage collector's cleanups of *Exception values) wait
// here until the next entry into the interpreter, or the releaser, drops
// them (GIL.dropReleased).
var (
	releasedMu sync.Mutex
	released   []uintptr
	nReleased  atomic.Int32 // len(released), read without the lock on every entry

	heldExceptions atomic.Int64 // *Exception references not yet queued (for leak tests)
)

func releaseLater(p uintptr) {
	releasedMu.Lock()
	released = append(released, p)
	nReleased.Store(int32(len(released)))
	releasedMu.Unlock()
}

// dropReleased drops the queued references; the caller holds the GIL.
// Dropping one may run Python code (__del__, weakref callbacks) that
// enters Go again and drains the queue too: each entry takes the queue
// before it drops anything.
func (g *GIL) dropReleased() {
	if nReleased.Load() == 0 {
		return
	}
	releasedMu.Lock()
	ps := released
	released = nil
	nReleased.Store(0)
	releasedMu.Unlock()
	for _, p := range ps {
		g.api().DecRef(p)
	}
}

// wakeReleaser has the releaser goroutine (started on first use) enter the
// interpreter, which drops the queued references, as soon as the GIL is
// free. It never blocks.
func (py *Python) wakeReleaser() {
	py.releaserOnce.Do(func() {
		py.releaserWake = make(chan struct{}, 1)
		go py.releaser()
	})
	select {
	case py.releaserWake <- struct{}{}:
	default: // already woken: it drops everything queued when it runs
	}
}

func (py *Python) releaser() {
	for range py.releaserWake {
		if nReleased.Load() != 0 && py.api.IsInitialized() {
			_ = py.Do(func(*GIL) error { return nil }) // Do drops the queue on entry
		}
	}
}

// DropReleased drops the Python references Go released on threads without
// the GIL (see Release of the Owner Hold returns), for a caller that holds
// the GIL and has no Do or DoHeld of its own to run (an extension module's
// call, as it returns): nothing when none wait, one atomic load.
func (py *Python) DropReleased() {
	if nReleased.Load() != 0 && py.api.GILCheck() {
		py.gil.dropReleased()
	}
}
