package pyext

// The Array's Go half: what its protocols leave to Go (getset.c, dlpack.c,
// suai.c, buffer.c): exports with a stream, a copy or another device, the
// SUAI, the queue, the dtype's name, the buffer of memory with a queue;
// views of Go state (.T), and the release of Go state with the Array.

// #include "ubx.h"
// int ubx_fill_buffer(void *arr, void *view, int flags, const char *format, void **exc);
import "C"

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

//export ubx_go_view_state
func ubx_go_view_state(h C.int64_t, dims *C.int64_t, n C.int32_t) (out C.int64_t) {
	guard("Array view", func() error {
		st := handles.get(int64(h))
		if st == nil {
			return errkind.New(errkind.Value, "Array view", "the array's Go state is gone")
		}
		// The view's bytes are the array's: its queue and backend, no
		// owner of its own (the view holds the array).
		arr := *st.arr
		d := unsafe.Slice((*int64)(unsafe.Pointer(dims)), 2*int(n))
		arr.Shape = append([]int64(nil), d[:n]...)
		arr.Strides = append([]int64(nil), d[n:]...)
		arr.Offset = st.arr.Offset
		arr.Owner = nil
		_, nh, err := adopt(&arr, true)
		out = C.int64_t(nh)
		return err
	})
	return out
}

//export ubx_go_release
func ubx_go_release(h C.int64_t) {
	goCalls.Add(1)
	defer boundary.Recover("Array release", nil)
	boundary.Check("Array release")
	if st := handles.remove(int64(h)); st != nil {
		st.release()
	}
}

// arrayOf is the Go array of a C Array (its view v, the object self) for
// an export or a property: its Go state's array, or an array over the
// host memory C imported, with an Owner that holds self, which keeps
// everything the array needs alive (its base, its Go state). The caller
// calls release when done (an export retained the Owner for itself).
func arrayOf(g *pybridge.GIL, v *view, self unsafe.Pointer) (arr *usm.Array, release func(), err error) {
	arr = new(usm.Array)
	if st := handles.get(v.handle); v.handle != 0 && st != nil {
		*arr = *st.arr
	} else if err := fillArray(arr, v); err != nil {
		return nil, nil, err
	}
	owner := g.Hold(pybridge.UnsafeObject(uintptr(self)))
	arr.Owner = owner
	return arr, owner.Release, nil
}

//export ubx_go_dlpack
func ubx_go_dlpack(v *C.ubx_view, self, stream, maxVersion, dlDevice, copyArg unsafe.Pointer) (out unsafe.Pointer) {
	dlpackCalls.Add(1)
	guard("__dlpack__", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			arr, release, err := arrayOf(g, (*view)(unsafe.Pointer(v)), self)
			if err != nil {
				return err
			}
			defer release()
			obj := func(p unsafe.Pointer) pybridge.Object { return pybridge.UnsafeObject(uintptr(p)) }
			opts, err := g.DLPackOptions(arr.DLDevice, obj(stream), obj(maxVersion), obj(dlDevice), obj(copyArg))
			if err != nil {
				return err
			}
			c, err := g.ToDLPack(arr, opts)
			out = cmem.Ptr(c.Ptr())
			return err
		})
	})
	return out
}

//export ubx_go_suai
func ubx_go_suai(v *C.ubx_view, self, syclobj unsafe.Pointer) (out unsafe.Pointer) {
	guard("__sycl_usm_array_interface__", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			arr, release, err := arrayOf(g, (*view)(unsafe.Pointer(v)), self)
			if err != nil {
				return err
			}
			defer release()
			// syclobj is the queue C keeps for the array, if any.
			o, err := g.SUAI(arr, pybridge.UnsafeObject(uintptr(syclobj)))
			out = cmem.Ptr(o.Ptr())
			return err
		})
	})
	return out
}

//export ubx_go_wait
func ubx_go_wait(h C.int64_t) C.int {
	return status(guard("Array wait", func() error {
		st := handles.get(int64(h))
		if st == nil {
			return errkind.New(errkind.Value, "Array wait", "the array's Go state is gone")
		}
		return waitReleased(st.arr)
	}))
}

// waitReleased waits for arr's pending work and queue with the GIL
// released, for a caller that holds it: the work may follow dpnp's host
// tasks, which take the GIL to let their arguments go (RATIONALE.md,
// "Launches that return before their kernel ends").
func waitReleased(arr *usm.Array) error {
	ts := cgoHalf{}.saveThread()
	defer cgoHalf{}.restoreThread(ts)
	return arr.Wait()
}

//export ubx_go_sycl_queue
func ubx_go_sycl_queue(v *C.ubx_view, syclobj unsafe.Pointer, store *C.int) (out unsafe.Pointer) {
	guard("Array.sycl_queue", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			so := pybridge.UnsafeObject(uintptr(syclobj))
			if g.IsSyclQueue(so) {
				q, _ := g.FromGo(so) // an Object: a new reference to it
				out = cmem.Ptr(q.Ptr())
				return nil
			}
			vv := (*view)(unsafe.Pointer(v))
			if st := handles.get(vv.handle); vv.handle != 0 && st != nil {
				q, err := g.QueueObject(st.arr.Queue)
				if err != nil {
					return err
				}
				if q.Ptr() != 0 {
					if syclobj == nil {
						*store = 1 // the SUAI names the queue sycl_queue gives
					}
					out = cmem.Ptr(q.Ptr())
					return nil
				}
			}
			return errkind.New(errkind.Attribute, "sycl_queue", "the array is not on a dpctl queue (it lives on "+vv.t.Device.String()+")")
		})
	})
	return out
}

//export ubx_go_typestr
func ubx_go_typestr(v *C.ubx_view) (out unsafe.Pointer) {
	guard("Array.dtype", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			o, err := g.FromGo(dtypeString((*view)(unsafe.Pointer(v)).t.DType))
			out = cmem.Ptr(o.Ptr())
			return err
		})
	})
	return out
}

// dtypeString names an element type for Python: its typestr where SUAI has
// one (NumPy reads it: numpy.dtype("<f4")), else the DLPack dtype's name
// ("bfloat16", which ml_dtypes registers with NumPy).
func dtypeString(dt dlabi.DataType) string {
	et, err := dtype.FromDataType(dt)
	if err != nil {
		return dtypeName(dt)
	}
	if ts, err := et.Typestr(); err == nil {
		return ts.String()
	}
	return et.String()
}

// bufferFormats holds the buffer format of each dtype, in C memory, made
// once: struct-module codes of the element types in native order.
var bufferFormats = map[dlabi.DataType]*C.char{}

func bufferFormat(dt dlabi.DataType) *C.char {
	if f, ok := bufferFormats[dt]; ok {
		return f
	}
	var s string
	switch dt {
	case dlabi.DataType{Code: dlabi.Bool, Bits: 8, Lanes: 1}:
		s = "?"
	case dlabi.DataType{Code: dlabi.Float, Bits: 16, Lanes: 1}:
		s = "e"
	case dlabi.DataType{Code: dlabi.Float, Bits: 32, Lanes: 1}:
		s = "f"
	case dlabi.DataType{Code: dlabi.Float, Bits: 64, Lanes: 1}:
		s = "d"
	case dlabi.DataType{Code: dlabi.Complex, Bits: 64, Lanes: 1}:
		s = "Zf"
	case dlabi.DataType{Code: dlabi.Complex, Bits: 128, Lanes: 1}:
		s = "Zd"
	default:
		if dt.Lanes == 1 && (dt.Code == dlabi.Int || dt.Code == dlabi.UInt) {
			i := map[uint8]int{8: 0, 16: 1, 32: 2, 64: 3}
			if k, ok := i[dt.Bits]; ok {
				s = string("bhiq"[k])
				if dt.Code == dlabi.UInt {
					s = string("BHIQ"[k])
				}
			}
		}
	}
	var f *C.char
	if s != "" {
		f = C.CString(s)
	}
	bufferFormats[dt] = f
	return f
}

//export ubx_go_buffer
func ubx_go_buffer(v *C.ubx_view, self, pyview unsafe.Pointer, flags C.int) C.int {
	return status(guard("Array buffer", func() error {
		vv := (*view)(unsafe.Pointer(v))
		format := bufferFormat(vv.t.DType)
		if format == nil {
			return errkind.New(errkind.Buffer, "buffer", "the array's element type, DLPack dtype "+dtypeName(vv.t.DType)+", has no buffer format; exchange it through DLPack")
		}
		if vv.handle != 0 {
			st := handles.get(vv.handle)
			if st == nil {
				return errkind.New(errkind.Buffer, "buffer", "the array is gone")
			}
			if st.arr.DLDevice.Type == dlabi.OneAPI && !st.arr.Memory.Kind.HostAccessible() {
				return errkind.New(errkind.Buffer, "buffer", st.arr.Memory.Kind.String()+" USM is not host-accessible: use numpy.from_dlpack(a, device=\"cpu\") to copy it to the host")
			}
			if err := waitReleased(st.arr); err != nil {
				return err
			}
		}
		var exc unsafe.Pointer
		if C.ubx_fill_buffer(self, pyview, flags, format, &exc) != 0 {
			return errorOf(exc)
		}
		return nil
	}))
}
