package dpctl

import (
	"slices"
	"sync"

	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// PinnedQueue is what binding a pointer to one queue needs, learnt once
// (PinQueue): the queue's context and whether it has USM, the queue's
// device, a copy of the queue that the arrays bound to it share, and the
// context's native side for allocation extents. BindRef of the pinned ref
// then takes one C call (DPCTLUSM_GetPointerType), or one native query,
// instead of nine, plus two for the extent.
type PinnedQueue struct {
	b   *Backend
	ref uintptr    // the DPCTLSyclQueueRef (the caller's)
	ctx uintptr    // DPCTLQueue_GetContext(ref) (owned)
	usm bool       // usmContext(ctx): pointers may be classified in ctx
	dev int        // position of the queue's device, or -1
	q   *Queue     // a copy of the queue, shared by the arrays bound to it
	nat *ctxNative // ctx's native side, for extents; nil if none
	own bool       // nat was made for this pin (not a default context's)
	// inOrder: the queue runs its commands in submission order, so a
	// command submitted later waits for the ones before it.
	inOrder bool
}

// pins are the Backend's pinned queues, searched by ref. The lock is held
// across a bind through a pin, so that Unpin cannot release its context
// and native side meanwhile.
type pins struct {
	mu sync.Mutex
	e  []*PinnedQueue
}

// PinQueue learns once what BindRef needs to bind pointers to ref, and
// keeps it until Unpin. The caller must keep the queue alive until then
// (pybridge holds the dpctl.SyclQueue object, which owns its ref for its
// whole life): a pinned ref is taken to be that queue, so a queue freed
// and another made at its address would be bound with the first one's
// facts. A queue whose device has no USM is pinned too, and BindRef then
// refuses it without asking SYCL again. nil, with nothing pinned, when
// the queue's context cannot be read or the queue copied (BindRef then
// says so).
func (b *Backend) PinQueue(ref syclobj.QueueRef) *PinnedQueue {
	r := ref.Pointer()
	if r == 0 {
		return nil
	}
	a := b.api
	ctx := a.QueueGetContext(r)
	if ctx == 0 {
		return nil
	}
	p := &PinnedQueue{b: b, ref: r, ctx: ctx, dev: -1}
	var def *defaultCtx
	p.usm, def = b.usmContext(ctx)
	if p.usm {
		if dev := a.QueueGetDevice(r); dev != 0 {
			p.dev = b.position(dev)
			a.DeviceDelete(dev)
		}
		if o := b.order; o.Present() {
			p.inOrder = o.QueueIsInOrder(r)
		}
		q := a.QueueCopy(r)
		if q == 0 {
			a.ContextDelete(ctx)
			return nil
		}
		p.q = b.ownQueue(q)
		if def != nil {
			p.nat = def.native(b)
		} else {
			p.nat, p.own = b.newNative(ctx), true
		}
	}
	b.pins.mu.Lock()
	b.pins.e = append(b.pins.e, p)
	b.pins.mu.Unlock()
	return p
}

// Queue returns the pinned queue's copy, which the arrays bound to it
// share (nil for a queue whose device has no USM). It stays valid while
// reachable, after Unpin too.
func (p *PinnedQueue) Queue() *Queue { return p.q }

// Device returns the position of the queue's device in Devices(), or -1.
func (p *PinnedQueue) Device() int { return p.dev }

// InOrder reports whether the queue runs its commands in submission order
// (false where the library cannot say): only then does a command submitted
// to it later see what the commands before it wrote.
func (p *PinnedQueue) InOrder() bool { return p.inOrder }

// Unpin forgets the queue and releases what PinQueue took. Arrays bound
// to the pin's queue copy keep that copy alive on their own. A second
// Unpin does nothing.
func (p *PinnedQueue) Unpin() {
	if p == nil {
		return
	}
	ps := &p.b.pins
	ps.mu.Lock()
	i := slices.Index(ps.e, p)
	if i >= 0 {
		ps.e = slices.Delete(ps.e, i, i+1)
	}
	ps.mu.Unlock()
	if i < 0 {
		return
	}
	if p.own {
		p.nat.release()
	}
	p.b.api.ContextDelete(p.ctx)
}

// bind is BindRef through a pin of ref; hit is false if ref is not
// pinned.
func (ps *pins) bind(b *Backend, ref, ptr uintptr) (info usm.PointerInfo, q usm.Queue, hit bool, err error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.e {
		if p.ref != ref {
			continue
		}
		if !p.usm {
			return usm.PointerInfo{}, nil, true, errQueueNoUSM()
		}
		// The native context is the queue's own, so what it reports of
		// ptr is what SYCL would: kind and extent in one query. SYCL is
		// asked where it has no native side or that side does not know
		// ptr; there is then no extent.
		info := p.nat.query(ptr)
		if info.Kind == usm.KindUnknown {
			info = usm.PointerInfo{Kind: usmKind(b.api.USMGetPointerType(ptr, p.ctx))}
			if info.Kind == usm.KindUnknown {
				return usm.PointerInfo{}, nil, true, errNotQueueUSM()
			}
		}
		info.Device = p.dev
		return info, p.q, true, nil
	}
	return usm.PointerInfo{}, nil, false, nil
}
