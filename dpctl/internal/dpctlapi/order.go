package dpctlapi

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// QueueInOrder is DPCTL_IN_ORDER, a DPCTLQueuePropertyType for
// DPCTLQueue_Create*.
const QueueInOrder = 1 << 1

// Ordering holds the entry points that order one queue after another on
// the device, as typed functions. They are optional symbols of API's
// table: a library without them leaves Present false, and the caller
// waits on the host instead. The queue and event refs
// are DPCTLSyclQueueRef and DPCTLSyclEventRef (sycl::queue*,
// sycl::event*); every function here catches SYCL's exceptions in C
// (a failed submit is a NULL event).
type Ordering struct {
	submitBarrier, submitBarrierForEvents ffi.Fn
	queueAreEq, queueIsInOrder            ffi.Fn
	eventDelete                           ffi.Fn
}

// Ordering returns the entry points that order queues on the device.
func (a *API) Ordering() Ordering { return a.order }

// Present reports whether every entry point was found.
func (o Ordering) Present() bool {
	return o.submitBarrier.Present() && o.submitBarrierForEvents.Present() &&
		o.queueAreEq.Present() && o.queueIsInOrder.Present() && o.eventDelete.Present()
}

// SubmitBarrier submits a barrier that completes when every command
// submitted to q before it has (DPCTLQueue_SubmitBarrier); the event is
// owned by the caller, 0 on failure.
func (o Ordering) SubmitBarrier(q uintptr) uintptr { return o.submitBarrier.Call1(q) }

// SubmitBarrierForEvents submits to q a barrier that waits for every
// command submitted to q before it and for deps
// (DPCTLQueue_SubmitBarrierForEvents); later commands of q wait for it.
// The event is owned by the caller, 0 on failure.
func (o Ordering) SubmitBarrierForEvents(q uintptr, deps []uintptr) uintptr {
	if len(deps) == 0 {
		return o.submitBarrierForEvents.Call3(q, 0, 0)
	}
	return o.submitBarrierForEvents.Call3(q, uintptr(unsafe.Pointer(&deps[0])), uintptr(len(deps)))
}

// QueueAreEq reports whether two refs are the same sycl::queue
// (DPCTLQueue_AreEq).
func (o Ordering) QueueAreEq(q1, q2 uintptr) bool { return cbool(o.queueAreEq.Call2(q1, q2)) }

// QueueIsInOrder reports whether q runs its commands in submission order
// (DPCTLQueue_IsInOrder).
func (o Ordering) QueueIsInOrder(q uintptr) bool { return cbool(o.queueIsInOrder.Call1(q)) }

// EventDelete deletes an owned event ref (DPCTLEvent_Delete); 0 is
// ignored.
func (o Ordering) EventDelete(e uintptr) {
	if e != 0 {
		o.eventDelete.Call1(e)
	}
}
