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
		p := &program{ctx: q.ctx, dev: q.dev, key: key, cache: c, params: kernelparams.FromSPIRV(il)}
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
	h     ffi.Handle
	ctx   *Context
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
		kl := &kernel{prog: p, name: name, vals: make([]uint64, n), q: new(zeapi.TypeQuery), params: make([]kernelparams.Kind, n)}
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
// its arguments and group size are state of the kernel object, so a
// launch sets them and appends under the exclusive lock of the handle.
// The scratch is the memory the driver reads during a launch, kept so a
// launch allocates nothing.
type kernel struct {
	h    ffi.Handle
	prog *program
	name string

	vals   []uint64
	params []kernelparams.Kind // what each parameter takes, where the SPIR-V says
	q      *zeapi.TypeQuery
	group  [3]uint32
	count  zeapi.GroupCount
	last   usm.Range // the range group and count were set for
	waits  []zeapi.Event
	pins   evtable.Pins // this package's events the launch follows
}

// Launch implements usm.Launcher: q must be an immediate command list of
// the module's context and device (a Backend's queue is one). Pointer
// arguments must be USM the context knows (zeMemGetAllocProperties),
// checked before anything is set. The launch signals a host-visible event
// of the context, the returned Event; events of this package in the same
// context are waited for by the list, others on the host first.
func (k *kernel) Launch(q usm.Queue, r usm.Range, after []usm.Event, args []usm.Arg) (usm.Event, error) {
	const op = "levelzero.Kernel.Launch"
	p := k.prog
	zq, ok := q.(*Queue)
	switch {
	case !ok || zq == nil:
		return usm.Event{}, errValue(op, "kernel "+errkind.Quote(k.name)+" is a Level Zero kernel; the queue is not a Level Zero queue")
	case zq.kind != immediateList:
		return usm.Event{}, errValue(op, "kernels are appended to immediate command lists, not to a command queue")
	case zq.ctx.Native() != p.ctx.Native() || zq.dev != p.dev:
		return usm.Event{}, errValue(op, "the queue is not of the context and device kernel "+errkind.Quote(k.name)+" was built for")
	}
	if zq.serial != nil {
		zq.serial.Lock() // a Backend's list: serialised with its copies
		defer zq.serial.Unlock()
	}
	lh, err := zq.lock(op)
	if err != nil {
		return usm.Event{}, err
	}
	defer zq.h.Unlock()
	ch, err := p.ctx.lock(op)
	if err != nil {
		return usm.Event{}, err
	}
	defer p.ctx.unlock()
	kh, err := k.h.Lock(op)
	if err != nil {
		return usm.Event{}, errkind.Wrap(errkind.Value, op, "kernel "+errkind.Quote(k.name)+" is closed", err)
	}
	defer k.h.Unlock()
	for i, a := range args {
		if err := kernelparams.Check(op, k.name, i, k.params[i], a.IsPointer()); err != nil {
			return usm.Event{}, err
		}
		if a.IsPointer() && (a.Bits() == 0 || api.MemType(ch, uintptr(a.Bits()), k.q) == zeapi.MemoryTypeUnknown) {
			return usm.Event{}, errValue(op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(k.name)+": 0x"+strconv.FormatUint(a.Bits(), 16)+" is not USM of the kernel's context")
		}
	}
	if err := k.setRange(zeapi.Kernel(kh), r); err != nil {
		return usm.Event{}, err
	}
	for i, a := range args {
		k.vals[i] = a.Bits()
		if err := api.KernelSetArgumentValue(zeapi.Kernel(kh), uint32(i), uintptr(a.Size()), unsafe.Pointer(&k.vals[i])); err != nil {
			return usm.Event{}, errkind.Wrap(errkind.Value, op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(k.name), err)
		}
	}
	k.waits = k.waits[:0]
	defer k.doneWaits()
	err = evtable.Follow(events.t, usm.EventSource(events), after, &k.pins, op, func(_ int, le launchEvent) error {
		eh, err := le.ev.rlock(op)
		if err != nil {
			return err
		}
		le.ev.h.RUnlock() // the pin (Follow) keeps it alive until doneWaits
		if le.ctx.Native() != p.ctx.Native() {
			return api.EventHostSynchronize(eh, zeapi.Infinite)
		}
		k.waits = append(k.waits, eh)
		return nil
	})
	if err != nil {
		return usm.Event{}, err
	}
	ev, err := p.cache.evs.get(p.ctx)
	if err != nil {
		return usm.Event{}, err
	}
	eh, err := ev.rlock(op)
	if err != nil {
		p.cache.evs.put(ev, false)
		return usm.Event{}, err
	}
	err = api.AppendLaunchKernel(zeapi.CommandList(lh), zeapi.Kernel(kh), &k.count, eh, k.waits)
	ev.h.RUnlock()
	if err != nil {
		p.cache.evs.put(ev, false)
		return usm.Event{}, err
	}
	return usm.NewEvent(events, events.t.Put(launchEvent{ev: ev, ctx: p.ctx, cache: p.cache})), nil
}

// setRange sets the group size (the range's work-groups, or the driver's
// suggestion) and the group count of r.
func (k *kernel) setRange(kh zeapi.Kernel, r usm.Range) error {
	const op = "levelzero.Kernel.Launch"
	if r == k.last {
		return nil // the kernel keeps its group size
	}
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

func (k *kernel) doneWaits() {
	events.t.Unpin(&k.pins, func(le launchEvent) { le.cache.evs.put(le.ev, false) })
	clear(k.waits)
}

// Close destroys the kernel once (zeKernelDestroy), after a launch in
// progress.
func (k *kernel) Close() error {
	return k.h.Close(func(raw uintptr) error { return api.KernelDestroy(zeapi.Kernel(raw)) })
}

// launchEvents are a context's host-visible events that launches signal,
// in pools of launchPoolSize, reused once released (reset first).
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
	defer l.mu.Unlock()
	l.reclaim()
	if len(l.free) == 0 {
		pool, err := newEventPool(c, launchPoolSize, true)
		if err != nil {
			return nil, err
		}
		l.pools = append(l.pools, pool)
		for i := range uint32(launchPoolSize) {
			e, err := pool.newEvent(i)
			if err != nil {
				return nil, err
			}
			l.free = append(l.free, e)
			l.all = append(l.all, e)
		}
	}
	e := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	return e, nil
}

// put makes a released event available again, reset, once its launch
// has signalled it: an event released earlier waits among the busy ones,
// since the device may still signal it.
func (l *launchEvents) put(e *event, signalled bool) {
	if (signalled || e.seen.Swap(false)) && e.hostReset() == nil {
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
		if e.hostSynchronize(zeapi.Poll) == nil && e.hostReset() == nil {
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

// launchEvent is a launch's event and the context whose pool it is of.
type launchEvent struct {
	ev    *event
	ctx   *Context
	cache *progCache
}

// eventSource is the package's table of launch events (usm.EventSource).
type eventSource struct{ t *evtable.Table[launchEvent] }

var events = &eventSource{t: evtable.New[launchEvent](liveLaunches)}

// WaitEvent waits for the launch (zeEventHostSynchronize).
func (s *eventSource) WaitEvent(id uint64) error {
	le, ok := s.t.Use(id)
	if !ok {
		return errValue("levelzero.Event.Wait", "the event was released")
	}
	err := le.ev.hostSynchronize(zeapi.Infinite)
	if err == nil {
		le.ev.seen.Store(true) // its release need not ask the driver again
	}
	if le, rel := s.t.Done(id); rel {
		le.cache.evs.put(le.ev, err == nil)
	}
	return err
}

// ReleaseEvent gives the event back to its context's pool, once.
func (s *eventSource) ReleaseEvent(id uint64) error {
	if le, rel := s.t.Take(id); rel {
		le.cache.evs.put(le.ev, false)
	}
	return nil
}
