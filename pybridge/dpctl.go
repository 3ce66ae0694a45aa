package pybridge

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// dpctl's SYCL runtime is package dpctl's Backend; what is Python's stays
// here: importing the dpctl module (which loads the runtime and
// libDPCTLSyclInterface), reading SyclQueue and SyclContext objects'
// refs (suai.go), and the cache of SyclQueue objects whose refs are
// pinned in the Backend while the cache holds them.

// Dpctl imports dpctl in the interpreter, which loads the SYCL runtime and
// dpctl's C library, and opens that library as a dpctl.Backend
// (dpctl.Open), once it succeeds: a failed load is not remembered, so the
// next call tries again (a KeyboardInterrupt during the import, or a dpctl
// installed since, must not disable dpctl for the life of the process). Callers that arrive
// while a load is under way wait for it and share its result, success or
// failure. A missing dpctl or SYCL runtime is a usm.ErrNotAvailable error
// that says what failed; an import interrupted by something that is not
// about dpctl (a KeyboardInterrupt, SystemExit, RecursionError or
// MemoryError: see momentary) is that Python exception itself.
//
// Call it without the GIL (not inside Do): the first call imports dpctl,
// and a caller holding the GIL would keep the importing thread from
// finishing. Code that holds the GIL gets dpctl through GIL-aware paths
// (AsArray, ImportCapsule with a nil registry), which wait with the GIL
// released.
func (py *Python) Dpctl() (*dpctl.Backend, error) {
	if d := py.dpLoaded.Load(); d != nil {
		return d, nil
	}
	py.dpMu.Lock()
	if d := py.dpLoaded.Load(); d != nil {
		py.dpMu.Unlock()
		return d, nil
	}
	l := py.dpLoad
	if l != nil { // under way: share it
		py.dpMu.Unlock()
		<-l.done
		return l.d, l.err
	}
	l = &dpctlLoad{done: make(chan struct{})}
	py.dpLoad = l
	py.dpMu.Unlock()
	py.runDpctlLoad(l)
	return l.d, l.err
}

// dpctlLoad is one attempt at loading dpctl (Python.Dpctl).
type dpctlLoad struct {
	done chan struct{} // closed when d and err are final
	d    *dpctl.Backend
	err  error
}

// runDpctlLoad loads dpctl into l, keeps the result if it succeeded, and
// lets the next call start another attempt if it did not. A panic on the
// way still ends the attempt, so that no waiter waits forever.
func (py *Python) runDpctlLoad(l *dpctlLoad) {
	defer func() {
		py.dpMu.Lock()
		if l.err == nil {
			py.dpLoaded.Store(l.d)
		}
		py.dpLoad = nil
		py.dpMu.Unlock()
		close(l.done)
	}()
	l.err = errkind.New(errkind.NotAvailable, "pybridge.Dpctl", "loading dpctl panicked")
	l.d, l.err = py.loadDpctl()
}

// loadedDpctl returns the Backend if Dpctl() has succeeded, without
// loading it (the SUAI reader must not import dpctl or enumerate devices).
func (py *Python) loadedDpctl() *dpctl.Backend { return py.dpLoaded.Load() }

func (py *Python) loadDpctl() (*dpctl.Backend, error) {
	var dir string
	interrupted := false
	err := py.Do(func(g *GIL) error {
		m, err := g.importModule("dpctl")
		if err != nil {
			interrupted = g.momentary(err)
			return err
		}
		defer g.DecRef(m)
		f, err := g.getAttr(m, "__file__")
		if err != nil {
			return err
		}
		defer g.DecRef(f)
		file, err := g.String(f)
		if err != nil {
			return err
		}
		dir = filepath.Dir(file)
		return nil
	})
	if interrupted {
		return nil, err
	}
	if err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "pybridge.Dpctl", "cannot import dpctl", err)
	}
	return dpctl.Open(dir)
}

// queueCacheSize bounds the queue cache: programs use a few queues, and
// each entry keeps a dpctl.SyclQueue alive.
const queueCacheSize = 8

// queueCache holds the dpctl.SyclQueue objects seen as a SUAI syclobj,
// each with its ref pinned in the dpctl.Backend (PinQueue), so that
// binding the next array on the same queue takes one C call
// (DPCTLUSM_GetPointerType) instead of nine, plus two for the
// allocation's extent, and shares one queue copy instead of making one per
// array.
//
// Why pinning a ref is safe here: every entry holds a strong Python
// reference to its SyclQueue, and a SyclQueue owns its DPCTLSyclQueueRef
// for its whole life (set at construction, deleted at deallocation, not
// settable from Python; the type is immutable). So while the entry exists
// the ref cannot be freed and reused by another queue: a QueueRef, or an
// object, with the entry's ref is the entry's live queue, as PinQueue
// requires. This is why entries are made only where the Python object is
// known (the SUAI reader, with an exact dpctl.SyclQueue, holding the
// GIL); capsules and contexts take the unpinned path. Entries are dropped
// oldest first: unpinned, then the reference given back with the GIL.
type queueCache struct {
	mu sync.Mutex
	e  []queueEntry // oldest first
}

type queueEntry struct {
	obj uintptr            // the dpctl.SyclQueue (a strong reference)
	pin *dpctl.PinnedQueue // its DPCTLSyclQueueRef pinned in the Backend
	// syclobj is that ref (owned by obj) as the SUAI reader returns it: a
	// syclobj.QueueRef in an interface, boxed once here rather than on
	// every read (a boxed integer is an allocation).
	syclobj syclobj.Obj
}

// lookupObj returns the queue ref of a cached SyclQueue object, as a
// syclobj.QueueRef.
func (c *queueCache) lookupObj(obj uintptr) (syclobj.Obj, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.e {
		if f.obj == obj {
			return f.syclobj, true
		}
	}
	return nil, false
}

// lookupPin returns the pin of a cached SyclQueue object, or nil.
func (c *queueCache) lookupPin(obj uintptr) *dpctl.PinnedQueue {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.e {
		if f.obj == obj {
			return f.pin
		}
	}
	return nil
}

// queuePin returns the pin of obj, an exact dpctl.SyclQueue, caching obj
// as the SUAI reader does; nil where it cannot be pinned. The caller holds
// the GIL. The pin's queue copy stays valid after an eviction unpins it.
func (py *Python) queuePin(g *GIL, d *dpctl.Backend, obj uintptr) *dpctl.PinnedQueue {
	if pin := py.dpQueues.lookupPin(obj); pin != nil {
		return pin
	}
	ty := g.dpctlTypes()
	if ty.queueRef == 0 {
		return nil
	}
	py.noteQueue(g, d, obj, ty.queueRef.Call1(obj))
	return py.dpQueues.lookupPin(obj)
}

// noteQueue caches the SyclQueue obj, whose ref is ref, pinning ref in d,
// unless it is cached already. The caller holds the GIL (the entry takes a
// reference to obj; an eviction gives one back).
func (py *Python) noteQueue(g *GIL, d *dpctl.Backend, obj, ref uintptr) {
	c := &py.dpQueues
	if _, ok := c.lookupObj(obj); ok || ref == 0 {
		return
	}
	pin := d.PinQueue(syclobj.UnsafeQueueRef(ref))
	if pin == nil {
		return // BindRef reports why
	}
	g.api().IncRef(obj)
	e := queueEntry{obj: obj, pin: pin, syclobj: syclobj.UnsafeQueueRef(ref)}
	var old queueEntry
	c.mu.Lock()
	for _, o := range c.e {
		if o.obj == obj { // defensive: nothing above releases the GIL
			c.mu.Unlock()
			dropEntry(g, e)
			return
		}
	}
	if len(c.e) == queueCacheSize {
		old = c.e[0]
		c.e = append(c.e[:0], c.e[1:]...)
	}
	c.e = append(c.e, e)
	c.mu.Unlock()
	if old.obj != 0 {
		dropEntry(g, old) // out of the lock: the DecRef may run Python code
	}
}

// dropEntry unpins an entry that left the cache and gives its reference
// back. Arrays bound to the pin's queue copy keep that copy alive on
// their own.
func dropEntry(g *GIL, e queueEntry) {
	e.pin.Unpin()
	g.api().DecRef(e.obj)
}

// defaultQueue is d's default queue of device local (dpctl.Backend.Queue,
// always a *dpctl.Queue): the queue imports of the device are bound to.
func defaultQueue(d *dpctl.Backend, local int) (*dpctl.Queue, error) {
	q, err := d.Queue(local)
	if err != nil {
		return nil, err
	}
	return q.(*dpctl.Queue), nil
}

// QueueObject returns a new dpctl.SyclQueue over the same SYCL queue as q,
// a queue of the interpreter's dpctl (an array's Queue): what a Python
// consumer of the array orders its work with (a usm_ndarray made from the
// array, by dpnp.tensor.asarray of an object with its
// __sycl_usm_array_interface__ or by ArrayObject, is on the queue the
// interface's syclobj names and keeps the memory; dpnp.asarray of such an
// object copies it, with dpnp 0.20, and refuses copy=False). For a queue
// of the opencl backend it is the queue on a SYCL context made from the
// queue's native context (dpctl.Backend.InteropQueue, which imports dpctl
// if needed). NULL, and no error, for any other queue, where no SYCL
// context can be made, or when dpctl is not imported.
func (g *GIL) QueueObject(q usm.Queue) (Object, error) {
	o, _, err := g.syclQueueOf(q)
	return o, err
}

// syclQueueOf is QueueObject, with why a queue of a native backend has no
// SYCL queue (nil otherwise).
func (g *GIL) syclQueueOf(q usm.Queue) (o Object, why, err error) {
	var dq *dpctl.Queue
	switch x := q.(type) {
	case *dpctl.Queue:
		dq = x
	case *opencl.Queue:
		d, err := g.dpctlUnderGIL()
		if errors.Is(err, usm.ErrNotAvailable) {
			return Object{}, errNoDpctl, nil
		}
		if err != nil { // a KeyboardInterrupt during the import, say
			return Object{}, nil, err
		}
		if dq, err = d.InteropQueue(x); err != nil {
			return Object{}, err, nil
		}
	default:
		return Object{}, nil, nil
	}
	ty := g.dpctlTypes()
	if ty.queueMake == 0 {
		return Object{}, nil, nil
	}
	p := ty.queueMake.Call1(dq.Ref()) // copies the ref: the object owns its own
	if p == 0 {
		return Object{}, nil, g.fetch("SyclQueue_Make")
	}
	return Object{p}, nil, nil
}

// SyclQueueOf is the queue a dpctl.SyclQueue object o holds, as the
// queue arrays bound to it get (a copy of the same SYCL queue, equal to
// o's for dpctl and dpnp), and the position of its device in dpctl's
// registry: what a function binds results to when the caller names a queue
// (pyext's Device). ok is false for anything but an exact dpctl.SyclQueue;
// an error only when dpctl cannot be loaded for one.
func (g *GIL) SyclQueueOf(o Object) (q *dpctl.Queue, device int, ok bool, err error) {
	if !g.IsSyclQueue(o) {
		return nil, -1, false, nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil, -1, false, err
	}
	pin := g.py.queuePin(g, d, o.p)
	if pin == nil || pin.Queue() == nil || pin.Device() < 0 {
		return nil, -1, false, errkind.New(errkind.Value, "pybridge.SyclQueueOf", "the dpctl.SyclQueue's device is not one of dpctl's devices with USM")
	}
	return pin.Queue(), pin.Device(), true, nil
}

// IsSyclQueue reports whether o is a dpctl.SyclQueue (false before dpctl
// is imported).
func (g *GIL) IsSyclQueue(o Object) bool {
	ty := g.dpctlTypes()
	return o.p != 0 && ty.queue != 0 && g.api().Type(o.p) == ty.queue
}

// cachedTypes are dpctl's classes, looked up once dpctl is imported.
type cachedTypes struct {
	mu    sync.Mutex
	ready atomic.Bool
	dpctlClasses
}

// noDpctlTypes is what dpctlTypes returns before dpctl is imported: no
// classes (t's fields are written once, under its lock, and are read only
// once t is ready).
var noDpctlTypes cachedTypes

type dpctlClasses struct {
	queue   uintptr // dpctl.SyclQueue
	context uintptr // dpctl.SyclContext
	memory  uintptr // dpctl.memory._Memory
	// memoryAttr is _Memory's __sycl_usm_array_interface__ descriptor:
	// the attribute of every type whose dicts come from dpctl.memory.
	memoryAttr uintptr
	// Cython C-API functions of dpctl (module.__pyx_capi__): the ref of a
	// SyclQueue/SyclContext in one C call instead of a Python method call.
	queueRef, contextRef ffi.Fn
	queueMake            ffi.Fn // SyclQueue_Make: a new SyclQueue over a copy of a ref
	eventMake            ffi.Fn // SyclEvent_Make: a new SyclEvent over a copy of a ref
}

// dpctlTypes returns dpctl's classes if dpctl (and dpctl.memory) have been
// imported by anyone; it never imports them itself. The lookups run
// without the lock: they may run Python code, which may let another
// thread take the GIL and come here too, and that thread would wait for
// the lock while holding the GIL.
func (g *GIL) dpctlTypes() *cachedTypes {
	t := &g.py.types
	if t.ready.Load() {
		return t
	}
	c, ok := g.lookupDpctlClasses()
	if !ok {
		return &noDpctlTypes
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ready.Load() {
		t.dpctlClasses = c // kept for the life of the process
		t.ready.Store(true)
	}
	return t
}

// lookupDpctlClasses finds dpctl's classes in sys.modules; ok is false
// until dpctl and dpctl.memory are imported.
func (g *GIL) lookupDpctlClasses() (c dpctlClasses, ok bool) {
	a := g.api()
	sys, err := g.importModule("sys")
	if err != nil {
		a.ErrClear()
		return c, false
	}
	defer g.DecRef(sys)
	mods, err := g.getAttr(sys, "modules")
	if err != nil {
		return c, false
	}
	defer g.DecRef(mods)
	// Strong references: the lookups below may run a module's __getattr__.
	dp, mem := a.DictGetItemString(mods.p, "dpctl"), a.DictGetItemString(mods.p, "dpctl.memory._memory")
	if dp == 0 || mem == 0 {
		return c, false
	}
	a.IncRef(dp)
	defer a.DecRef(dp)
	a.IncRef(mem)
	defer a.DecRef(mem)
	get := func(m uintptr, name string) uintptr {
		if m == 0 {
			return 0
		}
		v := a.GetAttrString(m, name)
		if v == 0 {
			a.ErrClear()
		}
		return v
	}
	c.queue, c.context, c.memory = get(dp, "SyclQueue"), get(dp, "SyclContext"), get(mem, "_Memory")
	c.memoryAttr = get(c.memory, "__sycl_usm_array_interface__")
	c.queueRef = g.pyxCAPI(mods.p, "dpctl._sycl_queue", "SyclQueue_GetQueueRef")
	c.contextRef = g.pyxCAPI(mods.p, "dpctl._sycl_context", "SyclContext_GetContextRef")
	c.queueMake = g.pyxCAPI(mods.p, "dpctl._sycl_queue", "SyclQueue_Make")
	c.eventMake = g.pyxCAPI(mods.p, "dpctl._sycl_event", "SyclEvent_Make")
	if c.queue == 0 || c.context == 0 || c.memory == 0 || c.memoryAttr == 0 {
		for _, o := range []uintptr{c.queue, c.context, c.memory, c.memoryAttr} {
			a.DecRef(o)
		}
		return dpctlClasses{}, false
	}
	return c, true
}

// pyxCAPI returns the C function a Cython module exports under name in its
// __pyx_capi__ dict (a capsule named by the function's signature), or 0.
func (g *GIL) pyxCAPI(modules uintptr, module, name string) ffi.Fn {
	a := g.api()
	m := a.DictGetItemString(modules, module)
	if m == 0 {
		return 0
	}
	a.IncRef(m) // getattr below may run the module's __getattr__
	defer a.DecRef(m)
	capi := a.GetAttrString(m, "__pyx_capi__")
	if capi == 0 {
		a.ErrClear()
		return 0
	}
	defer a.DecRef(capi)
	if a.Type(capi) != a.DictType {
		return 0
	}
	c := a.DictGetItemString(capi, name)
	if c == 0 || a.Type(c) != a.CapsuleType {
		return 0
	}
	fn := a.CapsuleGetPointer(c, (*byte)(cmem.Ptr(a.CapsuleGetName(c))))
	if fn == 0 {
		a.ErrClear()
	}
	return ffi.Fn(fn) // the module, and so the function, lives for the process
}

// dpctlUnderGIL is Python.Dpctl for a caller that holds the GIL. Until
// dpctl is loaded it waits with the GIL released: the import may be under
// way on another thread (inside Dpctl's sync.Once), and that import runs
// Python code that needs the GIL to finish. Waiting on the Once with the
// GIL held would deadlock both. loadDpctl takes the GIL again for itself
// (PyGILState_Ensure restores this thread's saved state).
func (g *GIL) dpctlUnderGIL() (*dpctl.Backend, error) {
	if d := g.py.loadedDpctl(); d != nil {
		return d, nil
	}
	a := g.api()
	ts := a.SaveThread()
	defer a.RestoreThread(ts)
	return g.py.Dpctl()
}
