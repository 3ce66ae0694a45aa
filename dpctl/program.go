package dpctl

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/usmbridge/usmbridge/dpctl/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/evtable"
	"github.com/usmbridge/usmbridge/internal/kernelparams"
	"github.com/usmbridge/usmbridge/internal/live"
	"github.com/usmbridge/usmbridge/internal/programs"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/usm"
)

// Programs and kernels through dpctl's C library (docs/native.md,
// "Kernels"): DPCTLKernelBundle_CreateFromOCLSource / CreateFromSpirv
// build a SYCL kernel bundle for a queue's context and device,
// DPCTLKernelBundle_GetKernel gives its kernels, DPCTLQueue_SubmitRange
// and SubmitNDRange launch them with dependency events. A kernel
// launched on a dpnp array's own queue is ordered with dpnp's work there.
// Programs are kept by the Backend, which lives as long as the process,
// until their Close.

var counters = live.NewSet("dpctl", "programs", "kernels", "events")

var (
	livePrograms = counters.Counter("programs")
	liveKernels  = counters.Counter("kernels")
	liveEvents   = counters.Counter("events")
)

// Live returns how many programs, kernels and launch events made through
// this package are alive, by kind. Programs stay until closed (the
// Backend keeps them for the process otherwise).
func Live() map[string]int64 { return counters.Snapshot() }

// progCache is the Backend's cache: programs by key (Dev 0: SYCL devices
// are told apart by the runtime), each for one context and device
// (compared with DPCTLContext_AreEq and DPCTLDevice_AreEq).
type progCache struct {
	mu sync.Mutex
	by map[programs.Key][]*program
}

// BuildProgram returns the program src builds for the queue's context and
// device (DPCTLKernelBundle_CreateFromOCLSource for OpenCL C, which dpctl
// supports on OpenCL contexts only; CreateFromSpirv for SPIR-V), built the
// first time and kept by the Backend; the queue remembers it, so asking
// again costs one map lookup. A failed build is a *usm.BuildError: dpctl
// reports no log, so on an OpenCL context the source is built once more
// through the native cl_command_queue under the SYCL queue (package
// opencl) for the compiler's log.
func (q *Queue) BuildProgram(src usm.ProgramSource) (usm.Program, error) {
	const op = "dpctl.Queue.BuildProgram"
	if err := src.Check(); err != nil {
		return nil, err
	}
	b := q.b
	k := b.api.Kernels()
	if !k.Present() {
		return nil, errkind.New(errkind.NotSupported, op, b.api.Path()+" lacks the kernel bundle and submit entry points")
	}
	key := programs.LookupKey(0, src.OpenCLC, src.SPIRV, src.Options)
	q.progMu.Lock()
	defer q.progMu.Unlock()
	if p := q.progs[key]; p != nil && !p.closed.Load() {
		return p, nil
	}
	defer runtime.KeepAlive(q)
	a := b.api
	ctx := a.QueueGetContext(q.ref)
	dev := a.QueueGetDevice(q.ref)
	if ctx == 0 || dev == 0 {
		if ctx != 0 {
			a.ContextDelete(ctx)
		}
		if dev != 0 {
			a.DeviceDelete(dev)
		}
		return nil, errkind.New(errkind.Value, op, "cannot get the queue's context and device")
	}
	p, err := b.progs.get(b, q, key, ctx, dev, src)
	if err != nil {
		return nil, err
	}
	if q.progs == nil {
		q.progs = map[programs.Key]*program{}
	}
	key = p.key // the kept copy
	q.progs[key] = p
	return p, nil
}

// get returns the kept program of key for ctx and dev, or builds it; it
// takes ctx and dev (kept by a new program, deleted otherwise).
func (ps *progCache) get(b *Backend, q *Queue, key programs.Key, ctx, dev uintptr, src usm.ProgramSource) (*program, error) {
	a := b.api
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.by[key] {
		if a.ContextAreEq(p.ctx, ctx) && a.DeviceAreEq(p.dev, dev) {
			a.ContextDelete(ctx)
			a.DeviceDelete(dev)
			return p, nil
		}
	}
	key = key.Keep()
	p, err := build(b, q, key, ctx, dev, src)
	if err != nil {
		a.ContextDelete(ctx)
		a.DeviceDelete(dev)
		return nil, err
	}
	if ps.by == nil {
		ps.by = map[programs.Key][]*program{}
	}
	ps.by[key] = append(ps.by[key], p)
	return p, nil
}

func (ps *progCache) remove(p *program) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	l := ps.by[p.key]
	for i, x := range l {
		if x == p {
			ps.by[p.key] = append(l[:i:i], l[i+1:]...)
			break
		}
	}
	if len(ps.by[p.key]) == 0 {
		delete(ps.by, p.key)
	}
}

func build(b *Backend, q *Queue, key programs.Key, ctx, dev uintptr, src usm.ProgramSource) (*program, error) {
	k := b.api.Kernels()
	opts := key.CFlags()
	var kb uintptr
	var il []byte // the SPIR-V, in little-endian words
	be := k.ContextGetBackend(ctx)
	if key.IL {
		if be != dpctlapi.BackendOpenCL && be != dpctlapi.BackendLevelZero {
			return nil, errkind.New(errkind.NotSupported, "DPCTLKernelBundle_CreateFromSpirv", "dpctl builds SPIR-V on OpenCL and Level Zero contexts only")
		}
		// Checked before the SYCL runtime sees it, which hands it to
		// OpenCL's or Level Zero's (kernelparams.CheckSPIRV says why).
		var err error
		if il, err = kernelparams.CheckSPIRV("dpctl.Queue.BuildProgram", []byte(key.Src)); err != nil {
			return nil, err
		}
		if kb, err = k.BundleFromSpirv(ctx, dev, il, opts); err != nil {
			return nil, err // a library of an unknown generation (dpctlapi/generation.go)
		}
	} else {
		if be != dpctlapi.BackendOpenCL {
			return nil, errkind.New(errkind.NotSupported, "DPCTLKernelBundle_CreateFromOCLSource", "dpctl builds OpenCL C on OpenCL contexts only: give SPIR-V (scripts/spirv.sh makes it from OpenCL C)")
		}
		kb = k.BundleFromOCLSource(ctx, dev, append([]byte(key.Src), 0), opts)
	}
	if kb == 0 {
		op := "DPCTLKernelBundle_CreateFromOCLSource"
		if key.IL {
			op = "DPCTLKernelBundle_CreateFromSpirv"
		}
		be := &usm.BuildError{Op: op, Err: errors.New("dpctl returned no kernel bundle")}
		if k.ContextGetBackend(ctx) == dpctlapi.BackendOpenCL {
			be.Log = b.nativeBuildLog(q, src)
		}
		return nil, be
	}
	p := &program{b: b, key: key, kb: kb, ctx: ctx, dev: dev}
	if key.IL {
		p.params = kernelparams.FromSPIRV(il)
	}
	livePrograms.Add(1)
	return p, nil
}

// nativeBuildLog builds src once more through the cl_command_queue under
// the SYCL queue (sycl::queue::getNative, which retains it for the
// caller) with package opencl, whose failed build carries the compiler's
// log; "" if that is not possible.
func (b *Backend) nativeBuildLog(q *Queue, src usm.ProgramSource) string {
	k := b.api.Kernels()
	if !k.HasQueueGetNative() {
		return ""
	}
	h := k.QueueGetNative(q.ref)
	runtime.KeepAlive(q)
	if h == 0 {
		return ""
	}
	oq, err := opencl.UnsafeAdoptQueue(h)
	if err != nil {
		return ""
	}
	defer oq.Close() // releases what it built too
	_, err = oq.BuildProgram(src)
	var be *usm.BuildError
	if errors.As(err, &be) {
		return be.Log
	}
	return ""
}

// program is a SYCL kernel bundle in executable state
// (DPCTLSyclKernelBundleRef) for one context and device. It implements
// usm.Program; Close releases its kernels and the bundle once.
type program struct {
	b        *Backend
	key      programs.Key
	kb       uintptr // DPCTLSyclKernelBundleRef (owned)
	ctx, dev uintptr // its context and device (owned)
	// params: a SPIR-V program's kernels' parameters, read from the
	// module (libsyclinterface has no query for them).
	params map[string][]kernelparams.Kind

	kernels programs.Kernels[*usm.Kernel]
	closed  atomic.Bool // set under the kernels' lock (their Close)
}

var _ usm.Program = (*program)(nil)

// Kernel returns the kernel of that name (DPCTLKernelBundle_GetKernel,
// once per name); a name the bundle lacks is a usm.ErrValue error.
func (p *program) Kernel(name string) (*usm.Kernel, error) {
	const op = "dpctl.Program.Kernel"
	return p.kernels.Get(op, name, func(cname []byte) (*usm.Kernel, error) {
		if p.closed.Load() {
			return nil, errkind.New(errkind.Value, op, "the program is closed")
		}
		ka := p.b.api.Kernels()
		kr := ka.BundleGetKernel(p.kb, cname)
		if kr == 0 {
			return nil, errkind.New(errkind.Value, op, "no kernel "+errkind.Quote(name)+" in the program")
		}
		n := ka.KernelNumArgs(kr)
		kl := &kernel{prog: p, name: name, ref: kr, params: make([]kernelparams.Kind, n), l: dpctlapi.Launch{
			Args: make([]uintptr, n), Types: make([]int32, n), Vals: make([]uint64, n)}}
		copy(kl.params, p.params[name])
		liveKernels.Add(1)
		return usm.NewKernel(name, n, kl), nil
	})
}

// Close releases the kernels and the bundle once, after launches in
// progress, and drops the program from the Backend's cache: the next
// BuildProgram of the same source builds it again.
func (p *program) Close() error {
	if p == nil {
		return nil
	}
	p.b.progs.remove(p)
	return p.kernels.Close(func() error {
		if p.closed.Load() {
			return nil
		}
		a := p.b.api
		a.Kernels().BundleDelete(p.kb)
		a.ContextDelete(p.ctx)
		a.DeviceDelete(p.dev)
		p.closed.Store(true)
		livePrograms.Add(-1)
		return nil
	})
}

// kernel is a DPCTLSyclKernelRef as usm.Kernel drives it (usm.Launcher).
// l is the memory DPCTLQueue_Submit* reads, kept so a launch allocates
// nothing; usm.Kernel serialises launches.
type kernel struct {
	prog   *program
	name   string
	ref    uintptr             // DPCTLSyclKernelRef (owned); 0 once closed
	params []kernelparams.Kind // what each parameter takes, where the SPIR-V says
	l      dpctlapi.Launch
	pins   evtable.Pins // this Backend's events among the deps
	lastOK *Queue       // the last queue found to be of the program's context and device
	ooo    bool         // lastOK is out of order
	bar    uintptr      // the barrier event of this launch on an out-of-order queue
}

var argTypes = map[dtype.Type]int32{
	dtype.Int8: dpctlapi.ArgInt8, dtype.Uint8: dpctlapi.ArgUint8, dtype.Int16: dpctlapi.ArgInt16,
	dtype.Uint16: dpctlapi.ArgUint16, dtype.Int32: dpctlapi.ArgInt32, dtype.Uint32: dpctlapi.ArgUint32,
	dtype.Int64: dpctlapi.ArgInt64, dtype.Uint64: dpctlapi.ArgUint64, dtype.Float32: dpctlapi.ArgFloat32,
	dtype.Float64: dpctlapi.ArgFloat64,
}

// Launch implements usm.Launcher: q must be a *Queue of the Backend, of
// the program's context and device; pointer arguments must be USM of that
// context (DPCTLUSM_GetPointerType), checked before anything is
// submitted. Events of this package are passed to SYCL as dependencies;
// others are waited for on the host first.
func (k *kernel) Launch(q usm.Queue, r usm.Range, after []usm.Event, args []usm.Arg) (usm.Event, error) {
	const op = "dpctl.Kernel.Launch"
	p := k.prog
	dq, ok := q.(*Queue)
	if !ok || dq == nil || dq.b != p.b {
		return usm.Event{}, errkind.New(errkind.Value, op, "kernel "+errkind.Quote(k.name)+" is a kernel of dpctl's SYCL runtime; the queue is not one of its queues")
	}
	defer runtime.KeepAlive(dq)
	if k.ref == 0 {
		return usm.Event{}, errkind.New(errkind.Value, op, "kernel "+errkind.Quote(k.name)+" is closed")
	}
	a := p.b.api
	if dq != k.lastOK {
		ctx, dev := a.QueueGetContext(dq.ref), a.QueueGetDevice(dq.ref)
		same := ctx != 0 && dev != 0 && a.ContextAreEq(ctx, p.ctx) && a.DeviceAreEq(dev, p.dev)
		if ctx != 0 {
			a.ContextDelete(ctx)
		}
		if dev != 0 {
			a.DeviceDelete(dev)
		}
		if !same {
			return usm.Event{}, errkind.New(errkind.Value, op, "the queue is not of the context and device kernel "+errkind.Quote(k.name)+" was built for")
		}
		k.lastOK = dq
		o := p.b.order
		k.ooo = !o.Present() || !o.QueueIsInOrder(dq.ref)
	}
	for i, x := range args {
		if err := kernelparams.Check(op, k.name, i, k.params[i], x.IsPointer()); err != nil {
			return usm.Event{}, err
		}
		if x.IsPointer() {
			ptr := uintptr(x.Bits())
			if ptr == 0 || a.USMGetPointerType(ptr, p.ctx) == dpctlapi.USMUnknown {
				return usm.Event{}, errkind.New(errkind.Value, op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(k.name)+": 0x"+strconv.FormatUint(uint64(ptr), 16)+" is not USM of the kernel's context")
			}
			k.l.Args[i], k.l.Types[i] = ptr, dpctlapi.ArgVoidPtr
			continue
		}
		t, ok := argTypes[x.DType()]
		if !ok {
			return usm.Event{}, errkind.New(errkind.Value, op, "argument "+strconv.Itoa(i)+": dpctl passes no "+x.DType().String())
		}
		k.l.Vals[i] = x.Bits()
		k.l.Args[i], k.l.Types[i] = uintptr(unsafe.Pointer(&k.l.Vals[i])), t
	}
	k.l.Deps = k.l.Deps[:0]
	defer k.doneDeps()
	events := p.b.events
	err := evtable.Follow(events.t, usm.EventSource(events), after, &k.pins, op, func(_ int, ev uintptr) error {
		k.l.Deps = append(k.l.Deps, ev)
		return nil
	})
	if err != nil {
		return usm.Event{}, err
	}
	if k.ooo {
		// An out-of-order queue orders by events only: the launch depends
		// on a barrier of everything submitted to the queue before it
		// (dpnp's work on its arrays' queue), passed explicitly
		// (RATIONALE.md, "Queue ordering on the device").
		if k.bar = a.QueueSubmitBarrier(dq.ref); k.bar == 0 {
			return usm.Event{}, errkind.New(errkind.Value, op, "DPCTLQueue_SubmitBarrier failed")
		}
		// A barrier complete already (the queue was idle, as after dpnp's
		// own wait in its __sycl_usm_array_interface__) orders nothing
		// the kernel could overtake, and a dependency sends the kernel
		// through SYCL's scheduler: about 200 µs more for a 1 ms kernel
		// on Intel's CPU runtime (RATIONALE.md, "Launches that return
		// before their kernel ends").
		if kd := a.Kernels(); !kd.HasEventStatus() || !kd.EventComplete(k.bar) {
			k.l.Deps = append(k.l.Deps, k.bar)
		}
	}
	for i := range r.Dims {
		k.l.Global[i], k.l.Local[i] = uintptr(r.Global[i]), uintptr(r.Local[i])
	}
	ev := a.Kernels().Submit(k.ref, dq.ref, &k.l, r.Dims, r.HasLocal())
	if ev == 0 {
		return usm.Event{}, errkind.New(errkind.Value, op, "DPCTLQueue_Submit(ND)Range failed for kernel "+errkind.Quote(k.name))
	}
	return usm.NewEvent(events, events.t.Put(ev)), nil
}

func (k *kernel) doneDeps() {
	if k.bar != 0 {
		k.prog.b.api.EventDelete(k.bar)
		k.bar = 0
	}
	k.prog.b.events.t.Unpin(&k.pins, func(ev uintptr) { k.prog.b.api.Kernels().EventDelete(ev) })
	clear(k.l.Deps)
}

// Close deletes the kernel ref once (usm.Kernel serialises it with
// launches).
func (k *kernel) Close() error {
	if k.ref != 0 {
		k.prog.b.api.Kernels().KernelDelete(k.ref)
		k.ref = 0
		k.lastOK = nil
		liveKernels.Add(-1)
	}
	return nil
}

// eventSource is the package's table of launch events
// (DPCTLSyclEventRef), a usm.EventSource: one per Backend.
type eventSource struct {
	t   *evtable.Table[uintptr]
	api *dpctlapi.API
}

func newEventSource(api *dpctlapi.API) *eventSource {
	return &eventSource{t: evtable.New[uintptr](liveEvents), api: api}
}

// WaitEvent waits for the launch (DPCTLEvent_Wait, which catches SYCL's
// exceptions).
func (s *eventSource) WaitEvent(id uint64) error {
	ev, ok := s.t.Use(id)
	if !ok {
		return errkind.New(errkind.Value, "dpctl.Event.Wait", "the event was released")
	}
	k := s.api.Kernels()
	k.EventWait(ev)
	if ev, rel := s.t.Done(id); rel {
		k.EventDelete(ev)
	}
	return nil
}

// CopyEvent returns a new id for a copy of the event (DPCTLEvent_Copy),
// deleted on its own: what usm.Pending keeps of a launch's event. A
// library without the entry point is usm.ErrNotSupported (the Pending
// then waits for the event instead).
func (s *eventSource) CopyEvent(id uint64) (uint64, error) {
	const op = "dpctl.Event.Copy"
	k := s.api.Kernels()
	if !k.HasEventCopy() {
		return 0, errkind.New(errkind.NotSupported, op, s.api.Path()+" lacks DPCTLEvent_Copy")
	}
	ev, ok := s.t.Use(id)
	if !ok {
		return 0, errkind.New(errkind.Value, op, "the event was released")
	}
	c := k.EventCopy(ev)
	if ev, rel := s.t.Done(id); rel {
		k.EventDelete(ev)
	}
	if c == 0 {
		return 0, errkind.New(errkind.Value, op, "DPCTLEvent_Copy failed")
	}
	return s.t.Put(c), nil
}

// EventDone reports whether the launch has completed, without waiting
// (DPCTLEvent_GetCommandExecutionStatus); an id that names no live event
// is done (its holder waited for it, or let it go). A library without
// the entry point is usm.ErrNotSupported.
func (s *eventSource) EventDone(id uint64) (bool, error) {
	k := s.api.Kernels()
	if !k.HasEventStatus() {
		return false, errkind.New(errkind.NotSupported, "dpctl.Event.Done", s.api.Path()+" lacks DPCTLEvent_GetCommandExecutionStatus")
	}
	ev, ok := s.t.Use(id)
	if !ok {
		return true, nil
	}
	done := k.EventComplete(ev)
	if ev, rel := s.t.Done(id); rel {
		k.EventDelete(ev)
	}
	return done, nil
}

// WithEventRef calls fn with the DPCTLSyclEventRef of ev, a launch event
// of this Backend, valid during the call (a release meanwhile waits for
// it): what pybridge hands to dpctl's Python objects, which copy it.
// false, and no call, for an event of another source or one released.
func (b *Backend) WithEventRef(ev usm.Event, fn func(ref uintptr)) bool {
	src, id := ev.Source()
	s := b.events
	if src != usm.EventSource(s) {
		return false
	}
	ref, ok := s.t.Use(id)
	if !ok {
		return false
	}
	fn(ref)
	if ref, rel := s.t.Done(id); rel {
		s.api.Kernels().EventDelete(ref)
	}
	return true
}

// ReleaseEvent deletes the event ref once (DPCTLEvent_Delete).
func (s *eventSource) ReleaseEvent(id uint64) error {
	if ev, rel := s.t.Take(id); rel {
		s.api.Kernels().EventDelete(ev)
	}
	return nil
}
