package pyext

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/refcount"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// cHalf is what a call needs of the module's C half (the cgo files give
// it; a build without cgo has no calls).
type cHalf interface {
	// holdArray is the Array that owns the memory of argument i of the
	// call (a new reference; see keptArg). The caller holds the GIL.
	holdArray(call uintptr, i int) (uintptr, error)
	// leakHold gives up argument i's hold without releasing it (its memory
	// is leaked): for a kept argument whose Array could not be made.
	leakHold(call uintptr, i int)
	// saveThread and restoreThread release and take back the GIL.
	saveThread() uintptr
	restoreThread(ts uintptr)
	// cString copies s into C memory that C frees.
	cString(s string) (uintptr, int64)
	// results allocates n zeroed results in C memory that C frees (a
	// tuple's); free frees C memory of cString's or results'.
	results(n int) []result
	free(p uintptr)
}

// frame is one call of a Go function from Python: its arguments as C read
// them and as the Go function sees them. Frames are reused; an arg's
// generation tells a stale Array from a live one.
//
// The Go function may hand its Arrays to goroutines, which may use them
// while the call runs and must not after it; mu orders those uses against
// the end of the call, which moves every argument's generation on, so that
// a goroutine late by a moment gets an error, never a torn view or the view
// of a later call that reuses the frame. (The call runs until end: a Keep
// made while the result is encoded is bound with the others.)
type frame struct {
	fn    *function
	vals  []value // C's, for the call
	args  []arg
	call  uintptr // C's call context (ubx_hold_array)
	c     cHalf
	py    *pybridge.Python
	owned []usm.Owner // what Go imported for the call, released after it
	// gil is the handle the imports ran with (nil before the first): end,
	// which runs with the GIL, drops what they owned through it.
	gil *pybridge.GIL
	// suai is where importObject reads a SUAI argument, one at a time.
	suai pybridge.SUAIDict

	mu sync.Mutex // guards every arg's gen, held and view

	// fresh is the value __setstate__ received for an object that had
	// none (vNew): the object's once the call succeeds (adoptFresh).
	fresh freshValue
}

// freshValue is a new value of class c made for argument i.
type freshValue struct {
	i int
	v any
	c *class
}

// adoptFresh gives the value __setstate__ set its handle, which C gives the
// object, when the call succeeded; a failed call drops it (it was never an
// object's: its Close does not run).
func (c *frame) adoptFresh(ok bool) {
	if c.fresh.v == nil {
		return
	}
	if ok {
		h, _ := values.adopt(c.fresh.v, c.fresh.c)
		c.vals[c.fresh.i].i = h
	}
	c.fresh = freshValue{}
}

// frames are the frames no call is using; calls nest (a Go function that
// calls Python that calls Go) and run on several threads (a function that
// released the GIL), so each call takes its own. A call takes and gives
// back its frame with the GIL (ubx_go_call, and end, which runs after the
// GIL is taken back), which guards the list: no lock of its own, where a
// sync.Pool's per-P cache cost a twentieth of a call (docs/performance.md).
var frames []*frame

// leakedHolds counts kept arguments whose memory was leaked (keptArg.bind).
var leakedHolds atomic.Int64

// getFrame takes a frame for a call; the caller holds the GIL.
func getFrame() *frame {
	if n := len(frames); n > 0 {
		c := frames[n-1]
		frames = frames[:n-1]
		return c
	}
	return new(frame)
}

// begin readies a frame from the pool for a call of n arguments.
func (c *frame) begin(n int) {
	if cap(c.args) < n {
		// A new slice: Arrays of earlier calls keep pointing at the old
		// one, whose generations have moved on.
		c.args = make([]arg, n)
		for i := range c.args {
			c.args[i].frame, c.args[i].index = c, int32(i)
		}
	}
	c.args = c.args[:n]
}

// end finishes a call, with the GIL: the Arrays go stale, each kept view of
// an argument C read gets the Array that owns the argument's memory (the
// hold's, shared by every kept view and by a result over the argument),
// and what Go imported for the call is released.
func (c *frame) end() {
	c.mu.Lock() // waits for a goroutine's Keep or accessor under way
	for i := range c.args {
		c.args[i].gen++ // an Array of this call never matches a later one
	}
	c.mu.Unlock()
	for i := range c.args {
		a := &c.args[i]
		if a.held != nil {
			a.held.bind(c, i)
			a.held = nil
		}
		if a.arr.Owner != nil || a.arr.Queue != nil || a.view != nil || a.arr.Pending != nil {
			// What an import or a USM view refers to goes with the call
			// (a host view holds only pointers into the call's C memory).
			a.view = nil
			a.arr = usm.Array{}
		}
		a.decoded = false
	}
	for _, o := range c.owned {
		c.gil.ReleaseOwner(o)
	}
	clear(c.owned)
	c.owned = c.owned[:0]
	c.vals, c.fn = nil, nil
	frames = append(frames, c) // with the GIL: see frames
}

// run calls the Go function: with the GIL released if it asked for that,
// and a panic made its error.
func (c *frame) run(fn func() error) (err error) {
	if c.fn.releaseGIL {
		ts := c.c.saveThread()
		defer c.c.restoreThread(ts)
	}
	defer func() {
		if v := recover(); v != nil {
			err = userPanic(c.fn.name, v)
		}
	}()
	err = fn()
	nameFunc(c.fn.name, err)
	return err
}

// importObject reads an array argument C left to Go into a.arr: an
// object whose __sycl_usm_array_interface__ C read (v.suai), a DLPack
// capsule, or any other DLPack producer (a SYCL one is passed our queue
// as stream). What keeps its memory alive is released when the call
// ends. A SUAI is read into the frame's and the argument's own storage,
// which the next call reuses: an import allocates only its Owner.
func (c *frame) importObject(v *value, a *arg) error {
	err := c.py.DoHeld(func(g *pybridge.GIL) error { // decoding: before the function runs, with the GIL
		c.gil = g
		if v.kind == vSUAI {
			v.suai.to(&c.suai)
			err := g.ReadSUAIArrayInto(pybridge.UnsafeObject(v.obj), &c.suai, nil, &a.arr, a.dims[:])
			c.suai = pybridge.SUAIDict{} // C's borrowed pointers go with the read
			return err
		}
		arr, err := g.ReadArray(pybridge.UnsafeObject(v.obj), nil)
		if err == nil {
			a.arr = *arr
		}
		return err
	})
	if err != nil {
		a.arr = usm.Array{}
		return err
	}
	if a.arr.Owner != nil {
		c.owned = append(c.owned, a.arr.Owner)
	}
	return nil
}

// keep is Array.Keep: a copy of the argument's view, in Go memory, with an
// Owner of its own. It takes no GIL, so any goroutine of the call may keep
// an argument, while the call runs; the caller holds c.mu and checked that.
//
// For an argument Go imported, the Owner is a reference of the import's
// own. For one C read (host memory, a capsule, an Array of the module),
// it is a reference to the argument's keptArg, which every kept view and
// the call share: when the call ends it gets the Array that owns the
// memory (RATIONALE.md, "One owner per reference: what C holds of an
// argument").
func (c *frame) keep(a *arg) (*usm.Array, error) {
	a.pending() // the kept view shares the work the function records, before or after
	o, err := c.holdMemory(a)
	if err != nil {
		return nil, err
	}
	out := cloneView(&a.arr)
	out.Owner = o
	return out, nil
}

// holdMemory is a reference of its own to what keeps the argument's
// memory alive after the call (keep's Owner); the caller holds c.mu.
func (c *frame) holdMemory(a *arg) (usm.Owner, error) {
	if c.vals[a.index].kind != vArray {
		if a.arr.Owner == nil || !a.arr.Owner.Retain() {
			return nil, errkind.New(errkind.Value, "pyext.Array.Keep", "the array's memory has already been freed")
		}
		return a.arr.Owner, nil
	}
	if a.held == nil {
		a.held = newKeptArg()
	}
	a.held.refs.Retain() // the call's reference, released at end, keeps it alive
	return a.held, nil
}

// cloneView is a copy of arr whose shape and strides are Go's own (an
// argument's alias C memory that lives as long as the call).
func cloneView(arr *usm.Array) *usm.Array {
	out := *arr
	out.Shape = append([]int64{}, arr.Shape...)
	if arr.Strides != nil {
		out.Strides = append([]int64(nil), arr.Strides...)
	}
	return &out
}

// keptArg is the Owner of the kept views of one argument C read. Its
// count starts with the call's reference; each Keep adds one. When the
// call ends (bind, with the GIL), it gets a reference to the Array that
// owns the argument's memory, and drops the call's reference: the last
// kept view to be released drops the Array (taking the GIL).
type keptArg struct {
	refs refcount.Count
	arr  usm.Owner // pybridge's hold of the Array; nil until the call ends
}

func newKeptArg() *keptArg {
	k := &keptArg{}
	k.refs.Init()
	return k
}

func (k *keptArg) Retain() bool { return k.refs.Retain() }

func (k *keptArg) Release() {
	if k.refs.Release() && k.arr != nil {
		k.arr.Release()
	}
}

// releaseSoon is Release through pybridge.ReleaseSoon.
func (k *keptArg) releaseSoon() {
	if k.refs.Release() && k.arr != nil {
		pybridge.ReleaseSoon(k.arr)
	}
}

// bind ends the call's part, with the GIL: the argument's Array (made now,
// if the result did not make it) becomes what the kept views hold. If it
// cannot be made (no memory for the object), the argument's hold is leaked
// rather than released under the kept views, and the failure is logged.
func (k *keptArg) bind(c *frame, i int) {
	obj, err := c.c.holdArray(c.call, i)
	if err != nil {
		c.c.leakHold(c.call, i)
		leakedHolds.Add(1)
		fmt.Fprintf(os.Stderr, "pyext: %s(): the memory of kept argument %q is leaked: %v\n", c.fn.name, c.fn.params[i].name, err)
		k.refs.Release() // never the last: the kept views hold theirs
		return
	}
	_ = c.py.DoHeld(func(g *pybridge.GIL) error {
		o := pybridge.UnsafeObject(obj)
		k.arr = g.Hold(o)
		g.DecRef(o) // Hold took its own
		return nil
	})
	if k.refs.Release() { // every kept view was released during the call
		k.arr.Release()
	}
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
	// No GIL: the view is described in Go (pybridge.ExportView), and an
	// Owner is released from any goroutine.
	return newArrayResult(arr, true, r)
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
	// Imported by Go: the new Array gets a view of its own (the
	// argument's is cleared when the call ends) and a reference of its
	// own to the import.
	if a.arr.Owner == nil || !a.arr.Owner.Retain() {
		return errkind.New(errkind.Value, "pyext", c.fn.name+"() returned an argument whose memory has already been freed")
	}
	return c.setArray(r, cloneView(&a.arr))
}

// setResult writes a Result: None, a new Array, or an argument as given
// (C returns the very object the caller passed).
func (c *frame) setResult(r *result, res Result) error {
	switch res.kind {
	case resultArray:
		return c.setArray(r, res.arr)
	case resultGiven:
		a := res.given
		if a == nil || a.gen != res.gen || a.frame != c {
			return errkind.New(errkind.Value, "pyext", c.fn.name+"() returned an argument of another call")
		}
		if a.none || c.vals[a.index].kind == vMissing {
			r.kind = rNone
			return nil
		}
		r.kind, r.arg = rArg, a.index
		return nil
	}
	r.kind = rNone
	return nil
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

// setTuple returns n values as a tuple: each is encoded (encode) into a
// result of its own, in C memory that C makes the tuple of and frees. If
// one cannot be encoded, those encoded before it are let go (discard), as
// C lets go of the results it cannot make.
func (c *frame) setTuple(r *result, n int, encode func(i int, r *result) error) error {
	rs := c.c.results(n)
	for i := range rs {
		if err := encode(i, &rs[i]); err != nil {
			for j := range i {
				c.discard(&rs[j])
			}
			c.c.free(uintptr(unsafe.Pointer(&rs[0])))
			return err
		}
	}
	r.kind, r.obj, r.n = rTuple, uintptr(unsafe.Pointer(&rs[0])), int64(n)
	return nil
}

// discard lets go of what an encoded result holds, which C will not make:
// a string's C memory, an object's reference, an Array's Go state, a
// class's value that became an object's only for the result (closed, as
// C closes one whose object it cannot make).
func (c *frame) discard(r *result) {
	switch r.kind {
	case rStr:
		c.c.free(r.s)
	case rObject:
		_ = c.py.DoHeld(func(g *pybridge.GIL) error { g.DecRef(pybridge.UnsafeObject(r.obj)); return nil })
	case rArray:
		if st := handles.remove(r.v.handle); st != nil {
			st.release()
		}
	case rInstance:
		if r.n == 0 {
			_ = dropValue(r.i)
		}
	case rTuple:
		rs := unsafe.Slice((*result)(cmem.Ptr(r.obj)), r.n)
		for i := range rs {
			c.discard(&rs[i])
		}
		c.c.free(r.obj)
	}
	*r = result{}
}
