package pybridge

import (
	"runtime"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// dpctlQueue has the method usm.Order looks for to order on the device
// (usm's orderer; the type is unexported, so usm's backends_test.go cannot
// name it).
var _ interface {
	usm.Queue
	OrderBefore(consumer usm.Queue) error
} = (*dpctlQueue)(nil)

// OrderBefore makes consumer, an in-order queue of the same dpctl, wait
// on the device for every command submitted to q so far, as dpctl's
// convention for __dlpack__(stream=queue) asks: a barrier on q gives an
// event, and a barrier on consumer that depends on it holds back
// consumer's later commands. The host does not wait. The same in-order
// queue needs nothing.
//
// An out-of-order consumer is usm.ErrNotSupported, so usm.Order waits on
// the host: on an out-of-order SYCL queue a later command (a memcpy) was
// seen to run before a barrier with a wait list, and before a plain
// barrier after it, had been satisfied (RATIONALE.md, "Queue ordering on
// the device"), so nothing submitted through SYCL orders it reliably.
// So is a consumer that is not a queue of this dpctl, and a library
// without the barrier entry points.
func (q *dpctlQueue) OrderBefore(consumer usm.Queue) error {
	const op = "pybridge.dpctlQueue.OrderBefore"
	c, ok := consumer.(*dpctlQueue)
	if !ok || c == nil || c.d != q.d {
		return errkind.New(errkind.NotSupported, op, "the consumer is not a queue of this dpctl")
	}
	o := q.d.order
	if !o.Present() {
		return errkind.New(errkind.NotSupported, op, q.d.api.Path()+" lacks the barrier entry points")
	}
	defer runtime.KeepAlive(q)
	defer runtime.KeepAlive(c)
	if !o.QueueIsInOrder(c.ref) {
		return errkind.New(errkind.NotSupported, op, "the consumer's queue is out of order: SYCL barriers do not hold its later commands back reliably")
	}
	if o.QueueAreEq(q.ref, c.ref) {
		return nil // an in-order queue's later commands already follow
	}
	ev := o.SubmitBarrier(q.ref)
	if ev == 0 {
		return errkind.New(errkind.Value, op, "DPCTLQueue_SubmitBarrier failed on the producer's queue")
	}
	dep := o.SubmitBarrierForEvents(c.ref, []uintptr{ev})
	o.EventDelete(ev) // the consumer's barrier holds its own reference
	if dep == 0 {
		return errkind.New(errkind.Value, op, "DPCTLQueue_SubmitBarrierForEvents failed on the consumer's queue")
	}
	o.EventDelete(dep)
	return nil
}

// borrowQueue wraps a DPCTLSyclQueueRef the caller keeps alive for as long
// as the dpctlQueue is used (the SyclQueue passed as a stream, for the
// length of the __dlpack__ call); nothing is deleted when it goes.
func (d *Dpctl) borrowQueue(ref uintptr) *dpctlQueue { return &dpctlQueue{d: d, ref: ref} }
