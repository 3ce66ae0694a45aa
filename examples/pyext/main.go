// Command pyext is the Go half of the usmbridge Python package: a c-shared
// library (go build -buildmode=c-shared) that the package loads with
// ctypes.PyDLL. Every exported function is called with the GIL held and
// takes and returns PyObject* (NULL with an exception set on error).
//
//	go build -buildmode=c-shared -o usmbridge/libusmbridge.so .
package main

// #include <stdint.h>
import "C"

import (
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

func main() {}

type entry struct {
	arr     *usm.Array
	syclobj *pybridge.Ref // the producer's SyclQueue/SyclContext, if any
}

var (
	py      *pybridge.Python
	mu      sync.Mutex
	handles = map[int64]*entry{}
	next    int64
)

func put(e *entry) int64 {
	mu.Lock()
	defer mu.Unlock()
	next++
	handles[next] = e
	return next
}

func get(g *pybridge.GIL, h C.uintptr_t) (*entry, error) {
	n, err := g.Int(pybridge.UnsafeObject(uintptr(h)))
	if err != nil {
		return nil, err
	}
	mu.Lock()
	e := handles[n]
	mu.Unlock()
	if e == nil {
		return nil, usm.ErrValue
	}
	return e, nil
}

// call runs fn with the GIL, which ctypes.PyDLL holds for the whole call,
// and turns its result into what ctypes expects: a new reference, or NULL
// with the Python exception set.
func call(fn func(g *pybridge.GIL) (pybridge.Object, error)) C.uintptr_t {
	var r pybridge.Object
	_ = py.Held(func(g *pybridge.GIL) error {
		o, err := fn(g)
		if err != nil {
			g.Raise(err)
			return nil
		}
		r = o
		return nil
	})
	return C.uintptr_t(r.Ptr())
}

//export ub_init
func ub_init() C.uintptr_t {
	p, err := pybridge.Attach()
	if err != nil {
		return 0 // no interpreter to raise in
	}
	py = p
	return call(func(g *pybridge.GIL) (pybridge.Object, error) { return g.FromGo(py.Version()) })
}

//export ub_asarray
func ub_asarray(obj C.uintptr_t) C.uintptr_t {
	return call(func(g *pybridge.GIL) (pybridge.Object, error) {
		arr, so, err := g.AsArrayKeepSyclobj(pybridge.UnsafeObject(uintptr(obj)), nil)
		if err != nil {
			return pybridge.Object{}, err
		}
		return newArray(g, &entry{arr: arr, syclobj: so})
	})
}

//export ub_from_dlpack
func ub_from_dlpack(x, device, copyArg C.uintptr_t) C.uintptr_t {
	return call(func(g *pybridge.GIL) (pybridge.Object, error) {
		o, err := g.ParseDLPackArgs(pybridge.Object{}, pybridge.Object{}, pybridge.UnsafeObject(uintptr(device)), pybridge.UnsafeObject(uintptr(copyArg)))
		if err != nil {
			return pybridge.Object{}, err
		}
		t, err := g.FromDLPack(pybridge.UnsafeObject(uintptr(x)), pybridge.FromDLPackOptions{Device: o.Device, Copy: o.Copy})
		if err != nil {
			return pybridge.Object{}, err
		}
		return newArray(g, &entry{arr: &t.Array})
	})
}

//export ub_release
func ub_release(h C.uintptr_t) C.uintptr_t {
	return call(func(g *pybridge.GIL) (pybridge.Object, error) {
		n, err := g.Int(pybridge.UnsafeObject(uintptr(h)))
		if err != nil {
			return pybridge.Object{}, err
		}
		mu.Lock()
		e := handles[n]
		delete(handles, n)
		mu.Unlock()
		if e != nil {
			if e.arr.Owner != nil {
				e.arr.Owner.Release()
			}
			if e.syclobj != nil {
				e.syclobj.Release()
			}
		}
		return g.None(), nil
	})
}

// ub_info returns (shape, typestr, strides|None, offset, usm_type,
// (dl_device_type, dl_device_id), data_pointer, read_only).
//
//export ub_info
func ub_info(h C.uintptr_t) C.uintptr_t {
	return call(func(g *pybridge.GIL) (pybridge.Object, error) {
		e, err := get(g, h)
		if err != nil {
			return pybridge.Object{}, err
		}
		return g.FromGo(info(e.arr))
	})
}

// info is what the Python Array's properties read: shape, typestr,
// strides, offset, usm_type, DLPack device, data pointer, read-only.
func info(a *usm.Array) []any {
	var strides any
	if a.Strides != nil {
		strides = a.Strides
	}
	return []any{a.Shape, a.Typestr.String(), strides, a.Offset, a.Memory.Kind.String(),
		[]any{int64(a.DLDevice.Type), int64(a.DLDevice.ID)}, uint64(a.Data), a.ReadOnly}
}

// newArray registers e and returns its handle; the Python Array fetches
// its properties (ub_info) only when one is first read.
func newArray(g *pybridge.GIL, e *entry) (pybridge.Object, error) {
	return g.FromGo(put(e))
}

//export ub_suai
func ub_suai(h C.uintptr_t) C.uintptr_t {
	return call(func(g *pybridge.GIL) (pybridge.Object, error) {
		e, err := get(g, h)
		if err != nil {
			return pybridge.Object{}, err
		}
		a := e.arr
		if a.DLDevice.Type != dlabi.OneAPI {
			return pybridge.Object{}, &usmErr{"__sycl_usm_array_interface__: the array is not USM (it lives on " + a.DLDevice.String() + ")"}
		}
		m, err := a.SUAI()
		if err != nil {
			return pybridge.Object{}, err
		}
		if e.syclobj != nil {
			m["syclobj"] = e.syclobj.Object()
		} else {
			// dpctl's convention: the device's position in get_devices().
			m["syclobj"] = strconv.Itoa(int(a.DLDevice.ID))
		}
		return g.FromGo(m)
	})
}

type usmErr struct{ s string }

func (e *usmErr) Error() string        { return e.s }
func (e *usmErr) Is(target error) bool { return target == usm.ErrAttribute }

//export ub_dlpack
func ub_dlpack(h, stream, maxVersion, dlDevice, copyArg C.uintptr_t) C.uintptr_t {
	return call(func(g *pybridge.GIL) (pybridge.Object, error) {
		e, err := get(g, h)
		if err != nil {
			return pybridge.Object{}, err
		}
		o, err := g.ParseDLPackArgs(pybridge.UnsafeObject(uintptr(stream)), pybridge.UnsafeObject(uintptr(maxVersion)),
			pybridge.UnsafeObject(uintptr(dlDevice)), pybridge.UnsafeObject(uintptr(copyArg)))
		if err != nil {
			return pybridge.Object{}, err
		}
		return g.ToDLPack(e.arr, o)
	})
}

//export ub_dlpack_device
func ub_dlpack_device(h C.uintptr_t) C.uintptr_t {
	return call(func(g *pybridge.GIL) (pybridge.Object, error) {
		e, err := get(g, h)
		if err != nil {
			return pybridge.Object{}, err
		}
		return g.FromGo([]any{int64(e.arr.DLDevice.Type), int64(e.arr.DLDevice.ID)})
	})
}

//export ub_stats
func ub_stats() C.uintptr_t {
	return call(func(g *pybridge.GIL) (pybridge.Object, error) {
		s := dlpack.ReadStats()
		mu.Lock()
		n := len(handles)
		mu.Unlock()
		return g.FromGo(map[string]any{"live_exports": s.LiveExports, "live_imports": s.LiveImports,
			"stray_deletes": s.StrayDeletes, "handles": n})
	})
}
