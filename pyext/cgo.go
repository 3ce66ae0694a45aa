package pyext

// The Go functions the C half (module.c) calls, each with the GIL held,
// and what Go calls of it. Only an extension module (built with cgo and
// UBX_MODULE) calls them; -O2 because a build that sets CGO_CFLAGS (Python's
// include directory) replaces cgo's default "-g -O2", and module.c's fast
// paths would otherwise be compiled unoptimised. A call of an undeclared
// function is an error, not the warning of older compilers: it would be
// compiled with the wrong types and crash at run time.

// #cgo CFLAGS: -O2 -Werror=implicit-function-declaration
// #include <stdlib.h>
// #include "ubx.h"
// void *ubx_hold_array(void *call, int32_t i, void **exc);
// void ubx_hold_leak(void *call, int32_t i);
// void ubx_set_error(void *exc);
// void *ubx_save_thread(void);
// void ubx_restore_thread(void *ts);
// int ubx_fill_buffer(void *arr, void *view, int flags, const char *format, void **exc);
// long ubx_fork_skips(void);
import "C"

import (
	"errors"
	"strconv"
	"unsafe"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// cgoHalf is the C half as a call sees it.
type cgoHalf struct{}

func (cgoHalf) holdArray(call uintptr, i int) (uintptr, error) {
	var exc unsafe.Pointer
	p := uintptr(C.ubx_hold_array(cmem.Ptr(call), C.int32_t(i), &exc))
	if p == 0 {
		return 0, errorOf(exc)
	}
	return p, nil
}

func (cgoHalf) leakHold(call uintptr, i int) { C.ubx_hold_leak(cmem.Ptr(call), C.int32_t(i)) }

func (cgoHalf) saveThread() uintptr      { return uintptr(C.ubx_save_thread()) }
func (cgoHalf) restoreThread(ts uintptr) { C.ubx_restore_thread(cmem.Ptr(ts)) }

func (cgoHalf) cString(s string) (uintptr, int64) {
	p := C.malloc(C.size_t(len(s) + 1))
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	*(*byte)(unsafe.Add(p, len(s))) = 0
	return uintptr(p), int64(len(s))
}

// errorOf is the error of an exception C took (a new reference).
func errorOf(exc unsafe.Pointer) error {
	var err error
	_ = ext.py.DoHeld(func(g *pybridge.GIL) error { err = g.ErrorOf(pybridge.UnsafeObject(uintptr(exc))); return nil })
	return err
}

// raise hands C err's Python exception to raise once Go has returned (a
// Python exception pending when Do ends would be taken as Do's own error).
// The caller returns failure to C.
func raise(err error) {
	_ = ext.py.DoHeld(func(g *pybridge.GIL) error {
		C.ubx_set_error(cmem.Ptr(g.ExceptionOf(err).Ptr()))
		return nil
	})
}

// guard runs the body of an export: a panic is recovered, counted and
// logged (boundary), and raised as RuntimeError; an error is raised. It
// reports whether the body succeeded.
func guard(where string, fn func() error) (ok bool) {
	goCalls.Add(1)
	var err error
	func() {
		defer boundary.Recover(where, &err)
		boundary.Check(where)
		err = fn()
	}()
	if err != nil {
		raise(err)
		return false
	}
	return true
}

func status(ok bool) C.int {
	if ok {
		return 0
	}
	return -1
}

//export ubx_go_define
func ubx_go_define(name *C.char, out **C.ubx_module_def) (msg *C.char) {
	var err error
	defer func() {
		if err != nil {
			msg = C.CString(err.Error())
		}
	}()
	defer boundary.Recover("module definition", &err)
	// First: every Go callback C may call from now on (DLPack deleters,
	// capsule destructors) goes through C's fork gate.
	boundary.SetGate(func(goFn uintptr) uintptr { return uintptr(C.ubx_gate(C.uintptr_t(goFn))) })
	n := C.GoString(name)
	if registered.define == nil || registered.name != n {
		err = errors.New("module " + n + " was not built from a Go package by usmbridge.build (no pyext.Main for it)")
		return nil
	}
	py, e := pybridge.Attach()
	if e != nil {
		err = errors.New("cannot attach to the running Python: " + errkind.Message(e))
		return nil
	}
	m := &Module{name: n}
	if e := registered.define(m); e != nil {
		err = errors.New(n + ": " + errkind.Message(e))
		return nil
	}
	if e := m.err(); e != nil {
		err = errors.New(n + ": " + errkind.Message(e))
		return nil
	}
	addStub(m)
	ext.mod, ext.py = m, py
	fillTables()
	*out = (*C.ubx_module_def)(cmem.Ptr(cDefinition(m)))
	return nil
}

// fillTables writes the rules C reads (ubx.h): the element size of every
// DLPack dtype Go accepts, the top of user space, and each dtype's buffer
// format.
func fillTables() {
	sizes := (*[C.UBX_DTYPE_CODES][C.UBX_DTYPE_BYTES]C.uint8_t)(unsafe.Pointer(&C.ubx_dtype_size))
	for code := range sizes {
		for b := range sizes[code] {
			dt := dlabi.DataType{Code: dlabi.TypeCode(code), Bits: uint8(b * 8), Lanes: 1}
			if ts, err := dtype.FromDataType(dt); err == nil && b > 0 {
				sizes[code][b] = C.uint8_t(ts.Size())
			}
		}
	}
	C.ubx_max_user_address = C.uint64_t(dlabi.MaxUserAddress)
	keys := (*[C.UBX_SUAI_KEYS]*C.char)(unsafe.Pointer(&C.ubx_suai_keys))
	for i, k := range pybridge.SUAIKeys() {
		keys[i] = C.CString(k) // lives as long as the process
	}
	formats := (*[C.UBX_DTYPE_CODES][C.UBX_DTYPE_BYTES]*C.char)(unsafe.Pointer(&C.ubx_buffer_format))
	for code := range formats {
		for b := 1; b < len(formats[code]); b++ {
			formats[code][b] = bufferFormat(dlabi.DataType{Code: dlabi.TypeCode(code), Bits: uint8(b * 8), Lanes: 1})
		}
	}
}

// cDefinition writes m as a ubx_module_def in C memory that lives as long
// as the process.
func cDefinition(m *Module) uintptr {
	str := func(s string) uintptr { return uintptr(unsafe.Pointer(C.CString(s))) }
	def := (*cModule)(C.calloc(1, C.size_t(unsafe.Sizeof(cModule{}))))
	def.doc = str(m.doc)
	arrayName, forkName := m.arrayName, m.forkErrorName
	if arrayName == "" {
		arrayName, forkName = m.name+".Array", m.name+".ForkError"
	}
	def.arrayName, def.forkErrorName = str(arrayName), str(forkName)
	top := m.moduleFuncs()
	funcs := cFuncs(len(top))
	for i, f := range top {
		writeFunc(&funcs[i], f)
	}
	if len(funcs) > 0 {
		def.funcs = uintptr(unsafe.Pointer(&funcs[0]))
	}
	def.nfuncs = int32(len(top))
	cClasses(m, def)
	for k := range def.minorFor {
		v, _ := dlabi.NegotiateVersion(&dlpack.Version{Major: 1, Minor: uint32(k)}, dlpack.ProducerVersion)
		def.minorFor[k] = v.Minor
	}
	v, _ := dlabi.NegotiateVersion(&dlpack.Version{Major: 2}, dlpack.ProducerVersion)
	def.minorNewer, def.major = v.Minor, v.Major
	def.maxMajor, def.maxMinor = dlpack.ProducerVersion.Major, dlpack.ProducerVersion.Minor
	return uintptr(unsafe.Pointer(def))
}

//export ubx_go_call
func ubx_go_call(index C.int32_t, vals *C.ubx_value, n C.int32_t, res *C.ubx_result, call unsafe.Pointer) C.int {
	functionCalls++ // with the GIL
	f := ext.mod.funcs[index]
	c := getFrame()
	c.fn, c.c, c.py, c.call = f, cgoHalf{}, ext.py, uintptr(call)
	c.vals = unsafe.Slice((*value)(unsafe.Pointer(vals)), int(n))
	c.begin(int(n))
	r := (*result)(unsafe.Pointer(res))
	var err error
	func() {
		defer boundary.Recover(f.name, &err)
		boundary.Check(f.name)
		err = f.call(c, r)
	}()
	c.end()
	// What the call's goroutines released without the GIL (kept views,
	// Python objects) goes now, as the call returns, rather than when the
	// releaser gets the GIL.
	ext.py.DropReleased()
	if err != nil {
		raise(err)
		return -1
	}
	return 0
}

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
		return st.arr.Wait()
	}))
}

//export ubx_go_sycl_queue
func ubx_go_sycl_queue(v *C.ubx_view, syclobj unsafe.Pointer, store *C.int) (out unsafe.Pointer) {
	guard("Array.sycl_queue", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			so := pybridge.UnsafeObject(uintptr(syclobj))
			if g.IsSyclQueue(so) {
				g.IncRef(so)
				out = cmem.Ptr(so.Ptr())
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
			if err := st.arr.Wait(); err != nil {
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

//export ubx_go_exchange_refuse
func ubx_go_exchange_refuse(v *C.ubx_view, self unsafe.Pointer) C.int {
	guard("exchange refuse", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			arr, release, err := arrayOf(g, (*view)(unsafe.Pointer(v)), self)
			if err != nil {
				return err
			}
			defer release()
			// The view C copies was refused (fillView): the same refusal,
			// which an export of the array without a stream meets first.
			if _, err := pybridge.ExportView(arr); err != nil {
				return err
			}
			return errkind.New(errkind.Buffer, "DLPack exchange API", "the array cannot be exported without Go")
		})
	})
	return -1
}

//export ubx_go_exchange_wait
func ubx_go_exchange_wait(h C.int64_t) C.int {
	return status(guard("exchange wait", func() error {
		st := handles.get(int64(h))
		if st == nil || !needsWait(st.arr.Queue) {
			return nil
		}
		return st.arr.Wait()
	}))
}

//export ubx_go_import_managed
func ubx_go_import_managed(m *C.ub_dl_managed_versioned, res *C.ubx_result) C.int {
	return status(guard("managed_tensor_to_py_object_no_sync", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			mt := (*dlabi.ManagedTensorVersioned)(unsafe.Pointer(m))
			var reg *usm.Registry
			if mt.DLTensor.Device.Type == dlabi.OneAPI {
				d, err := ext.py.Dpctl()
				if err != nil {
					dlpack.UnsafeManaged(uintptr(unsafe.Pointer(m)), true).Delete()
					return err
				}
				reg = d.Registry()
			}
			t, err := dlpack.Import(dlpack.UnsafeManaged(uintptr(unsafe.Pointer(m)), true), dlpack.ImportOptions{Registry: reg})
			if err != nil {
				return err // Import deleted it
			}
			return newArrayResult(&t.Array, true, (*result)(unsafe.Pointer(res)))
		})
	}))
}

//export ubx_go_work_stream
func ubx_go_work_stream(devType, devID C.int32_t, out *unsafe.Pointer) C.int {
	return status(guard("current_work_stream", func() error {
		if out == nil {
			return errkind.New(errkind.Value, "current_work_stream", "out_current_stream is NULL")
		}
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			q, err := g.WorkQueue(dlabi.Device{Type: dlabi.DeviceType(devType), ID: int32(devID)})
			if err != nil {
				return err
			}
			*out = nil
			if r, ok := q.(interface{ Ref() uintptr }); ok {
				*out = cmem.Ptr(r.Ref())
			}
			return nil
		})
	}))
}

//export ubx_go_alloc
func ubx_go_alloc(proto *C.ub_dl_tensor, out **C.ub_dl_managed_versioned, kind, msg **C.char) (r C.int) {
	var err error
	defer func() {
		if err != nil {
			*kind, *msg = C.CString(usm.PythonException(err)), C.CString(errkind.Message(err))
			r = -1
		}
	}()
	defer boundary.Recover("managed_tensor_allocator", &err)
	boundary.Check("managed_tensor_allocator")
	if proto == nil || out == nil {
		err = errkind.New(errkind.Value, "managed_tensor_allocator", "prototype or out is NULL")
		return -1
	}
	p := (*dlabi.Tensor)(unsafe.Pointer(proto))
	if p.Ndim < 0 || p.Ndim > maxNdim || (p.Ndim > 0 && p.Shape == 0) {
		err = errkind.New(errkind.Value, "managed_tensor_allocator", "the prototype's ndim is outside 0.."+strconv.Itoa(maxNdim)+" or its shape is NULL")
		return -1
	}
	var shape []int64
	if p.Ndim > 0 {
		shape = append(shape, unsafe.Slice((*int64)(cmem.Ptr(p.Shape)), int(p.Ndim))...)
	}
	var m dlpack.Managed
	m, err = allocTensor(p.Device, p.DType, shape)
	if err != nil {
		return -1
	}
	*out = (*C.ub_dl_managed_versioned)(cmem.Ptr(m.Pointer()))
	return 0
}

// allocTensor is the exchange API's managed_tensor_allocator: a new
// C-contiguous array of the dtype and shape on dev (kDLCPU: the host
// backend; kDLOneAPI: device USM through dpctl), exported as a versioned
// tensor that owns the memory.
func allocTensor(dev dlabi.Device, dt dlabi.DataType, shape []int64) (dlpack.Managed, error) {
	ts, err := dtype.FromDataType(dt)
	if err != nil {
		return dlpack.Managed{}, errkind.Wrap(errkind.Buffer, "managed_tensor_allocator", "unsupported dtype", err)
	}
	var al usm.Allocator
	var reg *usm.Registry
	local, kind := 0, usm.KindHost
	switch dev.Type {
	case dlabi.CPU:
		if dev.ID != 0 {
			return dlpack.Managed{}, errkind.New(errkind.Buffer, "managed_tensor_allocator", "kDLCPU device id must be 0")
		}
		al, reg = cpu.Default(), usm.NewRegistry(cpu.Default())
	case dlabi.OneAPI:
		d, err := ext.py.Dpctl()
		if err != nil {
			return dlpack.Managed{}, errkind.Wrap(errkind.Buffer, "managed_tensor_allocator", "a kDLOneAPI device needs dpctl", err)
		}
		l, ok := d.LocalDevice(dev)
		if !ok {
			return dlpack.Managed{}, errkind.New(errkind.Buffer, "managed_tensor_allocator", "no SYCL device "+dev.String())
		}
		al, local, kind, reg = d, l, usm.KindDevice, d.Registry()
	default:
		return dlpack.Managed{}, errkind.New(errkind.Buffer, "managed_tensor_allocator", "cannot allocate on "+dev.String())
	}
	probe := usm.Interface{Shape: shape, DType: ts}
	win, err := probe.Window()
	if err != nil {
		return dlpack.Managed{}, errkind.Wrap(errkind.Value, "managed_tensor_allocator", "invalid shape", err)
	}
	alloc, err := al.Alloc(local, kind, max(uintptr(win.Len()), uintptr(ts.Size())))
	if err != nil {
		return dlpack.Managed{}, err
	}
	defer func() { _ = alloc.Free() }() // the export holds its own reference
	arr, err := reg.NewArray(alloc, ts, shape)
	if err != nil {
		return dlpack.Managed{}, err
	}
	return dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.ProducerVersion, NoSync: true})
}

//export ubx_go_from_dlpack
func ubx_go_from_dlpack(x, device, copyArg unsafe.Pointer, res *C.ubx_result) C.int {
	return status(guard("from_dlpack", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			obj := func(p unsafe.Pointer) pybridge.Object { return pybridge.UnsafeObject(uintptr(p)) }
			opts, err := fromDLPackOptions(g, obj(device), obj(copyArg))
			if err != nil {
				return err
			}
			t, err := g.FromDLPack(obj(x), opts)
			if err != nil {
				return err
			}
			return newArrayResult(&t.Array, true, (*result)(unsafe.Pointer(res)))
		})
	}))
}

// fromDLPackOptions reads from_dlpack's device and copy keywords: a
// DLPack (device_type, device_id) pair goes to the producer as its
// dl_device, as the array API says (the producer refuses a device it
// cannot serve); "cpu", a SYCL filter string, a dpctl.SyclDevice or
// SyclQueue name a device usmbridge resolves to its pair first. A device it
// cannot resolve is an error naming the keyword.
func fromDLPackOptions(g *pybridge.GIL, device, copyArg pybridge.Object) (pybridge.FromDLPackOptions, error) {
	var opts pybridge.FromDLPackOptions
	named := false
	if device.Ptr() != 0 && !g.IsNone(device) {
		var err error
		if named, err = namesDevice(g, device); err != nil {
			return opts, err
		}
	}
	if named {
		d, err := deviceOf(g, device)
		if err != nil {
			var exc *pybridge.Exception
			if errors.As(err, &exc) {
				return opts, err
			}
			k := errkind.Of(err)
			if k == nil || k == errkind.NotAvailable {
				k = errkind.Value
			}
			return opts, &ArgumentError{Func: "from_dlpack", Param: "device", Reason: "is not a device usmbridge can use", kind: k, Err: err}
		}
		if d.Queue != nil {
			// A dpctl.SyclQueue: passed as the stream, the producer orders
			// it after its work, and the array is bound to it.
			opts.Stream = device
		}
		device = pybridge.Object{}
		opts.Device = &d.DL
	}
	if device.Ptr() != 0 { // a DLPack pair, or nothing a device is
		o, err := g.DLPackOptions(dlabi.Device{}, pybridge.Object{}, pybridge.Object{}, device, pybridge.Object{})
		if err != nil {
			if exc, own := errkind.Origin[*pybridge.Exception](err); own && exc != nil {
				return opts, err // raised by the pair's own code (an __index__)
			}
			// Said of from_dlpack's device, not of the __dlpack__ keyword
			// the pair goes on to; a pair's own fault (an id beyond 32
			// bits) stays its cause.
			const want = "must be \"cpu\", a SYCL filter string, a DLPack (device_type, device_id) pair, a dpctl.SyclDevice or a dpctl.SyclQueue"
			if k := errkind.Of(err); k != nil && k != errkind.Type {
				return opts, &ArgumentError{Func: "from_dlpack", Param: "device", Reason: "is not a device usmbridge can use", kind: k, Err: err}
			}
			return opts, argErr(errkind.Type, "from_dlpack", "device", want)
		}
		opts.Device = o.Device
	}
	o, err := g.DLPackOptions(dlabi.Device{}, pybridge.Object{}, pybridge.Object{}, pybridge.Object{}, copyArg)
	if err != nil {
		return opts, err
	}
	opts.Copy = o.Copy
	return opts, nil
}

// namesDevice reports whether o names a device by name or object (a str, a
// dpctl.SyclDevice or SyclQueue) rather than as a DLPack pair. An
// exception the object's own code raised (a property) is the error.
func namesDevice(g *pybridge.GIL, o pybridge.Object) (bool, error) {
	if _, ok := g.AsString(o); ok {
		return true, nil
	}
	for _, attr := range []string{"filter_string", "sycl_device"} {
		v, err := attrIfAny(g, o, attr)
		if err != nil {
			return false, err
		}
		if v.Ptr() != 0 {
			g.DecRef(v)
			return true, nil
		}
	}
	return false, nil
}

//export ubx_go_import_capsule
func ubx_go_import_capsule(x, capsule unsafe.Pointer, res *C.ubx_result) C.int {
	return status(guard("from_dlpack capsule", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			t, err := g.ImportCapsule(pybridge.UnsafeObject(uintptr(capsule)), nil)
			if err != nil {
				return err
			}
			return newArrayResult(&t.Array, true, (*result)(unsafe.Pointer(res)))
		})
	}))
}

// suaiDicts are the SUAIDicts no asarray call is reading into (each
// holds the room an exact dict's values are read in); calls nest (a
// SUAI's values may run Python code that calls asarray), so each takes
// its own. Taken and given back with the GIL, which guards the list, as
// frames.
var suaiDicts []*pybridge.SUAIDict

func getSUAIDict() *pybridge.SUAIDict {
	if n := len(suaiDicts); n > 0 {
		d := suaiDicts[n-1]
		suaiDicts = suaiDicts[:n-1]
		return d
	}
	return new(pybridge.SUAIDict)
}

func putSUAIDict(d *pybridge.SUAIDict) {
	*d = pybridge.SUAIDict{} // no pointer into Python outlives the call
	suaiDicts = append(suaiDicts, d)
}

//export ubx_go_asarray
func ubx_go_asarray(obj, suai unsafe.Pointer, res *C.ubx_result) C.int {
	return status(guard("asarray", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			o := pybridge.UnsafeObject(uintptr(obj))
			d := getSUAIDict()
			defer putSUAIDict(d)
			(*suaiRead)(suai).to(d)
			arr, so, err := g.ArrayFromSUAI(o, d, nil)
			if err != nil {
				return err
			}
			r := (*result)(unsafe.Pointer(res))
			if err := newArrayResult(arr, true, r); err != nil {
				if so.Ptr() != 0 {
					g.DecRef(so)
				}
				return err
			}
			r.base = uintptr(obj)
			g.IncRef(o)
			r.syclobj = so.Ptr()
			return nil
		})
	}))
}

// forkSkips is what a forked child skipped (tests).
func forkSkips() int64 { return int64(C.ubx_fork_skips()) }
