package dpctl

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/dpctl/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/programs"
	"github.com/usmbridge/usmbridge/usm"
)

// Queue is a DPCTLSyclQueueRef: a device's default queue (Backend.Queue),
// a copy the backend owns (the queue of an array BindRef bound), or a ref
// the caller keeps alive (UnsafeBorrowQueue). Wait submits a barrier and
// waits on its event (DPCTLQueue_Wait can let a C++ exception escape).
type Queue struct {
	b   *Backend
	ref uintptr
	// defaultCtx caches IsDefaultContext (0 not yet asked, 1 yes, 2 no):
	// a queue's context is fixed when it is made, and every export of an
	// array bound to the queue asks.
	defaultCtx atomic.Int32
	// progs remembers the programs built for the queue (program.go).
	progMu sync.Mutex
	progs  map[programs.Key]*program
}

// ownQueue wraps a queue ref the backend owns: it is deleted once the
// Queue is unreachable.
func (b *Backend) ownQueue(ref uintptr) *Queue {
	q := &Queue{b: b, ref: ref}
	api := b.api
	runtime.AddCleanup(q, func(r uintptr) { api.QueueDelete(r) }, ref)
	return q
}

// UnsafeBorrowQueue wraps a DPCTLSyclQueueRef that the caller keeps alive
// for as long as the Queue is used (a dpctl.SyclQueue passed as a
// __dlpack__ stream, for the length of the call); nothing is deleted when
// it goes. A ref that is not a live queue of this dpctl crashes the SYCL
// runtime.
func (b *Backend) UnsafeBorrowQueue(ref uintptr) *Queue { return &Queue{b: b, ref: ref} }

// Ref returns the DPCTLSyclQueueRef, valid while q is reachable (and, for
// a borrowed queue, while its owner keeps it).
func (q *Queue) Ref() uintptr { return q.ref }

// Wait waits for all work submitted to the queue so far: a barrier and a
// wait on its event, which (unlike DPCTLQueue_Wait) cannot let a C++
// exception escape.
func (q *Queue) Wait() error {
	defer runtime.KeepAlive(q)
	if !q.b.api.QueueBarrierWait(q.ref) {
		return errkind.New(errkind.Value, "dpctl.Queue.Wait", "DPCTLQueue_SubmitBarrier failed")
	}
	return nil
}

// IsDefaultContext reports whether the queue's context is the default
// context of its device's platform: only such memory may be exported as
// kDLOneAPI, as dpctl's exporter requires (a consumer finds the memory
// from the device id alone, through that default context).
func (q *Queue) IsDefaultContext() bool {
	switch q.defaultCtx.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	yes := q.isDefaultContext()
	v := int32(2)
	if yes {
		v = 1
	}
	q.defaultCtx.Store(v)
	return yes
}

func (q *Queue) isDefaultContext() bool {
	a := q.b.api
	ctx := a.QueueGetContext(q.ref)
	if ctx == 0 {
		return false
	}
	defer a.ContextDelete(ctx)
	dev := a.QueueGetDevice(q.ref)
	runtime.KeepAlive(q)
	if dev == 0 {
		return false
	}
	pos := q.b.position(dev)
	a.DeviceDelete(dev)
	if pos < 0 || q.b.devs[pos].defCtx == 0 {
		return false
	}
	return a.ContextAreEq(ctx, q.b.devs[pos].defCtx)
}

// Queue returns the device's in-order queue in its default context (made
// once, kept for the life of the process). It is a *Queue.
func (b *Backend) Queue(device int) (usm.Queue, error) { return b.queue(device) }

func (b *Backend) queue(device int) (*Queue, error) {
	if device < 0 || device >= len(b.devs) {
		return nil, errkind.New(errkind.Value, "dpctl.Queue", "no SYCL device "+strconv.Itoa(device))
	}
	dv := b.devs[device]
	dv.qOnce.Do(func() {
		// In order: the queue is what from_dlpack passes to producers as
		// the stream they order on the device, which SYCL's barriers do
		// only for in-order queues (OrderBefore).
		r := b.api.QueueCreateForDevice(dv.ref, dpctlapi.QueueInOrder)
		if r == 0 {
			dv.qErr = errkind.New(errkind.NotAvailable, "dpctl.Queue", "cannot create a queue on "+b.descs[device].String())
			return
		}
		dv.q = &Queue{b: b, ref: r} // lives as long as the process
	})
	return dv.q, dv.qErr
}

// Copy copies n bytes with this queue and waits for it: USM of the
// queue's context, or host memory.
func (q *Queue) Copy(dst, src, n uintptr) error {
	if n == 0 {
		return nil
	}
	a := q.b.api
	ev := a.QueueMemcpy(q.ref, dst, src, n)
	runtime.KeepAlive(q)
	if ev == 0 {
		return errkind.New(errkind.Value, "dpctl.Queue.Copy", "DPCTLQueue_Memcpy failed")
	}
	a.EventWait(ev)
	a.EventDelete(ev)
	return nil
}

// OrderBefore makes consumer, an in-order queue of the same Backend, wait
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
// So is a consumer that is not a queue of this Backend, and a library
// without the barrier entry points.
func (q *Queue) OrderBefore(consumer usm.Queue) error {
	const op = "dpctl.Queue.OrderBefore"
	c, ok := consumer.(*Queue)
	if !ok || c == nil || c.b != q.b {
		return errkind.New(errkind.NotSupported, op, "the consumer is not a queue of this dpctl")
	}
	o := q.b.order
	if !o.Present() {
		return errkind.New(errkind.NotSupported, op, q.b.api.Path()+" lacks the barrier entry points")
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
