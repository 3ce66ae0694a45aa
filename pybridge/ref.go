package pybridge

import (
	"github.com/usmbridge/usmbridge/internal/refcount"
	"strconv"
)

// Ref is a strong reference to a Python object that lives outside the GIL:
// it can be stored in Go structures and released from any goroutine. It is
// a usm.Owner (Retain/Release counting on top of the one Python reference).
type Ref struct {
	py   *Python
	p    uintptr
	refs refcount.Count
}

func (py *Python) newRef(o Object) *Ref {
	py.api.IncRef(o.p)
	r := &Ref{py: py, p: o.p}
	r.refs.Init()
	return r
}

// NewRef returns a Ref holding a new reference to o.
func (g *GIL) NewRef(o Object) *Ref { return g.py.newRef(o) }

// Object returns the object; use it only while holding the GIL and the Ref.
func (r *Ref) Object() Object { return Object{r.p} }

// Retain adds a reference; false once the Python reference was dropped.
func (r *Ref) Retain() bool { return r.refs.Retain() }

// Release drops a reference; the last one drops the Python reference,
// taking the GIL on the calling thread. After interpreter shutdown the
// object is leaked rather than touched.
func (r *Ref) Release() {
	if !r.refs.Release() {
		return
	}
	if !r.py.api.IsInitialized() {
		return
	}
	_ = r.py.Do(func(g *GIL) error { g.api().DecRef(r.p); return nil })
}

// ReleaseHeld is Release for a caller that holds the GIL (inside Do or
// Held, or a deallocator that Python calls): the last reference is dropped
// at once, without Py_IsInitialized and PyGILState_Ensure/Release. The
// interpreter is running, since the caller holds its GIL.
func (r *Ref) ReleaseHeld(g *GIL) {
	if r.refs.Release() {
		g.api().DecRef(r.p)
	}
}

func (r *Ref) String() string { return "pybridge.Ref(0x" + strconv.FormatUint(uint64(r.p), 16) + ")" }
