package pybridge

import (
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
)

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
	blk := cmem.Alloc(8) // C memory, as in takeExchange
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
