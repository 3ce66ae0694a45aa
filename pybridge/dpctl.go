package pybridge

import (
	"path/filepath"
	"sync"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
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
