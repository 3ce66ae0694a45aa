package opencl

import (
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// OrderBefore makes consumer's later commands wait on the device for
// every command enqueued on q so far: a marker on q gives an event (q is
// then flushed, which OpenCL requires before another queue may wait for
// one of its events), and a barrier on consumer waits for it, holding
// back every later command whether consumer runs in order or not. The
// host does not wait. q itself as consumer needs nothing when it is in
// order, and one barrier when it is not.
//
// OpenCL events order queues of one context only, so a consumer that is
// not an *opencl.Queue of q's context, or a loader without OpenCL 1.2's
// markers, is usm.ErrNotSupported: usm.Order then waits on the host.
func (q *Queue) OrderBefore(consumer usm.Queue) error {
	const op = "opencl.Queue.OrderBefore"
	c, ok := consumer.(*Queue)
	if !ok || c == nil {
		return errkind.New(errkind.NotSupported, op, "the consumer is not an OpenCL queue")
	}
	l, err := lib()
	if err != nil {
		return err
	}
	if !l.HasOrdering() {
		return errkind.New(errkind.NotSupported, op, "the OpenCL loader has no clEnqueueMarkerWithWaitList/clEnqueueBarrierWithWaitList (OpenCL < 1.2)")
	}
	pid, err := q.lock(op)
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	if c == q {
		ooo, err := l.QueueOutOfOrder(pid)
		if err != nil || !ooo {
			return err
		}
		return l.EnqueueBarrier(pid, nil)
	}
	cid, err := c.lock(op)
	if err != nil {
		return err
	}
	defer c.h.RUnlock()
	pctx, err := l.QueueContext(pid)
	if err != nil {
		return err
	}
	cctx, err := l.QueueContext(cid)
	if err != nil {
		return err
	}
	if pctx != cctx {
		return errkind.New(errkind.NotSupported, op, "the queues belong to different contexts")
	}
	if pid == cid { // two references to one queue
		ooo, err := l.QueueOutOfOrder(pid)
		if err != nil || !ooo {
			return err
		}
		return l.EnqueueBarrier(pid, nil)
	}
	ev, err := l.EnqueueMarker(pid, nil)
	if err != nil {
		return err
	}
	defer func() { _ = l.ReleaseEvent(ev) }() // the barrier holds its own reference
	if err := l.Flush(pid); err != nil {
		return err
	}
	return l.EnqueueBarrier(cid, []clapi.Event{ev})
}
