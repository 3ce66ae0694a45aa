package levelzero

import (
	"strconv"
	"sync"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/evtable"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/kernelparams"
	"github.com/usmbridge/usmbridge/internal/programs"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// Programs and kernels (docs/native.md, "Kernels"): SPIR-V modules
// (zeModuleCreate) built for a queue's context and device, their kernels
// (zeKernelCreate), launched on an immediate command list
// (zeKernelSetGroupSize, zeKernelSetArgumentValue,
// zeCommandListAppendLaunchKernel) with a host-visible event of the
// context that the launch signals. The context keeps its programs until
// it is closed (a Backend's: until the Backend closes).

// progCache holds the programs built in one context, and the events of
// its launches.
type progCache struct {
	progs programs.Cache[*program]
	evs   launchEvents
}

// close releases every program of the context and the launch events; it
// refuses (usm.ErrValue) while a launch event is still held.
func (c *progCache) close() error {
	if n := c.evs.held(); n > 0 {
		return errValue("levelzero.Context.Close", itoa(n)+" kernel launch events are not closed, or their launches not done")
	}
	if err := c.progs.Close(); err != nil {
		return err
	}
	return c.evs.close()
}

// BuildProgram returns the SPIR-V module src builds for the queue's
// context and device (zeModuleCreate with src.Options as build flags),
// built the first time and kept by the context. Level Zero builds SPIR-V
// only: OpenCL C is usm.ErrNotSupported (scripts/spirv.sh makes SPIR-V
// from it). A failed build is a *usm.BuildError with the driver's build
// log. A queue whose device is unknown (a command queue borrowed from a
// SYCL runtime) builds nothing.
func (q *Queue) BuildProgram(src usm.ProgramSource) (usm.Program, error) {
	const op = "levelzero.Queue.BuildProgram"
	if err := src.Check(); err != nil {
		return nil, err
	}
	if len(src.SPIRV) == 0 {
		return nil, errkind.New(errkind.NotSupported, op, "Level Zero builds SPIR-V modules only; compile the OpenCL C to SPIR-V (scripts/spirv.sh)")
	}
	if !api.HasKernels() {
		return nil, errkind.New(errkind.NotSupported, op, "the Level Zero loader lacks the module and kernel entry points")
	}
	if q == nil || q.dev == nil {
		return nil, errkind.New(errkind.NotSupported, op, "the queue's device is unknown (a queue borrowed from a SYCL runtime)")
	}
	if _, err := q.h.RLock(op); err != nil {
		return nil, err
	}
	defer q.h.RUnlock()
	ch, err := q.ctx.lock(op)
	if err != nil {
		return nil, err
	}
	defer q.ctx.unlock()
	c := &q.ctx.progs
	p, err := c.progs.Get(op, programs.LookupKey(uintptr(q.dev.h), "", src.SPIRV, src.Options), func(key programs.Key) (*program, error) {
		// Checked before the driver sees it (kernelparams.CheckSPIRV says
		// why), and handed over in little-endian words.
		il, err := kernelparams.CheckSPIRV(op, []byte(key.Src))
		if err != nil {
			return nil, err
		}
		direct := api.DirectHandles(ch)
		m, log, err := api.ModuleCreate(ch, q.dev.h, il, key.CFlags(), direct)
		if err != nil {
			if !direct {
				log = "(no build log: the Level Zero loader wraps handles, and does not wrap the log of a failed build; docs/native.md)"
			}
			return nil, &usm.BuildError{Op: "zeModuleCreate", Log: log, Err: err}
		}
		p := &program{ctx: q.ctx, ctxh: ch, dev: q.dev, key: key, cache: c, params: kernelparams.FromSPIRV(il)}
		p.h.Init(uintptr(m), "ze_module_handle_t", livePrograms)
		q.ctx.children.Add(1)
		return p, nil
	})
	if err != nil {
		return nil, err // a nil *program in the interface would not be nil
	}
	return p, nil
}

// program is a Level Zero module built for one device
// (Queue.BuildProgram). It implements usm.Program: Kernel gives its
// kernels, made once per name; Close releases them and the module, once,
// for every holder.
type program struct {
	h   ffi.Handle
	ctx *Context
	// ctxh is ctx's handle, open while the program is: a context closes
	// its programs first (Context.close), and a program its kernels, each
	// after the launch in progress (usm.Kernel). So a launch reads it
	// without locking the context.
	ctxh  zeapi.Context
	dev   *device
	key   programs.Key
	cache *progCache
	// params: each kernel's parameters, read from the SPIR-V (Level Zero
	// has no query for them).
	params map[string][]kernelparams.Kind

	kernels programs.Kernels[*usm.Kernel]
}

var _ usm.Program = (*program)(nil)

// Kernel returns the kernel of that name (zeKernelCreate, once per
// name); a name the module lacks is a usm.ErrValue error.
func (p *program) Kernel(name string) (*usm.Kernel, error) {
	const op = "levelzero.Program.Kernel"
	return p.kernels.Get(op, name, func(cname []byte) (*usm.Kernel, error) {
		mh, err := p.h.RLock(op)
		if err != nil {
			return nil, err
		}
		defer p.h.RUnlock()
		kh, n, err := api.KernelCreate(zeapi.Module(mh), cname)
		if err != nil {
			return nil, errkind.Wrap(errkind.Value, op, "no kernel "+errkind.Quote(name)+" in the module", err)
		}
		kl := &kernel{raw: kh, prog: p, name: name, params: make([]kernelparams.Kind, n), vals: make([]uint64, n), sizes: make([]int, n),
			ptrs: make([]uintptr, 0, n), q: zeapi.NewTypeQuery(n), calls: api.NewLaunch(n)}
		copy(kl.params, p.params[name])
		kl.h.Init(uintptr(kh), "ze_kernel_handle_t", liveKernels)
		return usm.NewKernel(name, n, kl), nil
	})
}

// Close releases the kernels and the module (zeKernelDestroy,
// zeModuleDestroy) once, after launches in progress, and drops it from
// its context's cache.
func (p *program) Close() error {
	if p == nil {
		return nil
	}
	p.cache.progs.Drop(p.key, p)
	return p.kernels.Close(func() error {
		return p.h.Close(func(raw uintptr) error {
			if err := api.ModuleDestroy(zeapi.Module(raw)); err != nil {
				return err
			}
			p.ctx.children.Add(-1)
			return nil
		})
	})
}

// kernel is a ze_kernel_handle_t as usm.Kernel drives it (usm.Launcher):
// its arguments and group size are state of the kernel object, which
// usm.Kernel keeps to one launch at a time and away from Close, so a
// launch uses raw, the handle, and its scratch without a lock of its own.
// The scratch is the memory the driver reads during a launch, kept so a
// launch allocates nothing.
type kernel struct {
	h    ffi.Handle // for Close: once, and counted live
	raw  zeapi.Kernel
	prog *program
	name string

	params []kernelparams.Kind // what each parameter takes, where the SPIR-V says
	// The arguments as the kernel object holds them: each one's value
	// and size as last set (size 0: not set since the kernel was made, or
	// since a launch failed), so a launch sets only those that changed.
	vals  []uint64
	sizes []int
	ptrs  []uintptr // this launch's pointer arguments, for MemTypes
	q     *zeapi.TypeQuery
	calls *zeapi.Launch
	group [3]uint32
	count zeapi.GroupCount
	last  usm.Range // the range group and count were set for
	waits []zeapi.Event
	pins  evtable.Pins // this package's events the launch follows
}

// Launch implements usm.Launcher: q must be an immediate command list of
// the module's context and device (a Backend's queue is one). Pointer
// arguments must be USM the context knows (zeMemGetAllocProperties),
// checked before anything is set. On a synchronous list (a Backend's) the
// launch is done when it returns, and the Event is the zero one;
// elsewhere the launch signals a host-visible event of the context, the
// returned Event. Events of this package in the same context are waited
// for by the list, others on the host first. The native calls take one
// crossing into C, and one more before it for the pointers' checks
// (RATIONALE.md, "A Level Zero launch: one crossing, no event it does not
// need").
func (k *kernel) Launch(q usm.Queue, r usm.Range, after []usm.Event, args []usm.Arg) (usm.Event, error) {
	const op = "levelzero.Kernel.Launch"
	p := k.prog
	zq, ok := q.(*Queue)
	switch {
	case !ok || zq == nil:
		return usm.Event{}, errValue(op, "kernel "+errkind.Quote(k.name)+" is a Level Zero kernel; the queue is not a Level Zero queue")
	case zq.kind != immediateList:
		return usm.Event{}, errValue(op, "kernels are appended to immediate command lists, not to a command queue")
	case zq.dev != p.dev || (zq.ctx != p.ctx && zq.ctx.Native() != p.ctx.Native()):
		return usm.Event{}, errValue(op, "the queue is not of the context and device kernel "+errkind.Quote(k.name)+" was built for")
	}
	lh, err := zq.lock(op)
	if err != nil {
		return usm.Event{}, err
	}
	defer zq.h.Unlock()
	return k.launch(op, zq, zeapi.CommandList(lh), r, after, args)
}

// launch is Launch with the list locked: one call on a list at a time.
// (A Backend's copies and waits also hold Queue.serial, since theirs are
// several calls and events of the device; a launch is one call, on its
// own events.) The kernel is open, and with it its program and the
// program's context (program.ctxh): usm.Kernel keeps Close away.
func (k *kernel) launch(op string, zq *Queue, lh zeapi.CommandList, r usm.Range, after []usm.Event, args []usm.Arg) (usm.Event, error) {
	p, kh := k.prog, k.raw
	if err := k.checkArgs(op, p.ctxh, args); err != nil {
		return usm.Event{}, err
	}
	if !sameRange(r, k.last) {
		if err := k.setRange(kh, r); err != nil {
			return usm.Event{}, err
		}
	}
	if len(after) > 0 {
		defer k.doneWaits()
		if err := k.follow(op, after); err != nil {
			return usm.Event{}, err
		}
	}
	// A launch on a synchronous list is done when its append returns, so
	// it needs no event, and returns the zero Event, which is complete.
	// Elsewhere it signals an event of the context, reset first.
	var ev *event
	var signal zeapi.Event
	if !zq.synchronous {
		var err error
		if ev, err = p.cache.evs.get(p.ctx); err != nil {
			return usm.Event{}, err
		}
		signal = ev.raw
	}
	for i, a := range args {
		if size := a.Size(); size != k.sizes[i] || a.Bits() != k.vals[i] {
			k.vals[i], k.sizes[i] = a.Bits(), size
			k.calls.SetArgumentValue(kh, uint32(i), uintptr(size), unsafe.Pointer(&k.vals[i]))
		}
	}
	k.calls.Append(lh, kh, &k.count, signal, k.waits)
	if argi, err := k.calls.Run(); err != nil {
		clear(k.sizes) // what the kernel object holds is unknown now: set everything next time
		if ev != nil {
			p.cache.evs.put(ev, true) // nothing was appended that signals it
		}
		if argi >= 0 {
			return usm.Event{}, errkind.Wrap(errkind.Value, op, "argument "+strconv.Itoa(argi)+" of kernel "+errkind.Quote(k.name), err)
		}
		return usm.Event{}, err
	}
	if ev == nil {
		return usm.Event{}, nil
	}
	return usm.NewEvent(events, events.t.Put(ev)), nil
}

// checkArgs refuses an argument its parameter cannot take
// (kernelparams.Check) and a pointer that is not USM of the kernel's
// context, in the arguments' order; the pointers are asked about in one
// crossing into C.
func (k *kernel) checkArgs(op string, ch zeapi.Context, args []usm.Arg) error {
	k.ptrs = k.ptrs[:0]
	for _, a := range args {
		if a.IsPointer() && a.Bits() != 0 {
			k.ptrs = append(k.ptrs, uintptr(a.Bits()))
		}
	}
	var types []uint32
	if len(k.ptrs) > 0 {
		types = api.MemTypes(ch, k.ptrs, k.q)
	}
	j := 0
	for i, a := range args {
		if err := kernelparams.Check(op, k.name, i, k.params[i], a.IsPointer()); err != nil {
			return err
		}
		if !a.IsPointer() {
			continue
		}
		known := a.Bits() != 0 && types[j] != zeapi.MemoryTypeUnknown
		if a.Bits() != 0 {
			j++
		}
		if !known {
			return errValue(op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(k.name)+": 0x"+strconv.FormatUint(a.Bits(), 16)+" is not USM of the kernel's context")
		}
	}
	return nil
}

// follow goes through the events the launch follows (evtable.Follow):
// this package's of the kernel's context go on the wait list, others are
// waited for on the host. The caller ends the pins (doneWaits).
func (k *kernel) follow(op string, after []usm.Event) error {
	ctx := k.prog.ctx
	return evtable.Follow(events.t, usm.EventSource(events), after, &k.pins, op, func(_ int, e *event) error {
		eh, err := e.rlock(op)
		if err != nil {
			return err
		}
		e.h.RUnlock() // the pin (Follow) keeps it alive until doneWaits
		if c := e.pool.ctx; c != ctx && c.Native() != ctx.Native() {
			return api.EventHostSynchronize(eh, zeapi.Infinite)
		}
		k.waits = append(k.waits, eh)
		return nil
	})
}

// setRange sets the group size (the range's work-groups, or the driver's
// suggestion) and the group count of r.
func (k *kernel) setRange(kh zeapi.Kernel, r usm.Range) error {
	const op = "levelzero.Kernel.Launch"
	k.last = usm.Range{}
	var g [3]uint32
	for i := range 3 {
		g[i] = 1
		if i < r.Dims {
			g[i] = uint32(r.Global[i])
		}
	}
	if r.HasLocal() {
		for i := range 3 {
			k.group[i] = 1
			if i < r.Dims {
				k.group[i] = uint32(r.Local[i])
			}
		}
	} else if err := api.KernelSuggestGroupSize(kh, g[0], g[1], g[2], &k.group); err != nil {
		return err
	}
	for i := range 3 {
		if k.group[i] == 0 || g[i]%k.group[i] != 0 {
			return errValue(op, "work-group extent "+strconv.Itoa(int(k.group[i]))+" does not divide the global extent "+strconv.Itoa(int(g[i])))
		}
	}
	if err := api.KernelSetGroupSize(kh, k.group[0], k.group[1], k.group[2]); err != nil {
		return errkind.Wrap(errkind.Value, op, "work-groups of "+strconv.Itoa(int(k.group[0]))+"×"+strconv.Itoa(int(k.group[1]))+"×"+strconv.Itoa(int(k.group[2])), err)
	}
	k.count = zeapi.GroupCount{X: g[0] / k.group[0], Y: g[1] / k.group[1], Z: g[2] / k.group[2]}
	k.last = r
	return nil
}

// sameRange is a == b without the call to memequal that == of the
// arrays costs: a launch with the range of the last keeps the kernel's
// group size.
func sameRange(a, b usm.Range) bool {
	return a.Dims == b.Dims && a.Global[0] == b.Global[0] && a.Global[1] == b.Global[1] && a.Global[2] == b.Global[2] &&
		a.Local[0] == b.Local[0] && a.Local[1] == b.Local[1] && a.Local[2] == b.Local[2]
}

func (k *kernel) doneWaits() {
	events.t.Unpin(&k.pins, func(e *event) { e.launches().put(e, false) })
	clear(k.waits)
	k.waits = k.waits[:0]
}

// Close destroys the kernel once (zeKernelDestroy), after a launch in
// progress.
func (k *kernel) Close() error {
	return k.h.Close(func(raw uintptr) error { return api.KernelDestroy(zeapi.Kernel(raw)) })
}

// launchEvents are a context's host-visible events that launches signal,
// in pools of launchPoolSize, reused once released and done (reset by the
// launch that reuses them).
type launchEvents struct {
	mu    sync.Mutex
	pools []*eventPool
	free  []*event
	busy  []*event // released before their launch signalled them
	all   []*event
}

const launchPoolSize = 64

func (l *launchEvents) get(c *Context) (*event, error) {
	l.mu.Lock()
	if len(l.busy) > 0 {
		l.reclaim()
	}
	if len(l.free) == 0 {
		if err := l.grow(c); err != nil {
			l.mu.Unlock()
			return nil, err
		}
	}
	e := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	l.mu.Unlock()
	return e, nil
}

// grow adds a pool of launchPoolSize events; l.mu is held.
func (l *launchEvents) grow(c *Context) error {
	pool, err := newEventPool(c, launchPoolSize, true)
	if err != nil {
		return err
	}
	l.pools = append(l.pools, pool)
	for i := range uint32(launchPoolSize) {
		e, err := pool.newEvent(i)
		if err != nil {
			return err
		}
		l.free = append(l.free, e)
		l.all = append(l.all, e)
	}
	return nil
}

// put makes a released event available again once its launch is done
// (done says so, or a wait saw the event signalled): an event released
// earlier waits among the busy ones, since the device may still signal
// it. The next launch resets it, in the crossing into C of its append
// (zeapi.Launch), not here.
func (l *launchEvents) put(e *event, done bool) {
	if e.seen.Swap(false) || done {
		l.mu.Lock()
		l.free = append(l.free, e)
		l.mu.Unlock()
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.busy = append(l.busy, e)
	l.reclaim()
}

// reclaim frees the busy events that have been signalled; l.mu is held.
func (l *launchEvents) reclaim() {
	keep := l.busy[:0]
	for _, e := range l.busy {
		if e.hostSynchronize(zeapi.Poll) == nil {
			l.free = append(l.free, e)
		} else {
			keep = append(keep, e)
		}
	}
	clear(l.busy[len(keep):])
	l.busy = keep
}

// held returns the number of events in use: held by an Event not yet
// closed, or released before their launch signalled them.
func (l *launchEvents) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reclaim()
	return len(l.all) - len(l.free)
}

// close destroys the events and their pools; it refuses while an event is
// held by an Event not yet closed.
func (l *launchEvents) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reclaim()
	if n := len(l.all) - len(l.free); n > 0 {
		return errValue("levelzero.Context.Close", itoa(n)+" kernel launch events are not closed, or their launches not done")
	}
	for _, e := range l.all {
		if err := e.close(); err != nil {
			return err
		}
	}
	for _, p := range l.pools {
		if err := p.close(); err != nil {
			return err
		}
	}
	l.pools, l.free, l.busy, l.all = nil, nil, nil, nil
	return nil
}

// launches returns the launch events of the context whose pool e is of.
func (e *event) launches() *launchEvents { return &e.pool.ctx.progs.evs }

// eventSource is the package's table of launch events (usm.EventSource).
type eventSource struct{ t *evtable.Table[*event] }

var events = &eventSource{t: evtable.New[*event](liveLaunches)}

// WaitEvent waits for the launch (zeEventHostSynchronize).
func (s *eventSource) WaitEvent(id uint64) error {
	e, ok := s.t.Use(id)
	if !ok {
		return errValue("levelzero.Event.Wait", "the event was released")
	}
	err := e.hostSynchronize(zeapi.Infinite)
	if err == nil {
		e.seen.Store(true) // its release need not ask the driver again
	}
	if e, rel := s.t.Done(id); rel {
		e.launches().put(e, err == nil)
	}
	return err
}

// ReleaseEvent gives the event back to its context's pool, once.
func (s *eventSource) ReleaseEvent(id uint64) error {
	if e, rel := s.t.Take(id); rel {
		e.launches().put(e, false)
	}
	return nil
}
