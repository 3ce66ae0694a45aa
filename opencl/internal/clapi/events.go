package clapi

import "unsafe"

// Event is a cl_event.
type Event uintptr

// HasOrdering reports whether the loader has what device-side ordering
// needs: markers, barriers with wait lists, clReleaseEvent and clFlush
// (OpenCL 1.2).
func (l *Lib) HasOrdering() bool {
	return l.enqueueMarkerWithWaitList.Present() && l.enqueueBarrierWithWaitList.Present() &&
		l.releaseEvent.Present() && l.flush.Present()
}

func waitList(wait []Event) (n, p uintptr) {
	if len(wait) == 0 {
		return 0, 0
	}
	return uintptr(len(wait)), uintptr(unsafe.Pointer(&wait[0]))
}

// EnqueueMarker enqueues a marker that completes when the commands
// enqueued before it (and wait) have, and returns its event, which the
// caller releases (clEnqueueMarkerWithWaitList). Check HasOrdering first.
func (l *Lib) EnqueueMarker(q Queue, wait []Event) (Event, error) {
	var ev Event
	n, p := waitList(wait)
	err := check("clEnqueueMarkerWithWaitList", l.enqueueMarkerWithWaitList.Call4(uintptr(q), n, p, uintptr(unsafe.Pointer(&ev))))
	return ev, err
}

// EnqueueBarrier enqueues a barrier that holds back every later command
// of q, in-order or not, until the commands enqueued before it and wait
// have completed (clEnqueueBarrierWithWaitList, no event out). Check
// HasOrdering first.
func (l *Lib) EnqueueBarrier(q Queue, wait []Event) error {
	n, p := waitList(wait)
	return check("clEnqueueBarrierWithWaitList", l.enqueueBarrierWithWaitList.Call4(uintptr(q), n, p, 0))
}

// ReleaseEvent drops a reference (clReleaseEvent).
func (l *Lib) ReleaseEvent(e Event) error {
	return check("clReleaseEvent", l.releaseEvent.Call1(uintptr(e)))
}

// Flush submits the queue's commands to the device (clFlush): an event of
// one queue may be waited on from another only after its queue was
// flushed.
func (l *Lib) Flush(q Queue) error { return check("clFlush", l.flush.Call1(uintptr(q))) }

// QueueContext reads CL_QUEUE_CONTEXT (not retained).
func (l *Lib) QueueContext(q Queue) (Context, error) {
	c := new(Context)
	err := check("clGetCommandQueueInfo", l.getCommandQueueInfo.Call5(uintptr(q), QueueContext, 8, uintptr(unsafe.Pointer(c)), 0))
	return *c, err
}

// QueueOutOfOrder reports whether CL_QUEUE_PROPERTIES has out-of-order
// execution enabled.
func (l *Lib) QueueOutOfOrder(q Queue) (bool, error) {
	v := new(uint64)
	err := check("clGetCommandQueueInfo", l.getCommandQueueInfo.Call5(uintptr(q), QueueProperties, 8, uintptr(unsafe.Pointer(v)), 0))
	return *v&QueueOutOfOrderExecModeEnable != 0, err
}

// CreateCommandQueueWith creates a queue with the given properties
// (clCreateCommandQueue); the tests make out-of-order queues with it.
func (l *Lib) CreateCommandQueueWith(c Context, d Device, props uint64) (Queue, error) {
	var errc int32
	q := l.createCommandQueue.Call4(uintptr(c), uintptr(d), uintptr(props), uintptr(unsafe.Pointer(&errc)))
	if errc != 0 || q == 0 {
		return 0, fail("clCreateCommandQueue", errc, OutOfResources)
	}
	return Queue(q), nil
}

// CreateUserEvent creates an event the host completes
// (clCreateUserEvent; tests only). 0 and an error when absent.
func (l *Lib) CreateUserEvent(c Context) (Event, error) {
	if !l.createUserEvent.Present() {
		return 0, &Error{Op: "clCreateUserEvent", Status: InvalidOperation, Detail: "the loader does not export it"}
	}
	var errc int32
	e := l.createUserEvent.Call2(uintptr(c), uintptr(unsafe.Pointer(&errc)))
	if errc != 0 || e == 0 {
		return 0, fail("clCreateUserEvent", errc, OutOfResources)
	}
	return Event(e), nil
}

// SetUserEventStatus completes (status 0) or fails (negative) a user
// event (clSetUserEventStatus; tests only).
func (l *Lib) SetUserEventStatus(e Event, status int32) error {
	return check("clSetUserEventStatus", l.setUserEventStatus.Call2(uintptr(e), uintptr(uint32(status))))
}
