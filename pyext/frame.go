package pyext

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// cHalf is what a call needs of the module's C half (the cgo files give
// it; a build without cgo has no calls).
type cHalf interface {
	// keep makes argument i of the call an Array that owns its memory and
	// returns it (a new reference).
	keep(call uintptr, i int) (uintptr, error)
	// saveThread and restoreThread release and take back the GIL.
	saveThread() uintptr
	restoreThread(ts uintptr)
	// cString copies s into C memory that C frees.
	cString(s string) (uintptr, int64)
}

// frame is one call of a Go function from Python: its arguments as C read
// them and as the Go function sees them. Frames are reused; an arg's
// generation tells a stale Array from a live one.
type frame struct {
	fn    *function
	vals  []value // C's, for the call
	args  []arg
	call  uintptr // C's call context (ubx_keep)
	c     cHalf
	py    *pybridge.Python
	owned []usm.Owner // what Go imported for the call, released after it
}

// frames is the pool of frames; calls nest (a Go function that calls
// Python that calls Go), so each call takes its own. A sync.Pool rather
// than a channel: its per-P cache takes no lock, and a channel's two took
// a tenth of an empty call (docs/performance.md).
var frames = sync.Pool{New: func() any { return new(frame) }}

func getFrame() *frame { return frames.Get().(*frame) }

// end finishes a call: the Go function's Arrays go stale, and what Go
// imported for it is released.
func (c *frame) end() {
	for i := range c.args {
		c.args[i].gen++
		c.args[i].arr = usm.Array{}
	}
	for _, o := range c.owned {
		o.Release()
	}
	clear(c.owned)
	c.owned = c.owned[:0]
	c.vals, c.fn = nil, nil
	frames.Put(c)
}

// run calls the Go function: with the GIL released if it asked for that,
// and a panic made its error.
func (c *frame) run(fn func() error) (err error) {
	if c.fn.releaseGIL {
		ts := c.c.saveThread()
		defer c.c.restoreThread(ts)
	}
	defer recoverUser(c.fn.name, &err)
	return fn()
}

// importObject reads an array argument C left to Go: a DLPack capsule, an
// object with __sycl_usm_array_interface__, or any other DLPack producer
// (a SYCL one is passed our queue as stream). What keeps its memory alive
// is released when the call ends.
func (c *frame) importObject(p uintptr) (*usm.Array, error) {
	var arr *usm.Array
	err := c.py.DoHeld(func(g *pybridge.GIL) error { // decoding: before the function runs, with the GIL
		a, err := g.ReadArray(pybridge.UnsafeObject(p), nil)
		arr = a
		return err
	})
	if err != nil {
		return nil, err
	}
	if arr.Owner != nil {
		c.owned = append(c.owned, arr.Owner)
	}
	return arr, nil
}

// keep is Array.Keep: a copy of the argument's view that owns a reference
// to its memory.
func (c *frame) keep(a *arg) (*usm.Array, error) {
	out := a.arr
	out.Shape = append([]int64(nil), a.arr.Shape...)
	if a.arr.Strides != nil {
		out.Strides = append([]int64(nil), a.arr.Strides...)
	}
	if a.arr.Owner != nil {
		if !a.arr.Owner.Retain() {
			return nil, errkind.New(errkind.Value, "pyext.Array.Keep", "the array's memory has already been freed")
		}
		return &out, nil
	}
	if st := c.stateOf(int(a.index)); st != nil && st.owner != nil {
		if !st.owner.Retain() {
			return nil, errkind.New(errkind.Value, "pyext.Array.Keep", "the array's memory has already been freed")
		}
		out.Owner = st.owner
		return &out, nil
	}
	obj, err := c.c.keep(c.call, int(a.index))
	if err != nil {
		return nil, err
	}
	_ = c.py.Do(func(g *pybridge.GIL) error {
		o := pybridge.UnsafeObject(obj)
		out.Owner = g.Hold(o)
		g.DecRef(o) // Hold took its own
		return nil
	})
	return &out, nil
}

// stateOf is the Go state of argument i when it is an Array with one.
func (c *frame) stateOf(i int) *state {
	if v := &c.vals[i]; v.kind == vArray && v.v.handle != 0 {
		return handles.get(v.v.handle)
	}
	return nil
}

func (c *frame) setString(r *result, s string) error {
	r.kind = rStr
	r.s, r.n = c.c.cString(s)
	return nil
}

// setArray returns a Go array as a new Array, which takes over the
// reference to its memory the Go function held (the array's Owner).
func (c *frame) setArray(r *result, arr *usm.Array) error {
	if arr == nil {
		r.kind = rNone
		return nil
	}
	// Encoding: after the function returned, with the GIL again.
	return c.py.DoHeld(func(g *pybridge.GIL) error { return newArrayResult(g, arr, true, r) })
}

// newArrayResult makes r an Array over arr with Go state (taking over
// arr's Owner when takeOwner, else retaining it).
func newArrayResult(g *pybridge.GIL, arr *usm.Array, takeOwner bool, r *result) error {
	st, h, err := adopt(arr, takeOwner)
	if err != nil {
		return err
	}
	if err := fillView(g, arr, h, &r.v, &r.dims); err != nil {
		handles.remove(h)
		st.release()
		return err
	}
	r.kind = rArray
	return nil
}

// setArgArray returns an array argument as an Array over its memory.
func (c *frame) setArgArray(r *result, a *arg, gen uint32) error {
	if a == nil || a.gen != gen || a.frame != c {
		return errkind.New(errkind.Value, "pyext", c.fn.name+"() returned an array argument of another call")
	}
	if a.none {
		r.kind = rNone
		return nil
	}
	if c.vals[a.index].kind == vArray {
		r.kind, r.arg = rArgArray, a.index
		return nil
	}
	// Imported by Go: the new Array takes a reference of its own.
	if a.arr.Owner != nil && !a.arr.Owner.Retain() {
		return errkind.New(errkind.Value, "pyext", c.fn.name+"() returned an argument whose memory has already been freed")
	}
	return c.setArray(r, &a.arr)
}

// setSlice returns a Go slice as a host Array over its memory, which stays
// pinned (and referenced) until the Array goes.
func (c *frame) setSlice(r *result, p unsafe.Pointer, n int, size uintptr, dt dlabi.DataType, keep any) error {
	st := &state{slice: keep}
	if n > 0 {
		st.pin.Pin(p)
	} else {
		p = unsafe.Pointer(&zeroByte) // a valid pointer for an empty array
	}
	ts, err := dtype.FromDataType(dt)
	if err != nil {
		return err
	}
	st.arr = &usm.Array{Device: -1, DLDevice: dlabi.Device{Type: dlabi.CPU},
		Memory: usm.PointerInfo{Kind: usm.KindHost, Device: -1}}
	st.arr.Shape, st.arr.DType, st.arr.Data, st.arr.Version = []int64{int64(n)}, ts, uintptr(p), usm.Version1
	h := handles.put(st)
	r.kind = rArray
	r.v = view{handle: h}
	r.v.t = dlabi.Tensor{Data: uintptr(p), Device: dlabi.Device{Type: dlabi.CPU}, Ndim: 1, DType: dt}
	r.dims[0], r.dims[1] = int64(n), 1
	runtime.KeepAlive(keep)
	return nil
}

var zeroByte [8]byte
