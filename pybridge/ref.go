package pybridge

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/refcount"
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

// Release drops a reference; the last one drops the Python reference,
// taking the GIL on the calling thread: a pyRef keeps memory alive (a
// producer's array), which must go when the last user lets go, not at some
// later entry into the interpreter. After interpreter shutdown the object
// is leaked rather than touched.
func (r *pyRef) Release() {
	if !r.refs.Release() {
		return
	}
	a := r.py.api
	if !a.IsInitialized() {
		return
	}
	if a.GILCheck() { // a caller that holds the GIL (a deallocator): no Ensure and Release
		a.DecRef(r.p)
		return
	}
	_ = r.py.Do(func(g *GIL) error { g.api().DecRef(r.p); return nil })
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

func (r *pyRef) String() string { return "pybridge.Ref(0x" + strconv.FormatUint(uint64(r.p), 16) + ")" }

// Python references that Go let go of where it may not take the GIL (the
// garbage collector's cleanups of *Exception values) wait here until the
// next entry into the interpreter drops them (GIL.dropReleased).
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
