package opencl

import (
	"strconv"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// Queue is one reference to an in-order cl_command_queue. Like Context, each
// Queue value owns exactly one OpenCL reference, which Close drops once;
// later calls do nothing. Queue implements usm.Queue: Wait is clFinish.
type Queue struct {
	h        ffi.Handle
	ctx      *ctxState // nil for a queue received from elsewhere
	platform *platform
	device   Device
}

var _ usm.Queue = (*Queue)(nil)

// NewQueue creates an in-order queue (no properties) on a device of the
// context.
func (c *Context) NewQueue(dev Device) (*Queue, error) {
	if c == nil {
		return nil, errZero("context")
	}
	if !c.hasDevice(dev) {
		return nil, errkind.New(errkind.Value, "opencl.NewQueue", "device "+dev.String()+" is not in the context")
	}
	id, err := c.h.RLock("opencl.Context.NewQueue")
	if err != nil {
		return nil, err
	}
	defer c.h.RUnlock()
	l, _ := lib()
	qid, err := l.CreateCommandQueue(clapi.Context(id), dev.d.id)
	if err != nil {
		return nil, err
	}
	q := &Queue{ctx: c.s, platform: c.s.platform, device: dev}
	q.h.Init(uintptr(qid), "cl_command_queue", liveQueues)
	c.s.mu.Lock()
	c.s.queues[q] = struct{}{}
	c.s.mu.Unlock()
	return q, nil
}

// UnsafeAdoptQueue takes over a reference to a native cl_command_queue,
// such as the one SYCL's get_native(queue) returns: DPC++ retains the queue
// before handing it out, so the receiver owns one reference and must drop
// it. Close of the returned Queue does exactly that. The caller
// guarantees h is a live cl_command_queue of this process's ICD loader; a
// wrong value crashes the runtime, which is why the function is Unsafe.
func UnsafeAdoptQueue(h uintptr) (*Queue, error) {
	return wrapQueue(h, false)
}

// UnsafeBorrowQueue wraps a native cl_command_queue that stays owned by the
// caller (a SYCL queue the caller keeps alive, for instance): it takes a
// reference of its own with clRetainCommandQueue, so the Queue stays valid
// even if the owner lets go first, and its Close drops only that
// reference. The contract on h is UnsafeAdoptQueue's.
func UnsafeBorrowQueue(h uintptr) (*Queue, error) {
	return wrapQueue(h, true)
}

func wrapQueue(h uintptr, retain bool) (*Queue, error) {
	if h == 0 {
		return nil, errkind.New(errkind.Value, "opencl", "NULL cl_command_queue")
	}
	l, err := lib()
	if err != nil {
		return nil, err
	}
	devID, err := l.QueueDevice(clapi.Queue(h))
	if err != nil {
		return nil, err
	}
	dev, _ := findDevice(devID)
	var plat *platform
	if dev.d != nil {
		plat = dev.d.platform
	}
	if retain {
		if err := l.RetainCommandQueue(clapi.Queue(h)); err != nil {
			return nil, err
		}
	}
	q := &Queue{platform: plat, device: dev}
	q.h.Init(h, "cl_command_queue", liveQueues)
	return q, nil
}

// Native returns the cl_command_queue (0 after Close); q keeps owning it.
func (q *Queue) Native() uintptr {
	if q == nil {
		return 0
	}
	return q.h.Raw()
}

// Device returns the queue's device (zero if the queue came from
// elsewhere and its device is not a root device of a known platform).
func (q *Queue) Device() Device {
	if q == nil {
		return Device{}
	}
	return q.device
}

// Finish blocks until every command enqueued so far has completed
// (clFinish). On an idle queue it costs well under a microsecond.
func (q *Queue) Finish() error {
	if q == nil {
		return errZero("queue")
	}
	id, err := q.h.RLock("opencl.Queue")
	if err != nil {
		return err
	}
	l, _ := lib()
	err = l.Finish(clapi.Queue(id))
	q.h.RUnlock()
	return err
}

// Wait is Finish; it makes Queue a usm.Queue.
func (q *Queue) Wait() error { return q.Finish() }

// Flush submits enqueued commands to the device without waiting (clFlush).
func (q *Queue) Flush() error {
	if q == nil {
		return errZero("queue")
	}
	id, err := q.h.RLock("opencl.Queue")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	l, _ := lib()
	return l.Flush(clapi.Queue(id))
}

// ReferenceCount returns CL_QUEUE_REFERENCE_COUNT (diagnostics and tests).
func (q *Queue) ReferenceCount() (uint32, error) {
	if q == nil {
		return 0, errZero("queue")
	}
	id, err := q.h.RLock("opencl.Queue")
	if err != nil {
		return 0, err
	}
	defer q.h.RUnlock()
	l, _ := lib()
	return l.QueueReferenceCount(clapi.Queue(id))
}

// Close drops the queue's reference (clReleaseCommandQueue, which also
// flushes it) once, after calls in progress; a second Close does
// nothing.
func (q *Queue) Close() error {
	if q == nil {
		return nil
	}
	err := q.h.Close(func(id uintptr) error {
		l, _ := lib()
		return l.ReleaseCommandQueue(clapi.Queue(id))
	})
	if err == nil && q.ctx != nil {
		q.ctx.mu.Lock()
		delete(q.ctx.queues, q)
		q.ctx.mu.Unlock()
	}
	return err
}

// usmFn returns the queue id (read lock held on success) and the platform's
// USM table.
func (q *Queue) usmFn(op string) (uintptr, clapi.USM, error) {
	if q == nil {
		return 0, clapi.USM{}, errZero("queue")
	}
	if q.platform == nil || !q.platform.usmFuncs().Complete() {
		return 0, clapi.USM{}, errkind.New(errkind.NotSupported, op, "the queue's platform does not provide cl_intel_unified_shared_memory")
	}
	id, err := q.h.RLock("opencl.Queue")
	return id, q.platform.usmFuncs(), err
}

// Memcpy copies n bytes with clEnqueueMemcpyINTEL. Either side may be USM
// of the queue's context or ordinary host memory that stays valid (and, if
// not blocking, untouched) until the copy completes. With blocking the call
// returns after the copy.
func (q *Queue) Memcpy(blocking bool, dst, src, n uintptr) error {
	id, f, err := q.usmFn("clEnqueueMemcpyINTEL")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	return f.EnqueueMemcpy(clapi.Queue(id), blocking, dst, src, n, nil)
}

// EnqueueMemcpy is a non-blocking Memcpy that returns an event for it.
func (q *Queue) EnqueueMemcpy(dst, src, n uintptr) (*Event, error) {
	id, f, err := q.usmFn("clEnqueueMemcpyINTEL")
	if err != nil {
		return nil, err
	}
	defer q.h.RUnlock()
	ev := new(clapi.Event)
	if err := f.EnqueueMemcpy(clapi.Queue(id), false, dst, src, n, ev); err != nil {
		return nil, err
	}
	return newEvent(uintptr(*ev)), nil
}

// MemFill enqueues a fill of n bytes at dst with a repeated pattern
// (clEnqueueMemFillINTEL; n must be a multiple of len(pattern), which must
// be a power of two up to 128). The runtime copies the pattern, so it may
// be reused at once. Call Finish to wait for the fill.
func (q *Queue) MemFill(dst uintptr, pattern []byte, n uintptr) error {
	if len(pattern) == 0 {
		return errkind.New(errkind.Value, "clEnqueueMemFillINTEL", "empty pattern")
	}
	id, f, err := q.usmFn("clEnqueueMemFillINTEL")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	if !f.CanFill() {
		return errkind.New(errkind.NotSupported, "clEnqueueMemFillINTEL", "the queue's platform does not provide it")
	}
	return f.EnqueueMemFill(clapi.Queue(id), dst, pattern, n)
}

func (q *Queue) svmFn(op string) (uintptr, *clapi.Lib, error) {
	if q == nil {
		return 0, nil, errZero("queue")
	}
	l, err := lib()
	if err != nil {
		return 0, nil, err
	}
	if !l.HasSVM() {
		return 0, nil, errkind.New(errkind.NotSupported, op, "the OpenCL loader has no SVM entry points (OpenCL < 2.0)")
	}
	id, err := q.h.RLock("opencl.Queue")
	return id, l, err
}

// SVMMemcpy copies n bytes with clEnqueueSVMMemcpy (SVM or host memory on
// either side).
func (q *Queue) SVMMemcpy(blocking bool, dst, src, n uintptr) error {
	id, l, err := q.svmFn("clEnqueueSVMMemcpy")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	return l.EnqueueSVMMemcpy(clapi.Queue(id), blocking, dst, src, n)
}

// SVMMemFill enqueues clEnqueueSVMMemFill; see MemFill for the pattern rules.
func (q *Queue) SVMMemFill(dst uintptr, pattern []byte, n uintptr) error {
	if len(pattern) == 0 {
		return errkind.New(errkind.Value, "clEnqueueSVMMemFill", "empty pattern")
	}
	id, l, err := q.svmFn("clEnqueueSVMMemFill")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	return l.EnqueueSVMMemFill(clapi.Queue(id), dst, pattern, n)
}

// EnqueueMarker enqueues a marker (clEnqueueMarkerWithWaitList with no
// wait list): its event completes when everything enqueued before it has.
func (q *Queue) EnqueueMarker() (*Event, error) {
	if q == nil {
		return nil, errZero("queue")
	}
	id, err := q.h.RLock("opencl.Queue")
	if err != nil {
		return nil, err
	}
	defer q.h.RUnlock()
	l, _ := lib()
	ev, err := l.EnqueueMarker(clapi.Queue(id))
	if err != nil {
		return nil, err
	}
	return newEvent(uintptr(ev)), nil
}

// Event is one reference to a cl_event, released once.
type Event struct{ h ffi.Handle }

// ExecStatus is an event's CL_EVENT_COMMAND_EXECUTION_STATUS: Complete,
// Running, Submitted, Queued, or a negative error status.
type ExecStatus int32

// Execution states.
const (
	Complete  ExecStatus = clapi.Complete
	Running   ExecStatus = clapi.Running
	Submitted ExecStatus = clapi.Submitted
	Queued    ExecStatus = clapi.Queued
)

func (s ExecStatus) String() string {
	switch s {
	case Complete:
		return "complete"
	case Running:
		return "running"
	case Submitted:
		return "submitted"
	case Queued:
		return "queued"
	}
	return "failed: " + Status(s).Error() + " (" + strconv.Itoa(int(s)) + ")"
}

func newEvent(id uintptr) *Event {
	e := &Event{}
	e.h.Init(id, "cl_event", liveEvents)
	return e
}

// Wait blocks until the event's command has completed (clWaitForEvents).
func (e *Event) Wait() error {
	if e == nil {
		return errZero("event")
	}
	id, err := e.h.RLock("opencl.Event")
	if err != nil {
		return err
	}
	defer e.h.RUnlock()
	l, _ := lib()
	return l.WaitForEvent(clapi.Event(id))
}

// Status returns the command's execution status without waiting.
func (e *Event) Status() (ExecStatus, error) {
	if e == nil {
		return 0, errZero("event")
	}
	id, err := e.h.RLock("opencl.Event")
	if err != nil {
		return 0, err
	}
	defer e.h.RUnlock()
	l, _ := lib()
	s, err := l.EventExecutionStatus(clapi.Event(id))
	return ExecStatus(s), err
}

// Close drops the event's reference once; a second Close does nothing.
func (e *Event) Close() error {
	if e == nil {
		return nil
	}
	return e.h.Close(func(id uintptr) error {
		l, _ := lib()
		return l.ReleaseEvent(clapi.Event(id))
	})
}
