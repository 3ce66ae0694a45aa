package levelzero

import (
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// Synchronising through native handles handed over by a SYCL runtime
// (sycl::get_native on a queue). From revision 4 of the SYCL Level Zero
// extension, and always with Unified Runtime's v2 adapter, that handle is
// an immediate command list rather than a command queue, and the two must
// be synchronised differently (docs/native.md):
//
//   - command queue → zeCommandQueueSynchronize. Best effort: it covers the
//     command lists already executed on that queue.
//   - immediate command list → zeCommandListHostSynchronize where the
//     loader exports it (≥ 1.10); else a barrier that signals a
//     host-visible event, then zeEventHostSynchronize. The fallback appends
//     to the runtime's list, so it is safe only while the SYCL side is not
//     appending concurrently.
//
// Passing a list where a queue is expected is type confusion that crashes
// inside the driver, so the two have separate, explicitly unsafe entry
// points.

type queueKind uint8

const (
	commandQueue queueKind = iota
	immediateList
)

// Queue is something to wait on: a ze_command_queue_handle_t or an
// immediate ze_command_list_handle_t a SYCL runtime handed out, or a
// Backend's own immediate command list for a device. It implements
// usm.Queue. Level Zero handles must not be used from two threads at once,
// so its calls are serialised.
type Queue struct {
	h       ffi.Handle
	ctx     *Context
	dev     *device // nil if unknown
	kind    queueKind
	foreign bool     // wrapped from a SYCL runtime: never destroyed here
	owner   *Backend // set for a Backend's queue, which only its Close releases
	// synchronous: an immediate list made here in QueueModeSynchronous,
	// whose appends return once their work is done (so a launch needs no
	// event: program.go).
	synchronous bool
	// serial, for a Backend's queue, serialises Wait with the Backend's
	// copies on the same list.
	serial *sync.Mutex
	// sync is the host-visible event the barrier fallback of an immediate
	// list signals (loader < 1.10); created on first use.
	sync *syncEvent
	// order holds the events OrderBefore uses (order.go), made on first use.
	orderOnce sync.Once
	order     *orderEvents
}

var _ usm.Queue = (*Queue)(nil)

// newImmediateList creates an immediate command list: appends are
// submitted at once; with QueueModeSynchronous each returns after the
// work completed.
func newImmediateList(c *Context, dev *device, mode zeapi.QueueMode) (*Queue, error) {
	const op = "levelzero.newImmediateList"
	h, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	dh, err := c.checkDevice(op, dev, false)
	if err != nil {
		return nil, err
	}
	l, err := api.CommandListCreateImmediate(h, dh, mode)
	if err != nil {
		return nil, err
	}
	c.children.Add(1)
	q := &Queue{ctx: c, dev: dev, kind: immediateList, synchronous: mode == zeapi.QueueModeSynchronous}
	q.h.Init(uintptr(l), "ze_command_list_handle_t", liveQueues)
	return q, nil
}

// UnsafeBorrowQueue wraps a ze_command_queue_handle_t that a SYCL runtime
// handed out. The caller guarantees raw is a live command queue of c's
// driver for as long as the Queue is used; Close only forgets it. Wait is
// zeCommandQueueSynchronize(raw, ∞), which covers the command lists
// already executed on the queue, not commands the runtime still holds
// back.
func (c *Context) UnsafeBorrowQueue(raw uintptr) (*Queue, error) {
	return c.borrow("levelzero.Context.UnsafeBorrowQueue", raw, commandQueue, "ze_command_queue_handle_t")
}

// UnsafeBorrowImmediateList wraps an immediate ze_command_list_handle_t
// that a SYCL runtime handed out; it must be a list of context c (the
// fallback below creates its event pool there). Wait uses
// zeCommandListHostSynchronize where the loader has it (≥ 1.10); else it
// appends a barrier that signals a host-visible event and waits for the
// event, which is safe only while the runtime is not appending to the
// list at the same time. Close forgets the list and destroys the
// fallback's event pool.
func (c *Context) UnsafeBorrowImmediateList(raw uintptr) (*Queue, error) {
	return c.borrow("levelzero.Context.UnsafeBorrowImmediateList", raw, immediateList, "ze_command_list_handle_t")
}

func (c *Context) borrow(op string, raw uintptr, kind queueKind, what string) (*Queue, error) {
	if _, err := c.lock(op); err != nil {
		return nil, err
	}
	defer c.unlock()
	if raw == 0 {
		return nil, errValue(op, "NULL "+what)
	}
	c.children.Add(1)
	q := &Queue{ctx: c, kind: kind, foreign: true}
	q.h.Init(raw, what, nil)
	return q, nil
}

// Native returns the native handle, for handing to other native code (a
// SYCL runtime's make_queue, for instance); 0 once closed.
func (q *Queue) Native() uintptr {
	if q == nil {
		return 0
	}
	return q.h.Raw()
}

// Wait returns when the work submitted to the queue has completed: see
// UnsafeBorrowQueue and UnsafeBorrowImmediateList for what each kind of
// handle covers.
func (q *Queue) Wait() error {
	if q != nil && q.serial != nil {
		q.serial.Lock()
		defer q.serial.Unlock()
	}
	return q.synchronize(zeapi.Infinite)
}

// synchronize waits up to timeout ns; the error wraps NotReady when the
// work is not done by then.
func (q *Queue) synchronize(timeout uint64) error {
	h, err := q.lock("levelzero.Queue.Wait")
	if err != nil {
		return err
	}
	defer q.h.Unlock()
	if q.kind == commandQueue {
		return api.CommandQueueSynchronize(zeapi.CommandQueue(h), timeout)
	}
	if api.HasCommandListHostSynchronize() {
		return api.CommandListHostSynchronize(zeapi.CommandList(h), timeout)
	}
	if q.sync == nil {
		var devs []*device
		if q.dev != nil {
			devs = append(devs, q.dev)
		}
		s, err := newSyncEvent(q.ctx, devs)
		if err != nil {
			return err
		}
		q.sync = s
	}
	return q.sync.barrierWait(zeapi.CommandList(h), timeout)
}

func (q *Queue) lock(op string) (uintptr, error) {
	if q == nil {
		return 0, errValue(op, "nil *levelzero.Queue")
	}
	return q.h.Lock(op)
}

// Close destroys a list made here, or forgets a borrowed handle, and
// destroys the barrier fallback's event, once. A Backend's queue is
// released by the Backend's Close; its own Close refuses (usm.ErrValue).
func (q *Queue) Close() error {
	if q == nil {
		return nil
	}
	if q.owner != nil {
		return errValue("levelzero.Queue.Close", "the queue belongs to its Backend; close the Backend instead")
	}
	return q.close()
}

func (q *Queue) close() error {
	if q == nil {
		return nil
	}
	err := q.h.Close(func(raw uintptr) error {
		if !q.foreign {
			if err := api.CommandListDestroy(zeapi.CommandList(raw)); err != nil {
				return err
			}
		}
		q.ctx.children.Add(-1)
		return nil
	})
	if err != nil {
		return err
	}
	return firstErr(q.sync.close(), q.order.close())
}

// appendCopy appends a copy of n bytes (zeCommandListAppendMemoryCopy) to
// an immediate list, signalling signal (may be nil) after wait.
func (q *Queue) appendCopy(dst, src, n uintptr, signal *event, wait ...*event) error {
	return q.appendCmd("levelzero.Queue.appendCopy", signal, wait, func(h zeapi.CommandList, sig zeapi.Event, wait []zeapi.Event) error {
		return api.AppendMemoryCopy(h, dst, src, n, sig, wait)
	})
}

// appendBarrier appends a barrier (zeCommandListAppendBarrier): work
// after it starts when work before it is done; signal fires then.
func (q *Queue) appendBarrier(signal *event, wait ...*event) error {
	return q.appendCmd("levelzero.Queue.appendBarrier", signal, wait, func(h zeapi.CommandList, sig zeapi.Event, wait []zeapi.Event) error {
		return api.AppendBarrier(h, sig, wait)
	})
}

// appendCmd runs one zeCommandListAppend* call with the list locked and
// the signal and wait events resolved to native handles.
func (q *Queue) appendCmd(op string, signal *event, wait []*event, do func(h zeapi.CommandList, sig zeapi.Event, wait []zeapi.Event) error) error {
	h, err := q.lock(op)
	if err != nil {
		return err
	}
	defer q.h.Unlock()
	if q.kind != immediateList {
		return errValue(op, "commands are appended to command lists, not to a command queue")
	}
	var locked []*event
	defer func() {
		for _, e := range locked {
			e.h.RUnlock()
		}
	}()
	use := func(e *event) (zeapi.Event, error) {
		h, err := e.rlock(op)
		if err == nil {
			locked = append(locked, e)
		}
		return h, err
	}
	var sig zeapi.Event
	if signal != nil {
		if sig, err = use(signal); err != nil {
			return err
		}
	}
	hs := make([]zeapi.Event, 0, len(wait))
	for _, e := range wait {
		h, err := use(e)
		if err != nil {
			return err
		}
		hs = append(hs, h)
	}
	return do(zeapi.CommandList(h), sig, hs)
}

// syncEvent is a one-slot host-visible event pool used to wait for an
// immediate command list through a barrier. The caller serialises use.
type syncEvent struct {
	pool *eventPool
	ev   *event
}

func newSyncEvent(ctx *Context, devs []*device) (*syncEvent, error) {
	pool, err := newEventPool(ctx, 1, true, devs...)
	if err != nil {
		return nil, err
	}
	ev, err := pool.newEvent(0)
	if err != nil {
		// Nothing may leak when the second step fails.
		_ = pool.close()
		return nil, err
	}
	return &syncEvent{pool: pool, ev: ev}, nil
}

// barrierWait appends a barrier signalling the event to the list handle h
// and waits for it, then resets the event for the next use.
func (s *syncEvent) barrierWait(list zeapi.CommandList, timeout uint64) error {
	eh, err := s.ev.rlock("levelzero.Queue.Wait")
	if err != nil {
		return err
	}
	defer s.ev.h.RUnlock()
	if err := api.AppendBarrier(list, eh, nil); err != nil {
		return err
	}
	if err := api.EventHostSynchronize(eh, timeout); err != nil {
		return err
	}
	return api.EventHostReset(eh)
}

func (s *syncEvent) close() error {
	if s == nil {
		return nil
	}
	err1 := s.ev.close()
	err2 := s.pool.close()
	if err1 != nil {
		return err1
	}
	return err2
}

// eventPool is a ze_event_pool_handle_t.
type eventPool struct {
	h      ffi.Handle
	ctx    *Context
	count  uint32
	events atomic.Int64
}

// newEventPool creates a pool of count events. hostVisible events can be
// signalled and waited for by the host; devs may be empty (all devices of
// the context).
func newEventPool(c *Context, count uint32, hostVisible bool, devs ...*device) (*eventPool, error) {
	const op = "levelzero.newEventPool"
	h, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	if count == 0 {
		return nil, errValue(op, "an event pool needs at least one event")
	}
	var dhs []zeapi.Device
	for _, d := range devs {
		dh, err := c.checkDevice(op, d, false)
		if err != nil {
			return nil, err
		}
		dhs = append(dhs, dh)
	}
	p, err := api.EventPoolCreate(h, count, hostVisible, dhs)
	if err != nil {
		return nil, err
	}
	c.children.Add(1)
	ep := &eventPool{ctx: c, count: count}
	ep.h.Init(uintptr(p), "ze_event_pool_handle_t", livePools)
	return ep, nil
}

// close destroys the pool once; its events must be closed first.
func (p *eventPool) close() error {
	if p == nil {
		return nil
	}
	return p.h.Close(func(raw uintptr) error {
		if n := p.events.Load(); n != 0 {
			return errValue("levelzero.eventPool.close", itoa(int(n))+" events of the pool are still alive")
		}
		if err := api.EventPoolDestroy(zeapi.EventPool(raw)); err != nil {
			return err
		}
		p.ctx.children.Add(-1)
		return nil
	})
}

// event is a ze_event_handle_t. Unlike other handles, one event may be
// signalled by one goroutine while another waits for it, so uses take the
// shared lock and only close takes the exclusive one.
type event struct {
	h    ffi.Handle
	pool *eventPool
	seen atomic.Bool // a launch event a wait saw signalled (program.go)
	// raw is h's handle, for a holder that keeps Close away without the
	// lock: a launch event between launchEvents.get and put, which its
	// pools' close refuses (program.go).
	raw zeapi.Event
}

// newEvent creates the event at index, with host scope for signal and
// wait so the host sees memory written before the signal.
func (p *eventPool) newEvent(index uint32) (*event, error) {
	const op = "levelzero.eventPool.newEvent"
	if p == nil {
		return nil, errValue(op, "nil event pool")
	}
	h, err := p.h.Lock(op)
	if err != nil {
		return nil, err
	}
	defer p.h.Unlock()
	if index >= p.count {
		return nil, errValue(op, "index "+itoa(int(index))+" is outside the pool of "+itoa(int(p.count)))
	}
	e, err := api.EventCreate(zeapi.EventPool(h), index)
	if err != nil {
		return nil, err
	}
	p.events.Add(1)
	ev := &event{pool: p, raw: e}
	ev.h.Init(uintptr(e), "ze_event_handle_t", liveEvents)
	return ev, nil
}

func (e *event) rlock(op string) (zeapi.Event, error) {
	if e == nil {
		return 0, errValue(op, "nil event")
	}
	h, err := e.h.RLock(op)
	return zeapi.Event(h), err
}

// close destroys the event once.
func (e *event) close() error {
	if e == nil {
		return nil
	}
	return e.h.Close(func(raw uintptr) error {
		if err := api.EventDestroy(zeapi.Event(raw)); err != nil {
			return err
		}
		e.pool.events.Add(-1)
		return nil
	})
}

// hostSynchronize waits until the event is signalled or timeout ns passed
// (then the error wraps NotReady).
func (e *event) hostSynchronize(timeout uint64) error {
	h, err := e.rlock("levelzero.event.hostSynchronize")
	if err != nil {
		return err
	}
	defer e.h.RUnlock()
	return api.EventHostSynchronize(h, timeout)
}

// hostReset resets the event to not signalled.
func (e *event) hostReset() error {
	h, err := e.rlock("levelzero.event.hostReset")
	if err != nil {
		return err
	}
	defer e.h.RUnlock()
	return api.EventHostReset(h)
}
