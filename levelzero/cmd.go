package levelzero

import (
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/live"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
)

// QueueMode is a ze_command_queue_mode_t.
type QueueMode = zeapi.QueueMode

// Command queue modes.
const (
	QueueModeDefault      = zeapi.QueueModeDefault
	QueueModeSynchronous  = zeapi.QueueModeSynchronous
	QueueModeAsynchronous = zeapi.QueueModeAsynchronous
)

// Timeouts for the Synchronize calls, in nanoseconds.
const (
	Poll     = zeapi.Poll     // return at once: SUCCESS or NOT_READY
	Infinite = zeapi.Infinite // wait until done or the device is lost
)

// object is the common part of queues, lists, event pools and events: a
// native handle guarded so that a destroyed object never reaches C, and
// so that one handle is not used from two goroutines at once (Level Zero
// handles are not thread-safe, per the SYCL Level Zero extension).
type object struct {
	h       ffi.Handle
	foreign bool // wrapped from a SYCL runtime: never destroyed here
}

// init makes o own raw; a foreign handle is not counted as live.
func (o *object) init(raw uintptr, what string, counter *live.Counter, foreign bool) {
	o.foreign = foreign
	if foreign {
		counter = nil
	}
	o.h.Init(raw, what, counter)
}

func (o *object) lock(op, what string) (uintptr, error) {
	if o == nil {
		return 0, errValue(op, "nil "+what)
	}
	return o.h.Lock(op)
}

func (o *object) unlock() { o.h.Unlock() }

// destroy runs fn on the handle once, unless the object is foreign (the
// runtime that made it keeps ownership); later calls do nothing.
func (o *object) destroy(fn func(h uintptr) error, parent *atomic.Int64) error {
	if o == nil {
		return nil
	}
	return o.h.Close(func(raw uintptr) error {
		if o.foreign {
			return nil
		}
		if err := fn(raw); err != nil {
			return err
		}
		if parent != nil {
			parent.Add(-1)
		}
		return nil
	})
}

// CommandQueue is a ze_command_queue_handle_t.
type CommandQueue struct {
	object
	ctx *Context
	dev *Device
}

// NewCommandQueue creates a command queue on dev (ordinal 0, index 0).
func (c *Context) NewCommandQueue(dev *Device, mode QueueMode) (*CommandQueue, error) {
	h, err := c.lock("levelzero.Context.NewCommandQueue")
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	dh, err := c.checkDevice("levelzero.Context.NewCommandQueue", dev, false)
	if err != nil {
		return nil, err
	}
	q, err := api.CommandQueueCreate(h, dh, mode)
	if err != nil {
		return nil, err
	}
	c.children.Add(1)
	cq := &CommandQueue{ctx: c, dev: dev}
	cq.init(uintptr(q), "ze_command_queue_handle_t", liveQueues, false)
	return cq, nil
}

// Close destroys the queue; a second call does nothing.
func (q *CommandQueue) Close() error {
	if q == nil {
		return nil
	}
	return q.destroy(func(h uintptr) error { return api.CommandQueueDestroy(zeapi.CommandQueue(h)) }, &q.ctx.children)
}

// Execute submits closed regular command lists (zeCommandQueueExecuteCommandLists).
func (q *CommandQueue) Execute(lists ...*CommandList) error {
	h, err := q.lock("levelzero.CommandQueue.Execute", "command queue")
	if err != nil {
		return err
	}
	defer q.unlock()
	if len(lists) == 0 {
		return errValue("levelzero.CommandQueue.Execute", "no command lists")
	}
	for i, l := range lists {
		for _, m := range lists[:i] {
			if l == m {
				return errValue("levelzero.CommandQueue.Execute", "the same command list is given twice")
			}
		}
	}
	hs := make([]zeapi.CommandList, len(lists))
	for i, l := range lists {
		lh, err := l.lock("levelzero.CommandQueue.Execute", "command list")
		if err != nil {
			return err
		}
		hs[i] = zeapi.CommandList(lh)
		defer l.unlock()
		if l.immediate {
			return errValue("levelzero.CommandQueue.Execute", "an immediate command list cannot be executed on a queue")
		}
	}
	return api.CommandQueueExecute(zeapi.CommandQueue(h), hs)
}

// Synchronize waits for the queue (zeCommandQueueSynchronize). With a
// finite timeout, NotReady (wrapped in *Error) means not yet done.
func (q *CommandQueue) Synchronize(timeout uint64) error {
	h, err := q.lock("levelzero.CommandQueue.Synchronize", "command queue")
	if err != nil {
		return err
	}
	defer q.unlock()
	return api.CommandQueueSynchronize(zeapi.CommandQueue(h), timeout)
}

// Wait is Synchronize(Infinite), so a queue is a usm.Queue.
func (q *CommandQueue) Wait() error { return q.Synchronize(Infinite) }

// CommandList is a ze_command_list_handle_t, regular or immediate.
type CommandList struct {
	object
	ctx       *Context
	dev       *Device
	immediate bool
	// sync is the host-visible event the barrier fallback of
	// HostSynchronize signals (loader < 1.10); created on first use.
	sync *syncEvent
}

// NewCommandList creates a regular command list: appends are recorded,
// Close ends recording and a CommandQueue executes it.
func (c *Context) NewCommandList(dev *Device) (*CommandList, error) {
	return c.newList(dev, false, 0)
}

// NewImmediateCommandList creates an immediate command list: appends are
// submitted at once. With QueueModeSynchronous each append returns after
// the work completed.
func (c *Context) NewImmediateCommandList(dev *Device, mode QueueMode) (*CommandList, error) {
	return c.newList(dev, true, mode)
}

func (c *Context) newList(dev *Device, immediate bool, mode QueueMode) (*CommandList, error) {
	op := "levelzero.Context.NewCommandList"
	if immediate {
		op = "levelzero.Context.NewImmediateCommandList"
	}
	h, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	dh, err := c.checkDevice(op, dev, false)
	if err != nil {
		return nil, err
	}
	var l zeapi.CommandList
	if immediate {
		l, err = api.CommandListCreateImmediate(h, dh, mode)
	} else {
		l, err = api.CommandListCreate(h, dh)
	}
	if err != nil {
		return nil, err
	}
	c.children.Add(1)
	cl := &CommandList{ctx: c, dev: dev, immediate: immediate}
	cl.init(uintptr(l), "ze_command_list_handle_t", liveLists, false)
	return cl, nil
}

// IsImmediate reports whether the list is immediate.
func (l *CommandList) IsImmediate() bool { return l.immediate }

// Close destroys the list and the fallback event it may hold; a second
// call does nothing.
func (l *CommandList) Close() error {
	if l == nil {
		return nil
	}
	if err := l.destroy(func(h uintptr) error { return api.CommandListDestroy(zeapi.CommandList(h)) }, &l.ctx.children); err != nil {
		return err
	}
	return l.sync.destroy()
}

// FinishRecording ends recording of a regular list (zeCommandListClose).
func (l *CommandList) FinishRecording() error {
	return l.simple("levelzero.CommandList.FinishRecording", api.CommandListClose)
}

// Reset empties a regular list for reuse.
func (l *CommandList) Reset() error {
	return l.simple("levelzero.CommandList.Reset", api.CommandListReset)
}

func (l *CommandList) simple(op string, fn func(zeapi.CommandList) error) error {
	h, err := l.lock(op, "command list")
	if err != nil {
		return err
	}
	defer l.unlock()
	return fn(zeapi.CommandList(h))
}

// waitList locks the events (read side) and returns their handles; the
// returned func unlocks them.
func waitList(op string, signal *Event, wait []*Event) (sig zeapi.Event, hs []zeapi.Event, unlock func(), err error) {
	var locked []*Event
	unlock = func() {
		for _, e := range locked {
			e.h.RUnlock()
		}
	}
	if signal != nil {
		if sig, err = signal.rlock(op); err != nil {
			return 0, nil, unlock, err
		}
		locked = append(locked, signal)
	}
	for _, e := range wait {
		h, err := e.rlock(op)
		if err != nil {
			return 0, nil, unlock, err
		}
		locked = append(locked, e)
		hs = append(hs, h)
	}
	return sig, hs, unlock, nil
}

// appendCmd runs one zeCommandListAppend* call with the list locked and
// the signal and wait events resolved to native handles.
func (l *CommandList) appendCmd(op string, signal *Event, wait []*Event, do func(h zeapi.CommandList, sig zeapi.Event, wait []zeapi.Event) error) error {
	h, err := l.lock(op, "command list")
	if err != nil {
		return err
	}
	defer l.unlock()
	sig, hs, unlock, err := waitList(op, signal, wait)
	defer unlock()
	if err != nil {
		return err
	}
	return do(zeapi.CommandList(h), sig, hs)
}

// AppendMemoryCopy appends a copy of n bytes (zeCommandListAppendMemoryCopy),
// signalling signal (may be nil) after waiting for wait.
func (l *CommandList) AppendMemoryCopy(dst, src, n uintptr, signal *Event, wait ...*Event) error {
	return l.appendCmd("levelzero.CommandList.AppendMemoryCopy", signal, wait, func(h zeapi.CommandList, sig zeapi.Event, wait []zeapi.Event) error {
		return api.AppendMemoryCopy(h, dst, src, n, sig, wait)
	})
}

// AppendMemoryFill appends a fill of n bytes with a repeated pattern
// (zeCommandListAppendMemoryFill); the pattern is copied by the driver
// when appending.
func (l *CommandList) AppendMemoryFill(dst uintptr, pattern []byte, n uintptr, signal *Event, wait ...*Event) error {
	const op = "levelzero.CommandList.AppendMemoryFill"
	if len(pattern) == 0 {
		return errValue(op, "empty pattern")
	}
	return l.appendCmd(op, signal, wait, func(h zeapi.CommandList, sig zeapi.Event, wait []zeapi.Event) error {
		return api.AppendMemoryFill(h, dst, pattern, n, sig, wait)
	})
}

// AppendBarrier appends a barrier (zeCommandListAppendBarrier): work
// after it starts when work before it is done; signal fires then.
func (l *CommandList) AppendBarrier(signal *Event, wait ...*Event) error {
	return l.appendCmd("levelzero.CommandList.AppendBarrier", signal, wait, func(h zeapi.CommandList, sig zeapi.Event, wait []zeapi.Event) error {
		return api.AppendBarrier(h, sig, wait)
	})
}

// HostSynchronize waits for an immediate list. It uses
// zeCommandListHostSynchronize where the loader exports it (≥ 1.10), and
// otherwise appends a barrier that signals a host-visible event and waits
// on the event (zeEventHostSynchronize); docs/native.md explains why.
func (l *CommandList) HostSynchronize(timeout uint64) error {
	const op = "levelzero.CommandList.HostSynchronize"
	h, err := l.lock(op, "command list")
	if err != nil {
		return err
	}
	defer l.unlock()
	if !l.immediate {
		return errValue(op, "only immediate command lists can be host-synchronised; execute a regular list on a CommandQueue and synchronise that")
	}
	if api.HasCommandListHostSynchronize() {
		return api.CommandListHostSynchronize(zeapi.CommandList(h), timeout)
	}
	if l.sync == nil {
		s, err := newSyncEvent(l.ctx, l.dev)
		if err != nil {
			return err
		}
		l.sync = s
	}
	return l.sync.barrierWait(zeapi.CommandList(h), timeout)
}

// Wait is HostSynchronize(Infinite) for immediate lists, so an immediate
// list is a usm.Queue.
func (l *CommandList) Wait() error { return l.HostSynchronize(Infinite) }

// syncEvent is a one-slot host-visible event pool used to wait for an
// immediate command list through a barrier. The caller serialises use.
type syncEvent struct {
	pool *EventPool
	ev   *Event
}

func newSyncEvent(ctx *Context, dev *Device) (*syncEvent, error) {
	var devs []*Device
	if dev != nil {
		devs = append(devs, dev)
	}
	pool, err := ctx.NewEventPool(1, true, devs...)
	if err != nil {
		return nil, err
	}
	ev, err := pool.NewEvent(0)
	if err != nil {
		// Nothing may leak when the second step fails.
		_ = pool.Close()
		return nil, err
	}
	return &syncEvent{pool: pool, ev: ev}, nil
}

// barrierWait appends a barrier signalling the event to the list handle h
// and waits for it, then resets the event for the next use.
func (s *syncEvent) barrierWait(list zeapi.CommandList, timeout uint64) error {
	eh, err := s.ev.rlock("levelzero.CommandList.HostSynchronize")
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

func (s *syncEvent) destroy() error {
	if s == nil {
		return nil
	}
	err1 := s.ev.Close()
	err2 := s.pool.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

// EventPool is a ze_event_pool_handle_t.
type EventPool struct {
	object
	ctx    *Context
	count  uint32
	events atomic.Int64
}

// NewEventPool creates a pool of count events. hostVisible events can be
// signalled and waited for by the host; devs may be empty (all devices).
func (c *Context) NewEventPool(count uint32, hostVisible bool, devs ...*Device) (*EventPool, error) {
	const op = "levelzero.Context.NewEventPool"
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
	ep := &EventPool{ctx: c, count: count}
	ep.init(uintptr(p), "ze_event_pool_handle_t", livePools, false)
	return ep, nil
}

// Close destroys the pool; its events must be destroyed first.
func (p *EventPool) Close() error {
	if p == nil {
		return nil
	}
	if n := p.events.Load(); n != 0 {
		return errValue("levelzero.EventPool.Close", itoa(int(n))+" events of the pool are still alive")
	}
	return p.destroy(func(h uintptr) error { return api.EventPoolDestroy(zeapi.EventPool(h)) }, &p.ctx.children)
}

// Event is a ze_event_handle_t. Unlike other handles, one event may be
// signalled by one goroutine while another waits for it, so uses take a
// read lock and only Close takes the write lock.
type Event struct {
	h    ffi.Handle
	pool *EventPool
}

// NewEvent creates the event at index, with host scope for signal and
// wait so the host sees memory written before the signal.
func (p *EventPool) NewEvent(index uint32) (*Event, error) {
	const op = "levelzero.EventPool.NewEvent"
	h, err := p.lock(op, "event pool")
	if err != nil {
		return nil, err
	}
	defer p.unlock()
	if index >= p.count {
		return nil, errValue(op, "index "+itoa(int(index))+" is outside the pool of "+itoa(int(p.count)))
	}
	e, err := api.EventCreate(zeapi.EventPool(h), index)
	if err != nil {
		return nil, err
	}
	p.events.Add(1)
	ev := &Event{pool: p}
	ev.h.Init(uintptr(e), "ze_event_handle_t", liveEvents)
	return ev, nil
}

func (e *Event) rlock(op string) (zeapi.Event, error) {
	if e == nil {
		return 0, errValue(op, "nil *levelzero.Event")
	}
	h, err := e.h.RLock(op)
	return zeapi.Event(h), err
}

// Close destroys the event; a second call does nothing.
func (e *Event) Close() error {
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

func (e *Event) simple(op string, fn func(zeapi.Event) error) error {
	h, err := e.rlock(op)
	if err != nil {
		return err
	}
	defer e.h.RUnlock()
	return fn(h)
}

// HostSignal signals the event from the host.
func (e *Event) HostSignal() error {
	return e.simple("levelzero.Event.HostSignal", api.EventHostSignal)
}

// HostReset resets the event to not signalled.
func (e *Event) HostReset() error {
	return e.simple("levelzero.Event.HostReset", api.EventHostReset)
}

// HostSynchronize waits until the event is signalled or timeout ns
// passed (then the error wraps NotReady).
func (e *Event) HostSynchronize(timeout uint64) error {
	return e.simple("levelzero.Event.HostSynchronize", func(h zeapi.Event) error { return api.EventHostSynchronize(h, timeout) })
}

// Signalled reports whether the event is signalled (zeEventQueryStatus).
func (e *Event) Signalled() (bool, error) {
	h, err := e.rlock("levelzero.Event.Signalled")
	if err != nil {
		return false, err
	}
	defer e.h.RUnlock()
	switch s := api.EventQueryStatus(h); s {
	case zeapi.Success:
		return true, nil
	case zeapi.NotReady:
		return false, nil
	default:
		return false, &Error{Op: "zeEventQueryStatus", Status: s}
	}
}
