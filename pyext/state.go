package pyext

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// ext is the module this library defines, once Python imported it.
var ext struct {
	mod  *Module
	py   *pybridge.Python
	excs []cExc // the module's exceptions, in C memory: C sets each one's type at module init
}

// dlpackCalls counts the __dlpack__ requests C left to Go (tests tell
// from it which requests C answered from the view); goCalls every call C
// makes into Go (tests tell from it which paths stay in C).
var dlpackCalls, goCalls atomic.Int64

// functionCalls counts the calls of Go functions (ubx_go_call), which C
// makes with the GIL: the GIL guards it, where an atomic add was a
// twentieth of a call. Live adds it to goCalls.
var functionCalls int64

// state is the Go half of an Array that Go made or imported: the array
// (its queue, backend and memory facts) and what keeps its memory alive.
// The C Array holds its handle and releases it when it goes.
type state struct {
	arr   *usm.Array
	owner usm.Owner // retained for the Array, released with it
	pin   runtime.Pinner
	slice any // a Go slice handed over as the result, pinned
}

func (s *state) release() {
	switch {
	case s.owner != nil && s.arr != nil && !s.arr.Pending.Empty():
		// A kernel may still write the memory (a NoWait function's
		// result nobody read): it goes once the kernel is done.
		holdUntilDone([]*usm.Pending{s.arr.Pending}, []usm.Owner{s.owner})
	case s.owner != nil:
		s.owner.Release()
	}
	s.pin.Unpin()
	s.slice = nil
}

// handleTable maps the handles C holds to Go state. A handle is index+1.
type handleTable struct {
	mu   sync.Mutex
	tab  []*state
	free []int
	live atomic.Int64
}

var handles handleTable

func (t *handleTable) put(s *state) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live.Add(1)
	if n := len(t.free); n > 0 {
		i := t.free[n-1]
		t.free = t.free[:n-1]
		t.tab[i] = s
		return int64(i + 1)
	}
	t.tab = append(t.tab, s)
	return int64(len(t.tab))
}

func (t *handleTable) get(h int64) *state {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h > 0 && h <= int64(len(t.tab)) {
		return t.tab[h-1]
	}
	return nil
}

func (t *handleTable) remove(h int64) *state {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h <= 0 || h > int64(len(t.tab)) || t.tab[h-1] == nil {
		return nil
	}
	s := t.tab[h-1]
	t.tab[h-1] = nil
	t.free = append(t.free, int(h-1))
	t.live.Add(-1)
	return s
}

// newArrayResult makes r an Array over arr with Go state (taking over
// arr's Owner when takeOwner, else retaining it).
func newArrayResult(arr *usm.Array, takeOwner bool, r *result) error {
	st, h, err := adopt(arr, takeOwner)
	if err != nil {
		return err
	}
	if err := fillView(arr, h, &r.v, &r.dims); err != nil {
		handles.remove(h)
		st.release()
		return err
	}
	r.kind = rArray
	return nil
}

// adopt makes arr the Go state of a new Array: its Owner is retained for
// the Array (the caller keeps its own reference), or taken over when
// takeOwner (an import whose only holder is the new Array).
func adopt(arr *usm.Array, takeOwner bool) (*state, int64, error) {
	s := &state{arr: arr, owner: arr.Owner}
	if s.owner != nil && !takeOwner && !s.owner.Retain() {
		return nil, 0, errkind.New(errkind.Value, "pyext", "the array's memory has already been freed")
	}
	return s, handles.put(s), nil
}

// fillView writes the view of a Go array: the tensor an export under
// pybridge's rules hands out without a copy or synchronisation
// (pybridge.ExportView, which makes none), which C's exports copy, and
// what C may do alone. An array Go refuses to export still gets its shape
// and type (its properties work), and every export is Go's, which refuses
// it.
func fillView(arr *usm.Array, h int64, v *view, dims *[2 * maxNdim]int64) error {
	*v = view{handle: h}
	n := len(arr.Shape)
	if n > maxNdim {
		return errkind.New(errkind.Buffer, "pyext", fmt.Sprintf("an array of %d dimensions (at most %d)", n, maxNdim))
	}
	dev := arr.DLDevice
	if dev.Type == dlabi.OneAPI {
		v.usmKind = int32(arr.Memory.Kind)
		v.noSync = boolC(dlabi.AcceptsNoSync(dev))
	}
	v.wait = boolC(needsWait(arr.Queue) || !arr.Pending.Empty())
	ev, err := pybridge.ExportView(arr)
	if err != nil { // each export asks Go again, which refuses with err
		v.goExport = 1
		dt, err := arr.DType.DataType()
		if err != nil {
			return err
		}
		ev = dlpack.View{Data: arr.ElementPointer(), Device: dev, DType: dt, Shape: arr.Shape,
			Strides: arr.EffectiveStrides(), ReadOnly: arr.ReadOnly}
	}
	// C points the tensor's shape and strides at the Array's dims.
	v.t = dlabi.Tensor{Data: ev.Data, Device: ev.Device, Ndim: int32(n), DType: ev.DType, ByteOffset: ev.ByteOffset}
	copy(dims[:n], ev.Shape)
	copy(dims[n:2*n], ev.Strides)
	if ev.ReadOnly {
		v.flags = dlabi.FlagReadOnly
	}
	return nil
}

// needsWait reports whether exports without a stream must wait on q
// first: any queue that can have pending work.
func needsWait(q usm.Queue) bool {
	if q == nil {
		return false
	}
	if i, ok := q.(interface{ Idle() bool }); ok && i.Idle() {
		return false
	}
	return true
}

func boolC(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// panicError is a Go function's panic, raised in Python as RuntimeError.
type panicError struct {
	fn    string
	value any
}

func (e *panicError) Error() string { return fmt.Sprintf("Go panic in %s(): %v", e.fn, e.value) }

var userPanics atomic.Int64

// userPanic is the error of a Go function's panic v, counted and logged
// with its stack (the deferred caller recovered it).
func userPanic(fn string, v any) error {
	userPanics.Add(1)
	fmt.Fprintf(os.Stderr, "pyext: Go panic in %s() (raised as RuntimeError)\n%s", fn, debug.Stack())
	return &panicError{fn: fn, value: v}
}
