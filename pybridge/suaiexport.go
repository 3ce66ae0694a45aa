package pybridge

import (
	"errors"
	"strconv"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// SUAI returns arr's __sycl_usm_array_interface__ as a new dict for
// Python's SYCL consumers (dpctl, dpnp), which make a queue from its
// syclobj and look the pointer up in that queue's context. The syclobj
// is the given object when it is not NULL (a dpctl.SyclQueue or
// SyclContext the memory is known to belong to); else the array's queue
// as a dpctl.SyclQueue where QueueObject has one (dpctl's queues, and for
// USM of the opencl backend a queue on a SYCL context made from its
// native context); else the device's position in dpctl's device list,
// dpctl's convention, which names that device's default context.
//
// A position is given only when that default context knows the pointer,
// which is what the consumer checks: memory it does not know (USM of a
// native OpenCL or Level Zero context that no SYCL context was made
// from) is refused with the ValueError dpctl raises for a pointer outside
// the context, saying to allocate through dpctl (RATIONALE.md, "Native
// allocations and SYCL consumers"). Like Array.SUAI, it waits on the
// array's queue, and memory that is not USM is an AttributeError.
func (g *GIL) SUAI(arr *usm.Array, syclobj Object) (Object, error) {
	so := any(nil)
	if !syclobj.isNil() {
		so = syclobj
	} else if arr.DLDevice.Type == dlabi.OneAPI {
		q, why, err := g.syclQueueOf(arr.Queue)
		if err != nil {
			return Object{}, err
		}
		if !q.isNil() {
			defer g.DecRef(q)
			so = q
		} else {
			if err := g.checkDefaultContext(arr, why); err != nil {
				return Object{}, err
			}
			so = strconv.Itoa(int(arr.DLDevice.ID))
		}
	}
	var m map[string]any
	err := g.released(arr, func() (err error) { m, err = arr.SUAI(); return err }) // waits; refuses memory that is not USM
	if err != nil {
		return Object{}, err
	}
	if so != nil {
		m["syclobj"] = so
	}
	return g.FromGo(m)
}

// checkDefaultContext refuses arr's memory unless the default context of
// the SYCL device its DLPack id names (in dpctl's numbering) knows
// arr.Data: the context a consumer binds a position syclobj to. why says,
// for memory of a native backend, why no SYCL context was made from its
// own.
func (g *GIL) checkDefaultContext(arr *usm.Array, why error) error {
	d, err := g.dpctlUnderGIL()
	switch {
	case errors.Is(err, usm.ErrNotAvailable):
		why = errNoDpctl
	case err != nil: // a KeyboardInterrupt during the import, say
		return err
	case d.QueryPointerInContextOf(arr.Data, int(arr.DLDevice.ID)).Kind != usm.KindUnknown:
		return nil
	}
	return notSYCLVisible(arr, why)
}

// errNoDpctl is why nothing SYCL can see memory when dpctl cannot be
// loaded.
var errNoDpctl = errkind.New(errkind.NotAvailable, "dpctl", "dpctl is not available")

// notSYCLVisible is the error for memory no SYCL consumer can find.
func notSYCLVisible(arr *usm.Array, why error) error {
	const op = "__sycl_usm_array_interface__"
	native := ""
	if _, ok := arr.Backend.(*dpctl.Backend); !ok && arr.Backend != nil {
		switch arr.Backend.Name() {
		case syclobj.OpenCL:
			native = "OpenCL"
		case syclobj.LevelZero:
			native = "Level Zero"
			if why == nil {
				why = errkind.New(errkind.NotSupported, "make_context", "SYCL contexts are made from native OpenCL contexts only")
			}
		}
	}
	if native == "" {
		return errkind.New(errkind.Value, op, "the pointer "+hexPtr(arr.Data)+" is not USM of the default SYCL context of device "+strconv.Itoa(int(arr.DLDevice.ID))+", which the syclobj would name")
	}
	msg := "the array's memory belongs to a native " + native + " context, which SYCL consumers (dpctl, dpnp) cannot see"
	if why != nil {
		msg += " (" + reasonOf(why) + ")"
	}
	msg += "; allocate it through dpctl instead (from Go: pyext.Empty, or Alloc of the dpctl backend that Python.Dpctl returns)"
	return errkind.New(errkind.Value, op, msg)
}

// reasonOf is err's message for a user: the detail of a usmbridge error
// (whose operation names Go code), else the whole message.
func reasonOf(err error) string {
	var e *errkind.Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return err.Error()
}

func hexPtr(p uintptr) string { return "0x" + strconv.FormatUint(uint64(p), 16) }
