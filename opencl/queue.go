package opencl

import (
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// Queue is one reference to an in-order cl_command_queue: a Backend's
// queue for a device, or one a SYCL runtime handed out
// (UnsafeAdoptQueue, UnsafeBorrowQueue). It implements usm.Queue: Wait is
// clFinish. Close drops the reference once, after calls in progress; a
// second Close does nothing.
type Queue struct {
	h        ffi.Handle
	ctx      *ctxState // nil for a queue received from elsewhere
	platform *platform // nil if the queue's device is unknown
	device   *device
	owner    *Backend // set for a Backend's queue, which only its Close releases
	// nctx and ndev are the queue's cl_context and cl_device_id, fixed
	// when it is made: a launch checks them against its kernel's.
	nctx clapi.Context
	ndev clapi.Device
	// progs keeps the programs built through a queue from elsewhere
	// (ctx nil); a Backend's queue uses its context's (program.go).
	progsOnce sync.Once
	progs     *progCache
}

var _ usm.Queue = (*Queue)(nil)

// newQueue creates an in-order queue (no properties) on a device of the
// context.
func (c *Context) newQueue(dev *device) (*Queue, error) {
	const op = "opencl.Context.newQueue"
	if !c.s.hasDevice(dev) {
		return nil, errkind.New(errkind.Value, op, "device "+dev.String()+" is not in the context")
	}
	id, err := c.h.RLock(op)
	if err != nil {
		return nil, err
	}
	defer c.h.RUnlock()
	l, _ := lib()
	qid, err := l.CreateCommandQueue(clapi.Context(id), dev.id)
	if err != nil {
		return nil, err
	}
	q := &Queue{ctx: c.s, platform: c.s.platform, device: dev, nctx: clapi.Context(id), ndev: dev.id}
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
	if _, err := platforms(); err != nil {
		return nil, err
	}
	l, err := lib()
	if err != nil {
		return nil, err
	}
	devID, err := l.QueueDevice(clapi.Queue(h))
	if err != nil {
		return nil, err
	}
	dev := findDevice(devID)
	var plat *platform
	if dev != nil {
		plat = dev.platform
	}
	ctxID, err := l.QueueContext(clapi.Queue(h))
	if err != nil {
		return nil, err
	}
	if retain {
		if err := l.RetainCommandQueue(clapi.Queue(h)); err != nil {
			return nil, err
		}
	}
	q := &Queue{platform: plat, device: dev, nctx: ctxID, ndev: devID}
	q.h.Init(h, "cl_command_queue", liveQueues)
	return q, nil
}

// Native returns the cl_command_queue, for handing to other native code
// (a SYCL runtime's make_queue, for instance); 0 once closed. The
// reference stays owned by q.
func (q *Queue) Native() uintptr {
	if q == nil {
		return 0
	}
	return q.h.Raw()
}

// Clone returns another Queue over the same cl_command_queue, holding a
// reference of its own (clRetainCommandQueue) that its Close drops: for
// code that may keep the native queue longer than q lives (a SYCL queue
// made from it with make_queue). It is a usm.ErrValue error once q is
// closed.
func (q *Queue) Clone() (*Queue, error) {
	id, err := q.lock("opencl.Queue.Clone")
	if err != nil {
		return nil, err
	}
	defer q.h.RUnlock()
	return wrapQueue(uintptr(id), true)
}

// Context returns the context the queue belongs to (CL_QUEUE_CONTEXT)
// as a Context holding a reference of its own, which its Close drops: for
// handing the context to a SYCL runtime (make_context) or classifying
// pointers of the queue's context. It is a usm.ErrValue error once q is
// closed.
func (q *Queue) Context() (*Context, error) {
	const op = "opencl.Queue.Context"
	id, err := q.lock(op)
	if err != nil {
		return nil, err
	}
	defer q.h.RUnlock() // q's own reference keeps the context alive meanwhile
	l, _ := lib()
	c, err := l.QueueContext(id)
	if err != nil {
		return nil, err
	}
	return wrapContext(op, uintptr(c), true)
}

// Wait blocks until every command enqueued so far has completed
// (clFinish, exactly the backend half of SYCL's queue::wait()). It does
// not cover host tasks or commands a SYCL runtime still holds back. On an
// idle queue it costs well under a microsecond.
func (q *Queue) Wait() error {
	id, err := q.lock("opencl.Queue.Wait")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	l, _ := lib()
	return l.Finish(clapi.Queue(id))
}

func (q *Queue) lock(op string) (clapi.Queue, error) {
	if q == nil {
		return 0, errkind.New(errkind.Value, op, "nil *opencl.Queue")
	}
	id, err := q.h.RLock(op)
	return clapi.Queue(id), err
}

// Close drops the queue's reference (clReleaseCommandQueue, which also
// flushes it) once, after calls in progress; a second Close does nothing.
// A Backend's queue is released by the Backend's Close; its own Close
// refuses (usm.ErrValue).
func (q *Queue) Close() error {
	if q == nil {
		return nil
	}
	if q.owner != nil {
		return errkind.New(errkind.Value, "opencl.Queue.Close", "the queue belongs to its Backend; close the Backend instead")
	}
	return q.close()
}

func (q *Queue) close() error {
	if q.ctx == nil && q.progs != nil {
		// Programs built through the queue go first: they hold the context.
		if err := q.progs.Close(); err != nil {
			return err
		}
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

// referenceCount returns CL_QUEUE_REFERENCE_COUNT (diagnostics and tests).
func (q *Queue) referenceCount() (uint32, error) {
	id, err := q.lock("opencl.Queue.referenceCount")
	if err != nil {
		return 0, err
	}
	defer q.h.RUnlock()
	l, _ := lib()
	return l.QueueReferenceCount(id)
}

// usmFn returns the queue id (shared lock held on success) and the
// platform's USM table.
func (q *Queue) usmFn(op string) (clapi.Queue, clapi.USM, error) {
	if q == nil {
		return 0, clapi.USM{}, errkind.New(errkind.Value, op, "nil *opencl.Queue")
	}
	if q.platform == nil || !q.platform.usmFuncs().Complete() {
		return 0, clapi.USM{}, errkind.New(errkind.NotSupported, op, "the queue's platform does not provide cl_intel_unified_shared_memory")
	}
	id, err := q.lock(op)
	return id, q.platform.usmFuncs(), err
}

// memcpy copies n bytes with clEnqueueMemcpyINTEL. Either side may be USM
// of the queue's context or ordinary host memory that stays valid (and, if
// not blocking, untouched) until the copy completes. With blocking the call
// returns after the copy.
func (q *Queue) memcpy(blocking bool, dst, src, n uintptr) error {
	id, f, err := q.usmFn("clEnqueueMemcpyINTEL")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	return f.EnqueueMemcpy(id, blocking, dst, src, n)
}
