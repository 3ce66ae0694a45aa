package dpctl

import (
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/opencl"
)

// SYCL contexts and queues made from native OpenCL ones, so that SYCL consumers
// (dpctl, dpnp) can use USM the opencl backend allocated: see
// RATIONALE.md, "Native allocations and SYCL consumers".

// interopOp names the step in errors: SYCL's make_context (and
// make_queue).
const interopOp = "make_context"

// lentObjects holds the SYCL side made from each native context and
// queue lent to SYCL so far.
type lentObjects struct {
	mu     sync.Mutex
	ctxs   map[uintptr]*lentContext // by cl_context
	queues map[uintptr]*lentQueue   // by cl_command_queue
}

// lentContext is a native OpenCL context lent to SYCL for the life of the
// process. SYCL does not retain the native handles it is given (seen with
// DPC++ 2026.2: reference counts do not move when its context or queue is
// made or destroyed), and nothing tells when the last SYCL object made
// from them (a queue or array that Python code kept) is gone. So cl holds
// one reference that is never dropped, which also keeps the handle, the
// map's key, from being reused by another context.
type lentContext struct {
	cl  *opencl.Context // the reference lent to SYCL: never closed
	ref uintptr         // DPCTLSyclContextRef over it: never deleted
}

// lentQueue is a native OpenCL queue lent to SYCL for the life of the
// process, as lentContext.
type lentQueue struct {
	cl *opencl.Queue // the reference lent to SYCL: never closed
	q  *Queue        // the SYCL queue over it
}

// InteropQueue returns the queue of dpctl's runtime that wraps q's
// cl_command_queue (SYCL's make_queue), in a SYCL context made from q's
// cl_context (make_context): through it SYCL consumers reach USM the
// opencl backend allocated in that context, which no context of their own
// knows, and the work they submit to it goes into q itself, so q.Wait
// covers it. The SYCL context, the queue and one reference to each native
// object are made once and kept for the life of the process (opencl.Live
// counts the two lent references as a live context and queue). SYCL sees
// the queue as out of order (no in_order property is passed), so ordering
// another dpctl queue after it waits on the host.
//
// They are made only where the runtime can make them without failing (a
// C++ exception would end the process): the SYCL library exports both
// functions, the native context has one device, and that device is a
// device of one of SYCL's OpenCL default contexts with USM. Otherwise the
// error (usm.ErrNotSupported) says which condition failed.
func (b *Backend) InteropQueue(q *opencl.Queue) (*Queue, error) {
	if !b.interop.Present() {
		return nil, errkind.New(errkind.NotSupported, interopOp, "the SYCL library that dpctl loaded exports no make_context and make_queue")
	}
	// A handle in the map is a lent queue, alive for good: a live q with
	// that handle is that queue (0 once q is closed).
	b.lent.mu.Lock()
	l := b.lent.queues[q.Native()]
	b.lent.mu.Unlock()
	if l != nil {
		return l.q, nil
	}
	clq, err := q.Clone() // fails once q is closed; else the handle stays valid
	if err != nil {
		return nil, err
	}
	b.lent.mu.Lock()
	defer b.lent.mu.Unlock()
	if l := b.lent.queues[clq.Native()]; l != nil {
		_ = clq.Close() // the lent reference is already held
		return l.q, nil
	}
	lc, err := b.lendContext(q)
	if err != nil {
		_ = clq.Close()
		return nil, err
	}
	ref := b.interop.MakeOpenCLQueue(clq.Native(), lc.ref)
	if ref == 0 {
		_ = clq.Close()
		return nil, errkind.New(errkind.Memory, interopOp, "no memory for a SYCL queue")
	}
	sq := &Queue{b: b, ref: ref} // kept for the life of the process
	if b.lent.queues == nil {
		b.lent.queues = map[uintptr]*lentQueue{}
	}
	b.lent.queues[clq.Native()] = &lentQueue{cl: clq, q: sq}
	return sq, nil
}

// lendContext returns the SYCL context over q's cl_context, made on first
// use. Every condition under which make_context could throw is checked
// before it is called; b.lent.mu is held.
func (b *Backend) lendContext(q *opencl.Queue) (*lentContext, error) {
	c, err := q.Context()
	if err != nil {
		return nil, err
	}
	if l := b.lent.ctxs[c.Native()]; l != nil {
		_ = c.Close()
		return l, nil
	}
	ref, err := b.makeContext(c)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	l := &lentContext{cl: c, ref: ref}
	if b.lent.ctxs == nil {
		b.lent.ctxs = map[uintptr]*lentContext{}
	}
	b.lent.ctxs[c.Native()] = l
	return l, nil
}

// makeContext makes the SYCL context over c.
func (b *Backend) makeContext(c *opencl.Context) (uintptr, error) {
	devs, err := c.NativeDevices()
	if err != nil {
		return 0, err
	}
	if len(devs) != 1 {
		return 0, errkind.New(errkind.NotSupported, interopOp, "the native context has "+strconv.Itoa(len(devs))+" devices; SYCL contexts are made from single-device contexts only")
	}
	if !b.syclHasOpenCLDevice(devs[0]) {
		return 0, errkind.New(errkind.NotSupported, interopOp, "the native context's device is not among SYCL's OpenCL devices with USM")
	}
	a := b.api
	ref := b.interop.MakeOpenCLContext(c.Native(), true)
	if ref == 0 {
		return 0, errkind.New(errkind.Memory, interopOp, "no memory for a SYCL context")
	}
	// Pointers are classified in this context by whoever reads the memory
	// (DPCTLUSM_GetPointerType throws without USM): its one device must
	// be one of dpctl's root devices with USM, which the match above
	// implies and this makes sure of.
	if err := b.checkInteropDevice(ref); err != nil {
		a.ContextDelete(ref)
		return 0, err
	}
	return ref, nil
}

// checkInteropDevice checks that the SYCL context ref has one device, a
// root device of the Backend with USM.
func (b *Backend) checkInteropDevice(ref uintptr) error {
	a := b.api
	vec := a.ContextGetDevices(ref)
	if vec == 0 {
		return errkind.New(errkind.Value, interopOp, "the SYCL context lists no devices")
	}
	defer a.DeviceVectorDelete(vec)
	if n := a.DeviceVectorSize(vec); n != 1 {
		return errkind.New(errkind.Value, interopOp, "the SYCL context has "+strconv.Itoa(n)+" devices, the native one 1")
	}
	dev := a.DeviceVectorGetAt(vec, 0)
	if dev == 0 {
		return errkind.New(errkind.Value, interopOp, "the SYCL context lists no devices")
	}
	defer a.DeviceDelete(dev)
	if !b.isUSMRootDevice(dev) {
		return errkind.New(errkind.Value, interopOp, "the SYCL context's device is not one of dpctl's devices with USM")
	}
	return nil
}

// syclHasOpenCLDevice reports whether the cl_device_id d is a device of
// one of SYCL's OpenCL default contexts with USM, asked through their
// native sides (the cl_context SYCL's getNative gives): make_context then
// finds d among the devices SYCL's OpenCL adapter enumerated.
func (b *Backend) syclHasOpenCLDevice(d uintptr) bool {
	for _, c := range b.ctxs {
		n := c.native(b)
		if n == nil || n.cl == nil {
			continue
		}
		ids, err := n.cl.NativeDevices()
		if err != nil {
			continue
		}
		for _, id := range ids {
			if id == d {
				return true
			}
		}
	}
	return false
}

// isUSMRootDevice reports whether dev is one of the Backend's devices
// (itself, not a sub-device of it) with USM.
func (b *Backend) isUSMRootDevice(dev uintptr) bool {
	for _, d := range b.devs {
		if b.api.DeviceAreEq(d.ref, dev) {
			return d.cached != nil
		}
	}
	return false
}
