package pyext

// The DLPack C exchange table's Go half (exchange.c is C's): refusals,
// waits, imports of tensors C does not take, the work stream and the
// allocator.

// #include <stdlib.h>
// #include "ubx.h"
// void *ubx_save_thread(void);
// void ubx_restore_thread(void *ts);
import "C"

import (
	"strconv"
	"unsafe"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

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
		if st == nil || (!needsWait(st.arr.Queue) && st.arr.Pending.Empty()) {
			return nil
		}
		return waitReleased(st.arr)
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
		ref, err := workStream(dlabi.Device{Type: dlabi.DeviceType(devType), ID: int32(devID)})
		if err != nil {
			return err
		}
		*out = cmem.Ptr(ref)
		return nil
	}))
}

// workStream is the table's current_work_stream of dev: NULL for kDLCPU;
// for kDLOneAPI, the DPCTLSyclQueueRef of dpctl's queue of the device, the
// one imports of that device are bound to (dpctl.Backend.Queue, made once
// per process); other devices are a usm.ErrBuffer error. C calls it with
// the GIL, which is let go while dpctl is got: the first call imports
// dpctl, and an import under way on another thread needs the GIL to finish
// (pybridge's Python.Dpctl).
func workStream(dev dlabi.Device) (uintptr, error) {
	const op = "current_work_stream"
	switch dev.Type {
	case dlabi.CPU:
		return 0, nil
	case dlabi.OneAPI:
		ts := C.ubx_save_thread()
		d, err := ext.py.Dpctl()
		C.ubx_restore_thread(ts)
		if err != nil {
			return 0, errkind.Wrap(errkind.Buffer, op, "a kDLOneAPI device needs dpctl", err)
		}
		local, ok := d.LocalDevice(dev)
		if !ok {
			return 0, errkind.New(errkind.Buffer, op, "no SYCL device "+dev.String())
		}
		q, err := d.Queue(local)
		if err != nil {
			return 0, err
		}
		return q.(*dpctl.Queue).Ref(), nil
	}
	return 0, errkind.New(errkind.Buffer, op, "usmbridge has no work stream on "+dev.String())
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
