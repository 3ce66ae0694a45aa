package pybridge

import (
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/usm"
)

// After the import: the array is ordered after the work that writes it.
// A producer orders nothing for a stream it is not given, and a table
// hands its tensor over without synchronising, so the array is bound to
// the queue its data was written on where there is one, and waited for
// on the host where there is not (RATIONALE.md, "Queue ordering on the
// device"). The stream the producer is asked to order is chosen before the
// call (producer.go, consumerStream).

// orderTable waits, for a kDLOneAPI tensor t a table (api) handed over,
// on the producer's current work stream and, as on the __dlpack__ path,
// on x.sycl_queue.
func (g *GIL) orderTable(x Object, api uintptr, t *dlpack.Tensor) error {
	if t.DLDevice.Type != dlabi.OneAPI {
		return nil
	}
	if err := g.waitWorkStream((*dlabi.ExchangeAPI)(cmem.Ptr(api)), t.DLDevice); err != nil {
		return err
	}
	return g.waitProducerQueue(x)
}

// orderDunder orders t, imported from what x.__dlpack__ returned for req
// (legacy: from the retry without keywords), on its queue.
func (g *GIL) orderDunder(x Object, t *dlpack.Tensor, req request, legacy bool) error {
	// The stream was the caller's queue or the producer's own
	// (consumerStream): the array is bound to it, so whoever uses it (a
	// copy made here, a later export) waits for the queue its data was
	// written on.
	if req.bindTo != nil {
		if d := g.py.loadedDpctl(); d != nil && t.Backend == usm.Backend(d) && t.DLDevice.Type == dlabi.OneAPI && t.Device == req.bindTo.Device() {
			t.Queue = req.bindTo.Queue()
		} else if err := req.bindTo.Queue().Wait(); err != nil {
			// A tensor elsewhere than x.__dlpack_device__ said: nothing
			// ordered a queue of its device, so wait on the host.
			return err
		}
	}
	// With stream=None dpctl's producers do not synchronise: the data may
	// still be being written on the producer's queue. Wait on it, as the
	// DLPack consumer rules ask, when the producer exposes one: when no
	// queue was passed (a Go caller's own registry), and for a
	// pre-2023.12 producer, which may well ignore the stream it is given.
	// An out-of-order queue the caller named does not order what is
	// submitted to it after the producer's barrier ("Queue ordering on the
	// device"): wait on the producer's queue too.
	outOfOrder := req.bindTo != nil && !req.bindTo.InOrder()
	if (req.stream.isNil() || legacy || outOfOrder) && t.DLDevice.Type == dlabi.OneAPI {
		return g.waitProducerQueue(x)
	}
	return nil
}

// waitProducerQueue waits on x.sycl_queue if it is a dpctl.SyclQueue,
// with the GIL released; producers without one (AttributeError) are
// taken to be synchronised already. Any other exception reading it is
// the error, as itself (producerQueue reads it the same way).
func (g *GIL) waitProducerQueue(x Object) error {
	a := g.api()
	ty := g.dpctlTypes()
	if ty.queue == 0 || ty.queueRef == 0 {
		return nil
	}
	n := g.py.internedName("sycl_queue")
	if n == 0 {
		return g.fetch("sycl_queue")
	}
	q, found := a.LookupAttr(x.p, n)
	if found < 0 {
		return g.fetch("sycl_queue")
	}
	if found == 0 {
		return nil
	}
	defer a.DecRef(q) // keeps the queue, and so its ref, alive for the wait
	if a.Type(q) != ty.queue {
		return nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return err
	}
	ref := ty.queueRef.Call1(q)
	// The wait may be long: other Python threads run meanwhile (the one
	// that completes the producer's work may be one of them). q stays
	// referenced, so its ref stays valid.
	ts := a.SaveThread()
	defer a.RestoreThread(ts)
	return d.UnsafeBorrowQueue(ref).Wait()
}

// waitWorkStream waits on the producer's current work stream of dev, a
// sycl::queue* (DPCTLSyclQueueRef) for kDLOneAPI; NULL means nothing to
// wait on.
func (g *GIL) waitWorkStream(t *dlabi.ExchangeAPI, dev dlabi.Device) error {
	if t.CurrentWorkStream == 0 {
		return errkind.New(errkind.Buffer, "pybridge.FromDLPack", "current_work_stream is NULL: the producer cannot say what to wait on for a tensor on "+dev.String())
	}
	blk := cmem.Alloc(8) // C memory, as in callTable
	defer cmem.Free(blk, 8)
	r := int32(ffi.Fn(t.CurrentWorkStream).Call3(uintptr(dev.Type), uintptr(dev.ID), blk))
	s := *(*uintptr)(cmem.Ptr(blk))
	if r != 0 || g.api().ErrOccurred() != 0 { // success with an exception set fails too
		if g.api().ErrOccurred() != 0 {
			return g.fetch("pybridge.FromDLPack")
		}
		return errkind.New(errkind.Buffer, "pybridge.FromDLPack", "current_work_stream failed without setting an exception")
	}
	if s == 0 {
		return nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return errkind.Wrap(errkind.Buffer, "pybridge.FromDLPack", "waiting on a SYCL queue needs dpctl", err)
	}
	return d.UnsafeBorrowQueue(s).Wait()
}
