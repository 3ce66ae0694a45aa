// Command pyext is the Go half of the usmbridge Python package: a c-shared
// library that is also a CPython extension module, usmbridge._ext. Its C
// half (ext.c) defines the module and the usmbridge.Array type; every
// method that needs Go calls one of the functions exported here directly
// (a cgo call, about 50 ns), with the GIL held. Functions that return a
// PyObject* return a new reference, or NULL with the Python exception set.
//
//	go build -buildmode=c-shared -o usmbridge/libusmbridge.so .
//
// -O2 is in the cgo directive because the builds set CGO_CFLAGS (for
// Python's include directory), which replaces cgo's default "-g -O2": ext.c
// would otherwise be compiled unoptimised, with CPython's inline helpers
// (Py_TYPE, Py_DECREF) as calls on every fast path.
//
// Python's headers are found at /usr/include/python3.11 unless CGO_CFLAGS
// names others (python -c 'import sysconfig; print(sysconfig.get_paths()["include"])').
// Without them the library builds but has no module in it, and importing
// usmbridge says so.
package main

// #cgo CFLAGS: -I/usr/include/python3.11 -O2
// #cgo LDFLAGS: -Wl,--unresolved-symbols=ignore-all
// #include <stdlib.h>
// #include "ext.h"
import "C"

import (
	"fmt"
	"math"
	"runtime/metrics"
	"strconv"
	"unsafe"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/hooks"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/pybridge/internal/extbridge"
	"github.com/usmbridge/usmbridge/usm"
)

func main() {}

// dlpack's release for a C caller (internal/hooks).
var (
	releaseDeferred = hooks.ReleaseDeferred.(func(*dlpack.Tensor) (uintptr, uintptr))
	foreignDeleter  = hooks.ForeignDeleter.(func(*dlpack.Tensor) (uintptr, uintptr))
	acceptedData    = hooks.AcceptedData.(func(*dlpack.Tensor, []int64) (uintptr, uintptr, bool))
)

// entry is one usmbridge.Array's Go state; the C object holds its handle.
type entry struct {
	arr     *usm.Array
	syclobj pyRef // the producer's SyclQueue/SyclContext, if any
	// cReleased: Go let C call the producer's deleter (ub_import_host), so
	// a handle in ext.c's ub_released list is finished by finishCReleases.
	cReleased bool
	// cDropped: Go let C drop the Python references of the Owner and
	// syclobj (ub_asarray_read); finishCReleases then only counts them.
	cDropped bool
	// tensor is arr's dlpack.Tensor, for a fast host import: once C has
	// released it (cReleased), no pointer to either is left but this
	// entry's, so both are reused (spare).
	tensor *dlpack.Tensor
	// h is the entry's handle once it has one (put). A spare entry keeps
	// its slot in the table, parked (arr nil, so get does not find it):
	// the next fast import reuses entry, tensor and handle together.
	h int64
}

// spareEntries keeps the entries, and their tensors and handles, of
// arrays C released (finishCRelease), for the next fast imports: that path
// then allocates nothing and takes no slot, and the collector has nothing
// of it to collect. Guarded by the GIL.
type spareEntries struct{ list []*entry }

const maxSpare = C.UB_RELEASED_MAX

var spare spareEntries

func (s *spareEntries) get() *entry {
	if n := len(s.list); n > 0 {
		e := s.list[n-1]
		s.list[n-1] = nil
		s.list = s.list[:n-1]
		return e
	}
	return new(entry)
}

// put keeps e for reuse, or reports that the list is full.
func (s *spareEntries) put(e *entry) bool {
	if len(s.list) < maxSpare {
		s.list = append(s.list, e)
		return true
	}
	return false
}

// finishCReleases does Go's part of the releases C made since Go last ran
// (ext.h, "Releases C replays"): the producer's deleter has been called,
// so each entry is parked (or leaves the table), and its tensor's last
// reference is dropped without calling the deleter again. The caller holds
// the GIL, which guards the list. A handle that Go never let C release
// means a deleter was called while something else could still read the
// memory: a bug, recovered as a panic (counted and logged) without touching
// the tensor again; the handles after it are still finished.
func finishCReleases(atLeast int) {
	n := int(C.ub_nreleased)
	if n == 0 || n < atLeast {
		return
	}
	// Copied first: nothing below should reach Python, but a release
	// that did could not overwrite the handles still to finish.
	var hs [C.UB_RELEASED_MAX]C.int64_t
	copy(hs[:n], (*[C.UB_RELEASED_MAX]C.int64_t)(unsafe.Pointer(&C.ub_released))[:n])
	C.ub_nreleased = 0
	for i := 0; i < n; {
		i = finishCReleasesFrom(hs[:n], i)
	}
}

// finishCReleasesFrom finishes hs[i:] and returns len(hs), or, when one
// panics, the index after it: one deferred recovery for a batch, not one
// per release.
func finishCReleasesFrom(hs []C.int64_t, i int) (next int) {
	defer boundary.Recover("ub_released", nil)
	for ; i < len(hs); i++ {
		next = i + 1
		finishCRelease(hs[i])
	}
	return len(hs)
}

func finishCRelease(h C.int64_t) {
	boundary.Check("ub_released")
	e := get(h)
	if e == nil {
		panic(fmt.Sprintf("C released handle %d, which is not in use", h))
	}
	if e.cDropped {
		finishCDrop(h, e)
		return
	}
	t, ok := e.arr.Owner.(*dlpack.Tensor)
	if !ok || !e.cReleased {
		panic(fmt.Sprintf("C released handle %d, which Go did not leave to C", h))
	}
	// The array is gone either way: a tensor still held below is leaked,
	// not read.
	counts.live--
	*e = entry{h: e.h} // parked: get(h) is nil from here on
	if fn, _ := releaseDeferred(t); fn == 0 {
		entries.remove(e.h)
		panic(fmt.Sprintf("C released handle %d while its tensor was still held", h))
	}
	counts.cReleases++
	e.tensor = t // t and e are unreachable but through spare now
	if !spare.put(e) {
		entries.remove(e.h)
	}
}

// finishCDrop is finishCRelease for an array whose Python references C
// dropped (cDropped): the entry leaves the table, and the references their
// count. A reference still held by anything else means C dropped what
// someone could still use: a bug, reported as a panic.
func finishCDrop(h C.int64_t, e *entry) {
	counts.live--
	entries.remove(int64(h))
	owner, _ := e.arr.Owner.(pyRef)
	okOwner := owner != nil && owner.ReleasedByCaller()
	okSyclobj := e.syclobj == nil || e.syclobj.ReleasedByCaller()
	if !okOwner || !okSyclobj {
		panic(fmt.Sprintf("C dropped the references of handle %d while they were still held", h))
	}
	counts.cReleases++
}

// pyRef is pybridge's strong reference to a Python object, as the
// extension holds it.
type pyRef = extbridge.Ref[pybridge.GIL, pybridge.Object]

// br is pybridge's side of the extension (internal/extbridge): what only
// an extension module needs, kept out of pybridge's public API. brOK is
// false only if pybridge did not publish it for these types (ub_init
// then refuses to load).
var br, brOK = extbridge.Get[pybridge.GIL, pybridge.Object]()

var (
	// pyEnter and pyExit enter and leave the interpreter ub_init attached
	// to, for a caller that holds the GIL (every export below).
	pyEnter func() *pybridge.GIL
	pyExit  func()
	// counts are what ub_stats reports of the extension's own work; every
	// export runs with the GIL held, which guards them.
	counts struct {
		live int64 // entries not yet released
		// dlpackCalls counts the __dlpack__ calls C left to Go
		// (ub_dlpack), so that tests can tell which requests C answered
		// from the template.
		dlpackCalls int64
		// cReleases counts the releases C made with Go's leave
		// (finishCRelease), so that tests can tell which path an array's
		// release took.
		cReleases int64
	}
)

// put gives e a handle (a spare entry still has its own) and makes it the
// live state of a new array.
func put(e *entry, dev *C.ub_dl_device) C.int64_t {
	counts.live++
	dev.device_type = C.int32_t(e.arr.DLDevice.Type)
	dev.device_id = C.int32_t(e.arr.DLDevice.ID)
	if e.h == 0 {
		e.h = entries.put(e)
	}
	return C.int64_t(e.h)
}

func get(h C.int64_t) *entry { return entries.get(int64(h)) }

// entries holds the arrays' Go state; C holds handles into it. A slice
// with a free list costs a fraction of cgo.Handle's concurrent map on the
// path every array takes. It needs no lock of its own: C calls Go only
// with the GIL held (ext.c, the exchange API's entry points take it), and
// Go releases the GIL only inside a wait, after its last use of the table.
// Handles are index+1, so 0 is never one.
var entries handleTable

type handleTable struct {
	tab  []*entry
	free []int
}

func (t *handleTable) put(e *entry) int64 {
	if n := len(t.free); n > 0 {
		i := t.free[n-1]
		t.free = t.free[:n-1]
		t.tab[i] = e
		return int64(i + 1)
	}
	t.tab = append(t.tab, e)
	return int64(len(t.tab))
}

// get returns the live entry of h: nil for 0, a handle not in use, or a
// spare entry parked in its slot.
func (t *handleTable) get(h int64) *entry {
	if h > 0 && h <= int64(len(t.tab)) {
		if e := t.tab[h-1]; e != nil && e.arr != nil {
			return e
		}
	}
	return nil
}

// remove frees h's slot for reuse (a handle not in use is ignored).
func (t *handleTable) remove(h int64) {
	if h > 0 && h <= int64(len(t.tab)) && t.tab[h-1] != nil {
		t.tab[h-1] = nil
		t.free = append(t.free, int(h-1))
	}
}

// held runs fn, the body of the export named where, with the GIL, which
// the C caller holds (guarded, with pybridge entered).
func held[T any](where string, fn func(g *pybridge.GIL) (T, error)) T {
	return guarded(where, func() (r T, err error) {
		err = pyHeld(func(g *pybridge.GIL) error {
			var err error
			r, err = fn(g)
			return err
		})
		return r, err
	})
}

// guarded runs fn, the body of the export named where; the C caller holds
// the GIL. An error becomes the Python exception (a Python exception that
// crossed Go is raised as the same object: extbridge's Raise), and the
// result is then T's zero value, which C reads as failure (a NULL
// PyObject*, a 0 handle). A Go panic is recovered here, counted and
// logged, and raised as RuntimeError: it must not unwind into C. fn itself
// does not enter pybridge (held does): the fast import needs no Python
// call unless it fails.
func guarded[T any](where string, fn func() (T, error)) T {
	var r T
	var err error
	func() {
		defer boundary.Recover(where, &err)
		boundary.Check(where)
		// Batched: only the counts of ub_stats wait for them.
		finishCReleases(C.UB_RELEASED_MAX / 2)
		r, err = fn()
	}()
	if err != nil {
		// Python now holds the exception; Go lets its reference go at once
		// so the traceback's frames do not wait for Go's collector.
		_ = pyHeld(func(g *pybridge.GIL) error { br.Raise(g, err); br.ReleaseError(g, err); return nil })
		var zero T
		return zero
	}
	return r
}

// pyHeld runs fn with the GIL the caller (Python) holds. It is a direct
// call, so fn, a closure over each export's locals, stays on the stack.
func pyHeld(fn func(g *pybridge.GIL) error) error {
	g := pyEnter()
	defer pyExit()
	return fn(g)
}

// call is held for the functions that return a PyObject* (a new reference).
func call(where string, fn func(g *pybridge.GIL) (pybridge.Object, error)) C.uintptr_t {
	return C.uintptr_t(br.Ptr(held(where, fn)))
}

// newArray is held for the functions that make an array: the new entry's
// handle, or 0 with the exception set.
func newArray(where string, dev *C.ub_dl_device, fn func(g *pybridge.GIL) (*entry, error)) C.int64_t {
	e := held(where, fn)
	if e == nil {
		return 0
	}
	return put(e, dev)
}

// ub_init attaches to the interpreter that is loading the module. It
// returns NULL, or a message (malloc'd; the caller frees it) saying why
// not.
//
// First it routes every Go callback C may call (DLPack deleters, capsule
// destructors) through ext.c's gates, so that a child created by fork()
// never enters the Go runtime, which does not survive fork without exec
// (see RATIONALE.md): C checks the fork flag, then calls Go.
//
//export ub_init
func ub_init() (msg *C.char) {
	var panicked error
	defer func() {
		if panicked != nil {
			msg = C.CString(panicked.Error())
		}
	}()
	defer boundary.Recover("ub_init", &panicked)
	if !boundary.SetGate(func(goFn uintptr) uintptr { return uintptr(C.ub_gate(C.uintptr_t(goFn))) }) {
		return C.CString("usmbridge: internal error: a Go callback was made before the fork gate was installed")
	}
	if !brOK {
		return C.CString("usmbridge: internal error: pybridge did not publish its extension operations")
	}
	enter, exit, err := br.Attach()
	if err != nil {
		return C.CString("usmbridge: cannot attach to the running Python: " + err.Error())
	}
	pyEnter, pyExit = enter, exit
	return nil
}

// ub_asarray_read is asarray(obj) after ext.c made the calls into Python
// that Go's would (ext.h, "SUAI reads C replays"): d is
// obj.__sycl_usm_array_interface__ (0 when that raised, the exception
// still set) and got the tuple the getter ub_suai_getters named for d, an
// exact dict of n items (0 if none was called or it raised). C keeps both
// and releases them after this returns.
//
// Go also decides here that C may drop the array's Python references
// itself (drop: the Owner's object, then the syclobj's or 0; ext.h
// "Releases C replays"): they are new and nothing else holds them, and C
// gives that up as it gives up a deleter.
//
//export ub_asarray_read
func ub_asarray_read(obj, d, got C.uintptr_t, n C.int64_t, dev *C.ub_dl_device, dropOut *C.uintptr_t) C.int64_t {
	return newArray("ub_asarray_read", dev, func(g *pybridge.GIL) (*entry, error) {
		arr, so, err := br.AsArrayRead(g, br.Object(uintptr(obj)), uintptr(d), uintptr(got), int(n))
		if err != nil {
			return nil, err
		}
		e := &entry{arr: arr, syclobj: so}
		drop := unsafe.Slice(dropOut, 2)
		if owner, ok := arr.Owner.(pyRef); ok {
			drop[0] = C.uintptr_t(br.Ptr(owner.Object()))
			if so != nil {
				drop[1] = C.uintptr_t(br.Ptr(so.Object()))
			}
			e.cDropped = true
		}
		return e, nil
	})
}

// ub_suai_getters fills ext.c's table of the itemgetter C calls for an
// exact SUAI dict of i items (the last entry: of that many or more), 0 for
// none (extbridge's SUAIGetters). It returns -1 with the exception set if
// that fails.
//
//export ub_suai_getters
func ub_suai_getters(out *C.uintptr_t) C.int {
	table := (*[C.UB_SUAI_GETTERS]C.uintptr_t)(unsafe.Pointer(out))
	ok := held("ub_suai_getters", func(g *pybridge.GIL) (bool, error) {
		t := br.SUAIGetters(g)
		if len(t) != len(table) {
			panic("pybridge has " + strconv.Itoa(len(t)) + " SUAI getters, ext.h's UB_SUAI_GETTERS is " + strconv.Itoa(len(table)))
		}
		for i, f := range t {
			table[i] = C.uintptr_t(f)
		}
		return true, nil
	})
	if !ok {
		return -1
	}
	return 0
}

// ub_from_dlpack takes x, and device and copy (NULL when not given).
//
//export ub_from_dlpack
func ub_from_dlpack(x, device, copyArg C.uintptr_t, dev *C.ub_dl_device) C.int64_t {
	return newArray("ub_from_dlpack", dev, func(g *pybridge.GIL) (*entry, error) {
		o, err := br.ParseDLPackArgs(g, dlpack.Device{}, pybridge.Object{}, pybridge.Object{}, br.Object(uintptr(device)), br.Object(uintptr(copyArg)))
		if err != nil {
			return nil, err
		}
		t, err := g.FromDLPack(br.Object(uintptr(x)), pybridge.FromDLPackOptions{Device: o.Device, Copy: o.Copy})
		if err != nil {
			return nil, err
		}
		return &entry{arr: &t.Array}, nil
	})
}

// ub_max_version gives C the max_version ub_from_dlpack asks producers
// for (dlpack.ProducerVersion, as pybridge's FromDLPack does), so the fast path of from_dlpack (ext.c)
// passes what Go would.
//
//export ub_max_version
func ub_max_version(major, minor *C.uint32_t) {
	defer boundary.Recover("ub_max_version", nil)
	*major, *minor = C.uint32_t(dlpack.ProducerVersion.Major), C.uint32_t(dlpack.ProducerVersion.Minor)
}

// ub_import_host is from_dlpack(x) once ext.c's fast path has called
// x.__dlpack__(max_version=...) and found a fresh DLPack capsule (p is its
// pointer) of a kDLCPU tensor: Go imports it (extbridge's ImportHostManaged)
// and C renames the capsule only if that succeeded. A consumer of DLPack's
// C exchange API can call it with the tensor that API returns.
//
// When the producer's deleter is a C function, Go also decides here that
// C may release the array itself (*crelease, ext.h "Releases C replays"):
// the new array is the tensor's only holder, and C gives that up as soon
// as it passes the handle back to Go for anything that could take another.
//
// Go also writes the decision down for C to replay on the next tensor of
// the same layout (ext.h, "Host imports C replays"; hostLayouts).
//
//export ub_import_host
func ub_import_host(p C.uintptr_t, versioned C.int, dev *C.ub_dl_device, crelease *C.ub_deleter_call) C.int64_t {
	return importHost("ub_import_host", p, versioned, dev, crelease, true)
}

// ub_adopt_host is ub_import_host of a tensor C imported by replaying a
// decision of Go's and held since (a pending array): Go imports it now,
// with all its checks again, and writes nothing down.
//
//export ub_adopt_host
func ub_adopt_host(p C.uintptr_t, versioned C.int, dev *C.ub_dl_device, crelease *C.ub_deleter_call) C.int64_t {
	return importHost("ub_adopt_host", p, versioned, dev, crelease, false)
}

func importHost(where string, p C.uintptr_t, versioned C.int, dev *C.ub_dl_device, crelease *C.ub_deleter_call, remember bool) C.int64_t {
	e := guarded(where, func() (*entry, error) {
		e := spare.get()
		t, err := br.ImportHostManaged(uintptr(p), versioned != 0, e.tensor)
		if err != nil {
			if !spare.put(e) {
				entries.remove(e.h)
			}
			return nil, err
		}
		fn, arg := foreignDeleter(t)
		crelease.fn, crelease.arg = C.uintptr_t(fn), C.uintptr_t(arg)
		*e = entry{arr: &t.Array, cReleased: fn != 0, tensor: t, h: e.h}
		if remember && fn != 0 {
			hostLayouts.remember(uintptr(p), versioned != 0, t, fn)
		}
		return e, nil
	})
	if e == nil {
		return 0
	}
	return put(e, dev)
}

// hostLayouts writes Go's import decisions into ext.c's table
// (ub_host_layouts), replacing the oldest. Guarded by the GIL.
var hostLayouts hostLayoutTable

type hostLayoutTable struct{ next int }

// remember writes down that Go accepted the fresh kDLCPU tensor at p (t,
// imported without a registry) and lets C call deleter, for a box of
// tensors around it (hostBox): every field Import read but the data
// pointer and the shape, from Go's own copy of the strides, a bound for
// each extent, and the data pointers Import accepts for every shape in
// the box. A layout of more dimensions than the table holds, or one
// whose pointers Go must judge one by one, is not written down.
func (h *hostLayoutTable) remember(p uintptr, versioned bool, t *dlpack.Tensor, deleter uintptr) {
	if len(t.Shape) > C.UB_HOST_LAYOUT_NDIM {
		return
	}
	var (
		dl  *C.ub_dl_tensor
		key = C.ub_host_layout{deleter: C.uintptr_t(deleter)}
	)
	if versioned {
		m := (*C.ub_dl_managed_versioned)(cmem.Ptr(p))
		dl = &m.dl_tensor
		key.versioned, key.version, key.flags = 1, m.version, m.flags
	} else {
		dl = &(*C.ub_dl_managed)(cmem.Ptr(p)).dl_tensor
	}
	var caps [C.UB_HOST_LAYOUT_NDIM]int64
	lo, hi, ok := hostBox(t, uintptr(dl.data), caps[:len(t.Shape)])
	if !ok {
		return
	}
	key.data_lo, key.data_hi = C.uintptr_t(lo), C.uintptr_t(hi)
	l := &C.ub_host_layouts[h.next]
	h.next = (h.next + 1) % C.UB_HOST_LAYOUTS
	*l = key
	l.device, l.dtype, l.ndim, l.byte_offset = dl.device, dl.dtype, C.int32_t(len(t.Shape)), dl.byte_offset
	for i, n := range caps[:len(t.Shape)] {
		l.shape_max[i] = C.int64_t(n)
	}
	if t.Strides != nil {
		l.has_strides = 1
		for i, n := range t.Strides {
			l.strides[i] = C.int64_t(n)
		}
	}
	l.used = 1
}

// hostBoxScales are the factors hostBox tries for the bound of each
// extent, largest first: a box that holds arrays of up to 2^20 times the
// first one's extents covers a producer whose sizes vary, and the window of
// a larger box only narrows the pointers accepted, so each is tried
// against the pointer in hand.
var hostBoxScales = [...]uint{20, 8, 0}

// hostBox fills caps (one per dimension of t) with the largest box whose
// accepted pointers (dlpack's, hooks.AcceptedData) still include data, the
// producer's pointer of t, and returns those pointers.
func hostBox(t *dlpack.Tensor, data uintptr, caps []int64) (lo, hi uintptr, ok bool) {
	for _, k := range hostBoxScales {
		for i, n := range t.Shape {
			n = max(n, 1)
			if n <= math.MaxInt64>>k {
				n <<= k
			}
			caps[i] = n
		}
		if lo, hi, ok = acceptedData(t, caps); ok && lo <= data && data <= hi {
			return lo, hi, true
		}
	}
	return 0, 0, false
}

// ub_from_dlpack_result is the rest of from_dlpack(x) after ext.c's fast
// path left it: meth is x.__dlpack__ (0 when x has no callable __dlpack__
// or no __dlpack_device__: Go raises the AttributeError), c the result of
// meth(max_version=...) (borrowed; 0 when the call raised and the exception
// is still set). Go then does what ub_from_dlpack would
// (extbridge's FromDLPackAfterCall).
//
//export ub_from_dlpack_result
func ub_from_dlpack_result(x, meth, c C.uintptr_t, dev *C.ub_dl_device) C.int64_t {
	return newArray("ub_from_dlpack_result", dev, func(g *pybridge.GIL) (*entry, error) {
		xo := br.Object(uintptr(x))
		if meth == 0 {
			return nil, br.NotAProducer(g, xo)
		}
		t, err := br.FromDLPackAfterCall(g, xo, br.Object(uintptr(meth)), br.Object(uintptr(c)))
		if err != nil {
			return nil, err
		}
		return &entry{arr: &t.Array}, nil
	})
}

// ub_wait waits on the array's queue (usm.Array.Wait), where C cannot
// wait itself: what __sycl_usm_array_interface__ does on every call before
// C hands out a copy of the dict Go built on the first (ext.c), and the C
// exchange API when the template says exchange_wait. It returns 0, or -1
// with the exception set.
//
//export ub_wait
func ub_wait(h C.int64_t) C.int {
	ok := held("ub_wait", func(g *pybridge.GIL) (bool, error) {
		e := get(h)
		if e == nil {
			return false, usm.ErrValue
		}
		return true, e.arr.Wait()
	})
	if !ok {
		return -1
	}
	return 0
}

// ub_release drops an array's Go state (from tp_dealloc, with the GIL). A
// panic is counted and logged (a deallocator cannot raise); the entry is
// then leaked. When the array was an imported tensor whose producer's
// deleter is a C function, the deleter is left in *del for C to call (a
// direct call instead of one through purego); Go did the rest.
//
//export ub_release
func ub_release(h C.int64_t, del *C.ub_deleter_call) {
	defer boundary.Recover("ub_release", nil)
	boundary.Check("ub_release")
	finishCReleases(0) // C's list is full, or C could not use it
	e := get(h)
	if e == nil {
		return
	}
	entries.remove(int64(h))
	counts.live--
	_ = pyHeld(func(g *pybridge.GIL) error {
		// Python references are dropped at once: the caller holds the GIL.
		switch o := e.arr.Owner.(type) {
		case pyRef:
			o.ReleaseHeld(g)
		case *dlpack.Tensor: // an imported tensor: its producer's deleter
			fn, arg := releaseDeferred(o)
			del.fn, del.arg = C.uintptr_t(fn), C.uintptr_t(arg)
		case nil:
		default:
			o.Release()
		}
		if e.syclobj != nil {
			e.syclobj.ReleaseHeld(g)
		}
		return nil
	})
}

// ub_info returns (shape, typestr, strides|None, offset, usm_type,
// (dl_device_type, dl_device_id), address of element 0, read_only), which
// the C type's properties read.
//
//export ub_info
func ub_info(h C.int64_t) C.uintptr_t {
	return call("ub_info", func(g *pybridge.GIL) (pybridge.Object, error) {
		e := get(h)
		if e == nil {
			return pybridge.Object{}, usm.ErrValue
		}
		a := e.arr
		var strides any
		if a.Strides != nil {
			strides = a.Strides
		}
		return br.FromGo(g, []any{a.Shape, dtypeName(a.DType), strides, a.Offset, usmType(a),
			[]any{int64(a.DLDevice.Type), int64(a.DLDevice.ID)}, uint64(a.ElementPointer()), a.ReadOnly})
	})
}

// dtypeName is the dtype property: the typestring where SUAI has one
// ("|f4"), else the element type's name ("bfloat16").
func dtypeName(t dtype.Type) string {
	if ts, err := t.Typestr(); err == nil {
		return ts.String()
	}
	return t.String()
}

// usmType is the usm_type property: the USM kind of an array that is USM
// (kDLOneAPI, the arrays with __sycl_usm_array_interface__), and None for
// host memory that is not (README.md, "Python and dpctl").
func usmType(a *usm.Array) any {
	if a.DLDevice.Type != dlabi.OneAPI {
		return nil
	}
	return a.Memory.Kind.String()
}

//export ub_suai
func ub_suai(h C.int64_t) C.uintptr_t {
	return call("ub_suai", func(g *pybridge.GIL) (pybridge.Object, error) {
		e := get(h)
		if e == nil {
			return pybridge.Object{}, usm.ErrValue
		}
		a := e.arr
		m, err := a.SUAI() // refuses host memory, as usm.Array.SUAI does in Go
		if err != nil {
			return pybridge.Object{}, err
		}
		if e.syclobj != nil {
			m["syclobj"] = e.syclobj.Object()
		} else {
			// dpctl's convention: the device's position in get_devices().
			m["syclobj"] = strconv.Itoa(int(a.DLDevice.ID))
		}
		return br.FromGo(g, m)
	})
}

// ub_dlpack is __dlpack__ for the calls the C fast path leaves to Go (a
// stream, a copy, another device, an array with a queue to wait on, and
// every error). Arguments not given are NULL.
//
//export ub_dlpack
func ub_dlpack(h C.int64_t, stream, maxVersion, dlDevice, copyArg C.uintptr_t) C.uintptr_t {
	counts.dlpackCalls++
	return call("ub_dlpack", func(g *pybridge.GIL) (pybridge.Object, error) {
		e := get(h)
		if e == nil {
			return pybridge.Object{}, usm.ErrValue
		}
		o, err := br.ParseDLPackArgs(g, e.arr.DLDevice, br.Object(uintptr(stream)), br.Object(uintptr(maxVersion)),
			br.Object(uintptr(dlDevice)), br.Object(uintptr(copyArg)))
		if err != nil {
			return pybridge.Object{}, err
		}
		return g.ToDLPack(e.arr, o)
	})
}

// ub_template_fill fills t with what Go's export (extbridge's Export,
// dlpack.Export's rules) gives this array for a versioned, same-device,
// no-copy export without synchronisation, and returns UB_TEMPLATE_READY;
// or UB_TEMPLATE_NONE when the export is refused (Go then raises the error
// on every call: ub_dlpack, ub_exchange_refuse). It also records Go's
// decisions about replaying it: dlpack_fast, whether __dlpack__ with
// stream None may (for an array on a queue C cannot wait on itself, Export
// waits on it each time, in Go; C waits on a dpctl queue with the array's
// wait plan, ub_wait_plan_fill); no_sync_ok, whether __dlpack__(stream=-1) may
// (extbridge's AcceptsNoSyncStream); and exchange_wait, whether the C
// exchange API must wait on the array's queue first
// (extbridge's ExchangeNeedsWait). stream=-1 matters for speed beyond the call
// itself: mpi4py asks for it on every MPI call, and a call into Go from a
// Python thread wakes Go's sysmon and idle Ms, which preempt MPI ranks on
// a machine whose cores they keep busy (RATIONALE.md, "The Python package
// is an extension module with a C half"). The caller holds the GIL. A
// panic is counted and logged and gives UB_TEMPLATE_NONE.
//
//export ub_template_fill
func ub_template_fill(h C.int64_t, t *C.ub_template) (state C.int32_t) {
	state = C.UB_TEMPLATE_NONE
	defer boundary.Recover("ub_template_fill", nil)
	boundary.Check("ub_template_fill")
	e := get(h)
	if e == nil {
		return C.UB_TEMPLATE_NONE
	}
	_ = pyHeld(func(g *pybridge.GIL) error {
		m, err := br.Export(g, e.arr, dlpack.ExportOptions{MaxVersion: &dlpack.ProducerVersion, NoSync: true})
		if err != nil {
			br.ReleaseError(g, err)
			return nil
		}
		defer m.Delete()
		if fillTemplate(t, m) {
			t.legacy_ok = boolC(!e.arr.ReadOnly)
			_, waitable := br.WaitPlan(e.arr.Queue)
			t.dlpack_fast = boolC(waitable)
			t.no_sync_ok = boolC(br.AcceptsNoSyncStream(e.arr.DLDevice))
			t.exchange_wait = boolC(br.ExchangeNeedsWait(g, e.arr))
			state = C.UB_TEMPLATE_READY
		}
		return nil
	})
	return state
}

func boolC(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// fillTemplate copies an export into t; shape and strides go to one
// malloc'd block of 2*ndim int64 that the array owns (ext.c frees it).
func fillTemplate(t *C.ub_template, m dlpack.Managed) bool {
	mt := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
	if v, _ := dlabi.NegotiateVersion(&dlpack.Version{Major: 2}, dlpack.ProducerVersion); v != mt.Version {
		return false // minor would not answer a newer major as Go does
	}
	src := mt.DLTensor
	ndim := int(src.Ndim)
	var dims *C.int64_t
	if ndim > 0 {
		dims = (*C.int64_t)(C.malloc(C.size_t(2 * ndim * 8)))
		if dims == nil {
			return false
		}
		d := unsafe.Slice((*int64)(unsafe.Pointer(dims)), 2*ndim)
		copy(d[:ndim], unsafe.Slice((*int64)(cmem.Ptr(src.Shape)), ndim))
		copy(d[ndim:], unsafe.Slice((*int64)(cmem.Ptr(src.Strides)), ndim))
	}
	t.tensor = C.ub_dl_tensor{
		data:        cmem.Ptr(src.Data),
		device:      C.ub_dl_device{device_type: C.int32_t(src.Device.Type), device_id: C.int32_t(src.Device.ID)},
		ndim:        C.int32_t(ndim),
		dtype:       C.ub_dl_dtype{code: C.uint8_t(src.DType.Code), bits: C.uint8_t(src.DType.Bits), lanes: C.uint16_t(src.DType.Lanes)},
		shape:       dims,
		byte_offset: C.uint64_t(src.ByteOffset),
	}
	if ndim > 0 {
		t.tensor.strides = (*C.int64_t)(unsafe.Add(unsafe.Pointer(dims), ndim*8))
	}
	t.flags = C.uint64_t(mt.Flags)
	t.minor = C.uint32_t(mt.Version.Minor)
	for k := range t.minor_for {
		v, _ := dlabi.NegotiateVersion(&dlpack.Version{Major: 1, Minor: uint32(k)}, dlpack.ProducerVersion)
		t.minor_for[k] = C.uint32_t(v.Minor)
	}
	return true
}

// ub_exchange_refuse raises, for an array whose template is
// UB_TEMPLATE_NONE, the error Go's export gives it, and returns -1.
//
//export ub_exchange_refuse
func ub_exchange_refuse(h C.int64_t) C.int {
	held("ub_exchange_refuse", func(g *pybridge.GIL) (struct{}, error) {
		e := get(h)
		if e == nil {
			return struct{}{}, usm.ErrValue
		}
		m, err := br.Export(g, e.arr, dlpack.ExportOptions{MaxVersion: &dlpack.ProducerVersion, NoSync: true})
		if err == nil {
			m.Delete()
			err = errkind.New(errkind.Buffer, "usmbridge", "the array cannot be exported (internal error: its export template is missing)")
		}
		return struct{}{}, err
	})
	return -1
}

// ub_from_managed imports a versioned tensor, whose ownership it takes
// (managed_tensor_to_py_object_no_sync steals it): the new array's handle,
// or 0 with the exception set and the tensor's deleter called.
//
//export ub_from_managed
func ub_from_managed(p C.uintptr_t, dev *C.ub_dl_device) C.int64_t {
	return newArray("ub_from_managed", dev, func(g *pybridge.GIL) (*entry, error) {
		t, err := br.ImportManaged(g, dlpack.UnsafeManaged(uintptr(p), true))
		if err != nil {
			return nil, err
		}
		return &entry{arr: &t.Array}, nil
	})
}

// ub_work_stream is current_work_stream: 0 with *out set, or -1 with the
// exception set (the caller holds the GIL).
//
//export ub_work_stream
func ub_work_stream(devType, devID C.int32_t, out *C.uintptr_t) C.int {
	ok := held("ub_work_stream", func(g *pybridge.GIL) (bool, error) {
		if out == nil {
			return false, errkind.New(errkind.Value, "usmbridge", "current_work_stream: out_current_stream is NULL")
		}
		s, err := br.CurrentWorkStream(g, dlabi.Device{Type: dlabi.DeviceType(devType), ID: int32(devID)})
		if err != nil {
			return false, err
		}
		*out = C.uintptr_t(s)
		return true, nil
	})
	if !ok {
		return -1
	}
	return 0
}

// ub_alloc is managed_tensor_allocator: a new C-contiguous tensor with the
// prototype's dtype, ndim, shape and device (kDLCPU: the host backend;
// kDLOneAPI: device USM through dpctl), exported by dlpack.Export. It
// returns 0 with *out set, or -1 with *kind (the Python exception's name)
// and *msg set (malloc'd; the caller frees them) and no Python exception
// left pending. The caller holds the GIL.
//
//export ub_alloc
func ub_alloc(proto *C.ub_dl_tensor, out **C.ub_dl_managed_versioned, kind, msg **C.char) (r C.int) {
	r = -1
	var err error
	defer func() {
		if err != nil {
			*kind, *msg = C.CString(usm.PythonException(err)), C.CString(err.Error())
		}
	}()
	defer boundary.Recover("ub_alloc", &err)
	boundary.Check("ub_alloc")
	err = pyHeld(func(g *pybridge.GIL) error {
		if proto == nil || out == nil {
			return errkind.New(errkind.Value, "managed_tensor_allocator", "prototype or out is NULL")
		}
		p := (*dlabi.Tensor)(unsafe.Pointer(proto))
		var shape []int64
		if p.Ndim < 0 || p.Ndim > dlpack.MaxNdim || (p.Ndim > 0 && p.Shape == 0) {
			return errkind.New(errkind.Value, "managed_tensor_allocator", "bad ndim or NULL shape")
		}
		if p.Ndim > 0 {
			shape = append(shape, unsafe.Slice((*int64)(cmem.Ptr(p.Shape)), int(p.Ndim))...)
		}
		m, err := br.AllocTensor(g, p.Device, p.DType, shape)
		if err != nil {
			return err
		}
		*out = (*C.ub_dl_managed_versioned)(cmem.Ptr(m.Pointer()))
		return nil
	})
	if err == nil {
		r = 0
	}
	return r
}

// ub_ledger_addr returns the export ledger (internal/exportledger): C's export counters and block
// states are Go's.
//
//export ub_ledger_addr
func ub_ledger_addr() *C.ub_ledger {
	return (*C.ub_ledger)(cmem.Ptr(exportledger.Addr()))
}

// ub_blocks fills out[:n] with C memory blocks of size bytes for the fast
// path's exports (exportledger.ReplayBlocks: Go's allocator, stamped free at
// magicOffset), and returns how many it filled. C keeps them for reuse.
//
//export ub_blocks
func ub_blocks(out *C.uintptr_t, n C.int, size, magicOffset C.size_t) (filled C.int) {
	defer boundary.Recover("ub_blocks", nil)
	boundary.Check("ub_blocks")
	if out == nil || n <= 0 {
		return 0
	}
	dst := make([]uintptr, int(n))
	k := exportledger.ReplayBlocks(dst, uintptr(size), uintptr(magicOffset))
	copy(unsafe.Slice((*uintptr)(unsafe.Pointer(out)), int(n)), dst[:k])
	return C.int(k)
}

// ub_wait_plan_fill fills p with how C waits on the array's queue as
// usm.Array.Wait does (ext.h, ub_wait_plan) and returns UB_TEMPLATE_READY:
// for an array without a queue (ref 0) or with a dpctl queue. Any other
// queue (or a panic, counted and logged) gives UB_TEMPLATE_NONE: C then
// asks Go to wait each time (ub_wait, or ub_dlpack).
//
//export ub_wait_plan_fill
func ub_wait_plan_fill(h C.int64_t, p *C.ub_wait_plan) (state C.int32_t) {
	state = C.UB_TEMPLATE_NONE
	defer boundary.Recover("ub_wait_plan_fill", nil)
	boundary.Check("ub_wait_plan_fill")
	e := get(h)
	if e == nil {
		return C.UB_TEMPLATE_NONE
	}
	w, ok := br.WaitPlan(e.arr.Queue)
	if !ok {
		return C.UB_TEMPLATE_NONE
	}
	*p = C.ub_wait_plan{ref: C.uintptr_t(w.Ref), barrier: C.uintptr_t(w.Barrier), event_wait: C.uintptr_t(w.EventWait), event_delete: C.uintptr_t(w.EventDelete)}
	return C.UB_TEMPLATE_READY
}

// ub_stats returns Go's live counts for the leak tests, and the number of
// Go panics recovered at boundaries.
//
//export ub_stats
func ub_stats() C.uintptr_t {
	return call("ub_stats", func(g *pybridge.GIL) (pybridge.Object, error) {
		finishCReleases(0) // the counts include the releases C made
		s := exportledger.Read()
		// C's pending arrays (ext.h, "Host imports C replays") are imports
		// Go has not seen, and their releases C's.
		return br.FromGo(g, map[string]any{"live_exports": s.LiveExports,
			"live_imports":  s.LiveImports + int64(C.ub_host_pending),
			"stray_deletes": s.StrayDeletes, "handles": counts.live, "panics": s.Panics,
			"exchange_exports": exportledger.ExchangeExports(), "exchange_imports": br.ExchangeImports(),
			"gated_callbacks": boundary.Gated(), "dlpack_calls_into_go": counts.dlpackCalls,
			"c_releases": counts.cReleases + int64(C.ub_host_pending_releases),
			"c_imports":  int64(C.ub_host_replays), "go_heap_allocs": heapAllocs()})
	})
}

// heapAllocs is the number of Go heap objects allocated so far in this
// process (runtime/metrics, without stopping the world as ReadMemStats
// would): tests bound what a path allocates by its growth.
func heapAllocs() int64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}

// ub_enter does nothing: it is what a call into Go costs before any work
// (usmbridge._enter_go, for benchmarks).
//
//export ub_enter
func ub_enter() {}

// ub_inject_panic makes the next call of the boundary named where panic
// (tests: each boundary must turn it into an exception or a count).
//
//export ub_inject_panic
func ub_inject_panic(where *C.char) {
	boundary.InjectPanic(C.GoString(where))
}
