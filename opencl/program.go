package opencl

import (
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/evtable"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/kernelparams"
	"github.com/usmbridge/usmbridge/internal/programs"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// Programs and kernels (docs/native.md, "Kernels"). A Queue builds
// programs for its context and device (BuildProgram, which usm.BuildProgram
// finds by name); they are kept per (device, source, options) by whoever
// owns the queue's context: a Backend's context keeps those of its queues
// until the Backend closes, a queue from elsewhere (UnsafeAdoptQueue,
// UnsafeBorrowQueue) those built through it until it closes.

// progCache holds the programs built in one context; its Close releases
// them all and refuses later builds.
type progCache = programs.Cache[*program]

// cache returns the program cache of the queue's context.
func (q *Queue) cache() *progCache {
	if q.ctx != nil {
		return &q.ctx.progs
	}
	q.progsOnce.Do(func() { q.progs = &progCache{} })
	return q.progs
}

// BuildProgram returns the program src builds for the queue's context and
// device: built with clCreateProgramWithSource or clCreateProgramWithIL
// (SPIR-V, where the device takes it) and clBuildProgram with src.Options
// the first time, then kept (see the package's Programs note). A failed
// build is a *usm.BuildError with the compiler's log; a loader without
// OpenCL 1.2's program entry points is usm.ErrNotSupported.
func (q *Queue) BuildProgram(src usm.ProgramSource) (usm.Program, error) {
	const op = "opencl.Queue.BuildProgram"
	if err := src.Check(); err != nil {
		return nil, err
	}
	l, err := lib()
	if err != nil {
		return nil, err
	}
	if !l.HasPrograms() {
		return nil, errkind.New(errkind.NotSupported, op, "the OpenCL loader lacks the program and kernel entry points of OpenCL 1.2")
	}
	if len(src.SPIRV) > 0 && !l.HasIL() {
		return nil, errkind.New(errkind.NotSupported, op, "the OpenCL loader has no clCreateProgramWithIL (OpenCL < 2.1): build OpenCL C instead")
	}
	if _, err := q.lock(op); err != nil {
		return nil, err
	}
	defer q.h.RUnlock()
	c := q.cache()
	p, err := c.Get(op, programs.LookupKey(uintptr(q.ndev), src.OpenCLC, src.SPIRV, src.Options), func(key programs.Key) (*program, error) {
		return buildProgram(l, q, c, key)
	})
	if err != nil {
		return nil, err // a nil *program in the interface would not be nil
	}
	return p, nil
}

func buildProgram(l *clapi.Lib, q *Queue, c *progCache, key programs.Key) (*program, error) {
	var id clapi.Program
	var err error
	var il []byte // the SPIR-V, in little-endian words
	if key.IL {
		// Checked before the runtime sees it: Intel's loops forever on
		// some malformed modules, and ends the process on others.
		if il, err = kernelparams.CheckSPIRV("opencl.Queue.BuildProgram", []byte(key.Src)); err != nil {
			return nil, err
		}
		id, err = l.CreateProgramWithIL(q.nctx, il)
	} else {
		id, err = l.CreateProgramWithSource(q.nctx, key.Src)
	}
	if err != nil {
		return nil, err
	}
	flags := key.CFlags()
	if !key.IL {
		// Without it a runtime may keep what each parameter is to itself
		// (clGetKernelArgInfo), and Launch could not refuse a scalar for
		// a pointer (kernel.fits).
		flags = append(append([]byte(key.Flags), " -cl-kernel-arg-info"...), 0)
	}
	if err := l.BuildProgram(id, q.ndev, flags); err != nil {
		log := l.BuildLog(id, q.ndev)
		_ = l.ReleaseProgram(id)
		return nil, &usm.BuildError{Op: "clBuildProgram", Log: log, Err: err}
	}
	state := q.ctx
	if state == nil {
		state = made.state(q.nctx) // a queue from elsewhere on a context made here
	}
	p := &program{cache: c, key: key, ctx: q.nctx, dev: q.ndev, platform: q.platform, state: state}
	if key.IL {
		p.spirvParams = kernelparams.FromSPIRV(il)
	}
	p.h.Init(uintptr(id), "cl_program", livePrograms)
	return p, nil
}

// program is a cl_program built for one device (Queue.BuildProgram). It
// implements usm.Program: Kernel gives its kernels, made once per name;
// Close releases them and the program, once, for every holder.
type program struct {
	h        ffi.Handle
	cache    *progCache
	key      programs.Key
	ctx      clapi.Context
	dev      clapi.Device
	platform *platform // nil if unknown
	state    *ctxState // the Backend context's records (SVM), or nil
	// spirvParams: a SPIR-V program's kernels' parameters, read from the
	// module (the runtime says nothing of them without OpenCL C).
	spirvParams map[string][]kernelparams.Kind

	kernels programs.Kernels[*usm.Kernel]
}

var _ usm.Program = (*program)(nil)

// Kernel returns the kernel of that name (clCreateKernel, once per name).
// A name the program lacks is a usm.ErrValue error.
func (p *program) Kernel(name string) (*usm.Kernel, error) {
	const op = "opencl.Program.Kernel"
	return p.kernels.Get(op, name, func(cname []byte) (*usm.Kernel, error) {
		pid, err := p.h.RLock(op)
		if err != nil {
			return nil, err
		}
		defer p.h.RUnlock()
		l, _ := lib()
		kid, err := l.CreateKernel(clapi.Program(pid), cname)
		if err != nil {
			return nil, errkind.Wrap(errkind.Value, op, "no kernel "+errkind.Quote(name)+" in the program", err)
		}
		n, err := l.KernelNumArgs(kid)
		if err != nil {
			_ = l.ReleaseKernel(kid)
			return nil, err
		}
		kl := &kernel{prog: p, name: name, vals: make([]uint64, n), svm: make([]bool, n), params: make([]kernelparams.Kind, n)}
		if p.key.IL {
			copy(kl.params, p.spirvParams[name])
		} else {
			for i := range kl.params {
				kl.params[i] = paramKind(l, kid, uint32(i))
			}
		}
		kl.h.Init(uintptr(kid), "cl_kernel", liveKernels)
		return usm.NewKernel(name, n, kl), nil
	})
}

// Close releases the program's kernels and the program (clReleaseKernel,
// clReleaseProgram) once, after launches in progress, and drops it from
// its cache: the next BuildProgram of the same source builds it again.
func (p *program) Close() error {
	if p == nil {
		return nil
	}
	p.cache.Drop(p.key, p)
	return p.kernels.Close(func() error {
		return p.h.Close(func(id uintptr) error {
			l, _ := lib()
			return l.ReleaseProgram(clapi.Program(id))
		})
	})
}

// kernel is a cl_kernel as usm.Kernel drives it (usm.Launcher). Its
// arguments are state of the cl_kernel, so a launch sets them and
// enqueues under the exclusive lock of the handle; the scratch below is
// the memory the runtime reads during a launch, kept so that a launch
// allocates nothing.
type kernel struct {
	h    ffi.Handle
	prog *program
	name string

	vals   []uint64            // scalar argument values
	svm    []bool              // which pointer arguments are SVM
	params []kernelparams.Kind // what each parameter takes, where the runtime or the SPIR-V says
	nd     clapi.NDRange       // global and local sizes, wait list, event out
	pins   evtable.Pins        // this package's events the launch follows
	mtype  uint32              // clGetMemAllocInfoINTEL's answer
}

// Launch implements usm.Launcher: q must be an opencl *Queue of the
// program's context and device. Pointer arguments are USM of that
// context (clSetKernelArgMemPointerINTEL) or SVM the context's Backend
// allocated (clSetKernelArgSVMPointer); anything else is refused before
// anything is set. Events of this package and context are waited for by
// the runtime (their queue flushed first when it is another), others on
// the host first.
func (k *kernel) Launch(q usm.Queue, r usm.Range, after []usm.Event, args []usm.Arg) (usm.Event, error) {
	const op = "opencl.Kernel.Launch"
	oq, ok := q.(*Queue)
	if !ok || oq == nil {
		return usm.Event{}, errkind.New(errkind.Value, op, "kernel "+errkind.Quote(k.name)+" is an OpenCL kernel; the queue is not an OpenCL queue")
	}
	qid, err := oq.lock(op)
	if err != nil {
		return usm.Event{}, err
	}
	defer oq.h.RUnlock()
	if oq.nctx != k.prog.ctx || oq.ndev != k.prog.dev {
		return usm.Event{}, errkind.New(errkind.Value, op, "the queue is not of the context and device kernel "+errkind.Quote(k.name)+" was built for")
	}
	kid, err := k.h.Lock(op)
	if err != nil {
		return usm.Event{}, errkind.Wrap(errkind.Value, op, "kernel "+errkind.Quote(k.name)+" is closed", err)
	}
	defer k.h.Unlock()
	l, _ := lib()
	if err := k.setArgs(l, clapi.Kernel(kid), args); err != nil {
		return usm.Event{}, err
	}
	k.nd.Wait = k.nd.Wait[:0]
	defer k.doneWaits(l)
	err = evtable.Follow(events.t, usm.EventSource(events), after, &k.pins, op, func(_ int, h *clEvent) error {
		if h.ctx != k.prog.ctx { // events order queues of one context only
			return l.WaitForEvent(&h.ev) // h is a box (below): no allocation
		}
		if h.q != clapi.Queue(qid) {
			// Another queue may wait for an event of a queue only once
			// that queue was flushed (docs/native.md); the event holds a
			// reference to its queue, so the handle is live.
			if err := l.Flush(h.q); err != nil {
				return err
			}
		}
		k.nd.Wait = append(k.nd.Wait, h.ev)
		return nil
	})
	if err != nil {
		return usm.Event{}, err
	}
	for i := range r.Dims {
		k.nd.Global[i], k.nd.Local[i] = uintptr(r.Global[i]), uintptr(r.Local[i])
	}
	k.nd.Out = 0
	if err := l.EnqueueNDRangeKernel(clapi.Queue(qid), clapi.Kernel(kid), r.Dims, &k.nd, r.HasLocal()); err != nil {
		return usm.Event{}, err
	}
	return usm.NewEvent(events, events.t.Put(events.box(k.nd.Out, k.prog.ctx, clapi.Queue(qid)))), nil
}

// setArgs checks every pointer before it sets any argument, so a refused
// launch leaves nothing half done.
func (k *kernel) setArgs(l *clapi.Lib, kid clapi.Kernel, args []usm.Arg) error {
	const op = "opencl.Kernel.Launch"
	u := clapi.USM{}
	if k.prog.platform != nil {
		u = k.prog.platform.usmFuncs()
	}
	for i, a := range args {
		if err := kernelparams.Check(op, k.name, i, k.params[i], a.IsPointer()); err != nil {
			return err
		}
		if !a.IsPointer() {
			continue
		}
		svm, err := k.pointerKind(l, u, uintptr(a.Bits()))
		if err != nil {
			return errkind.Wrap(errkind.Value, op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(k.name), err)
		}
		k.svm[i] = svm
	}
	for i, a := range args {
		var err error
		if a.IsPointer() {
			p := uintptr(a.Bits())
			if k.svm[i] {
				err = l.SetKernelArgSVMPointer(kid, uint32(i), p)
			} else {
				err = u.SetKernelArgMemPointer(kid, uint32(i), p)
			}
		} else {
			k.vals[i] = a.Bits()
			err = l.SetKernelArg(kid, uint32(i), uintptr(a.Size()), unsafe.Pointer(&k.vals[i]))
		}
		if err != nil {
			return errkind.Wrap(errkind.Value, op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(k.name), err)
		}
	}
	return nil
}

// paramKind is the kind of parameter i of kid as the runtime reports it
// (clGetKernelArgInfo; Unknown where it does not say): its address
// qualifier, and its type for the handles (images, samplers, pipes,
// queues), which no argument Launch passes is.
func paramKind(l *clapi.Lib, kid clapi.Kernel, i uint32) kernelparams.Kind {
	space := l.KernelArgAddress(kid, i)
	if space == 0 {
		return kernelparams.Unknown
	}
	if name, qual, ok := l.KernelArgType(kid, i); ok {
		handle := qual&clapi.KernelArgTypePipe != 0 || name == "sampler_t" || name == "queue_t" ||
			(space == clapi.KernelArgAddressGlobal && strings.HasPrefix(name, "image") && !strings.Contains(name, "*"))
		if handle {
			return kernelparams.Opaque
		}
	}
	switch space {
	case clapi.KernelArgAddressGlobal, clapi.KernelArgAddressConstant:
		return kernelparams.Global
	case clapi.KernelArgAddressLocal:
		return kernelparams.Local
	case clapi.KernelArgAddressPrivate:
		return kernelparams.Value
	}
	return kernelparams.Unknown
}

// pointerKind says how p is passed: USM of the program's context (svm
// false) or SVM its Backend allocated (svm true); an error for anything
// else.
func (k *kernel) pointerKind(l *clapi.Lib, u clapi.USM, p uintptr) (svm bool, err error) {
	if s := k.prog.state; s != nil {
		if r, ok := s.find(p); ok && r.svm {
			if !l.HasSVMArgs() {
				return false, errkind.New(errkind.NotSupported, "clSetKernelArgSVMPointer", "the OpenCL loader has no clSetKernelArgSVMPointer (OpenCL < 2.0)")
			}
			return true, nil
		}
	}
	if p != 0 && u.CanQuery() && u.CanSetArgs() {
		if err := u.MemType(k.prog.ctx, p, &k.mtype); err != nil {
			return false, err
		}
		if k.mtype != memUnknown {
			return false, nil
		}
	}
	return false, errkind.New(errkind.Value, "opencl.Kernel.Launch", "0x"+strconv.FormatUint(uint64(p), 16)+" is not USM (or SVM) of the kernel's context")
}

func (k *kernel) doneWaits(l *clapi.Lib) {
	events.t.Unpin(&k.pins, func(h *clEvent) {
		_ = events.release(l, h) // the launch's outcome stands; a failed release leaves a cl_event
	})
	clear(k.nd.Wait)
}

// Close releases the cl_kernel once, after a launch in progress.
func (k *kernel) Close() error {
	return k.h.Close(func(id uintptr) error {
		l, _ := lib()
		return l.ReleaseKernel(clapi.Kernel(id))
	})
}

// clEvent is a launch's cl_event and the context it belongs to, in a box
// that is reused once the event is released: clWaitForEvents reads the
// event from memory, which a box gives without an allocation per wait.
type clEvent struct {
	ev  clapi.Event
	ctx clapi.Context
	q   clapi.Queue // the queue the launch was enqueued on
}

// eventSource is the package's table of launch events (usm.EventSource).
type eventSource struct {
	t     *evtable.Table[*clEvent]
	mu    sync.Mutex
	boxes []*clEvent
}

var events = &eventSource{t: evtable.New[*clEvent](liveEvents)}

func (s *eventSource) box(ev clapi.Event, ctx clapi.Context, q clapi.Queue) *clEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.boxes); n > 0 {
		b := s.boxes[n-1]
		s.boxes = s.boxes[:n-1]
		*b = clEvent{ev: ev, ctx: ctx, q: q}
		return b
	}
	return &clEvent{ev: ev, ctx: ctx, q: q}
}

// release releases the cl_event and keeps its box.
func (s *eventSource) release(l *clapi.Lib, b *clEvent) error {
	err := l.ReleaseEvent(b.ev)
	s.mu.Lock()
	*b = clEvent{}
	s.boxes = append(s.boxes, b)
	s.mu.Unlock()
	return err
}

// WaitEvent waits for the launch (clWaitForEvents).
func (s *eventSource) WaitEvent(id uint64) error {
	h, ok := s.t.Use(id)
	if !ok {
		return errkind.New(errkind.Value, "opencl.Event.Wait", "the event was released")
	}
	l, _ := lib()
	err := l.WaitForEvent(&h.ev)
	if h, rel := s.t.Done(id); rel {
		_ = s.release(l, h)
	}
	return err
}

// CopyEvent returns a new id for the same cl_event, with a reference of
// its own (clRetainEvent), released on its own: what usm.Pending keeps of
// a launch's event.
func (s *eventSource) CopyEvent(id uint64) (uint64, error) {
	h, ok := s.t.Use(id)
	if !ok {
		return 0, errkind.New(errkind.Value, "opencl.Event.Copy", "the event was released")
	}
	l, _ := lib()
	err := l.RetainEvent(h.ev)
	c := s.box(h.ev, h.ctx, h.q)
	if h, rel := s.t.Done(id); rel {
		_ = s.release(l, h)
	}
	if err != nil {
		s.mu.Lock()
		*c = clEvent{}
		s.boxes = append(s.boxes, c)
		s.mu.Unlock()
		return 0, err
	}
	return s.t.Put(c), nil
}

// EventDone reports whether the launch has completed, without waiting
// (clGetEventInfo); an id that names no live event is done (its holder
// waited for it, or let it go).
func (s *eventSource) EventDone(id uint64) (bool, error) {
	h, ok := s.t.Use(id)
	if !ok {
		return true, nil
	}
	l, _ := lib()
	done, err := l.EventComplete(h.ev)
	if h, rel := s.t.Done(id); rel {
		_ = s.release(l, h)
	}
	return done, err
}

// ReleaseEvent releases the cl_event once (clReleaseEvent).
func (s *eventSource) ReleaseEvent(id uint64) error {
	h, rel := s.t.Take(id)
	if !rel {
		return nil
	}
	l, _ := lib()
	return s.release(l, h)
}
