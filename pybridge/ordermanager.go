package pybridge

import (
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/usm"
)

// dpnp orders its operations on a queue by events, not by waits: each
// operation depends on the events dpctl.utils.SequentialOrderManager
// keeps for the queue, and adds its own. Go's launches join that
// bookkeeping here, so that a Go function may return before its kernel
// ends (RATIONALE.md, "Launches that return before their kernel ends").

// Submitted records ev, the event of work submitted to q (a queue of the
// interpreter's dpctl: the queue of a dpnp array, of an Array bound to
// dpctl), among q's submitted events in
// dpctl.utils.SequentialOrderManager, as dpnp records its own
// operations': dpnp's and dpnp.tensor's next operation on the queue
// depends on it, and SequentialOrderManager[q].wait() waits for it. The
// manager keeps a dpctl.SyclEvent over a copy of the event
// (SyclEvent_Make), so ev stays the caller's to close. ok is false, and
// nothing is recorded, for a queue that is not dpctl's, an event that is
// not a live launch event of the interpreter's dpctl Backend, or before
// dpctl is loaded; a Python exception on the way is the error.
func (g *GIL) Submitted(q usm.Queue, ev usm.Event) (ok bool, err error) {
	dq, isDpctl := q.(*dpctl.Queue)
	d := g.py.loadedDpctl()
	if !isDpctl || dq == nil || d == nil {
		return false, nil
	}
	ty := g.dpctlTypes()
	if ty.eventMake == 0 {
		return false, nil
	}
	var sev uintptr
	if !d.WithEventRef(ev, func(ref uintptr) { sev = ty.eventMake.Call1(ref) }) {
		return false, nil
	}
	a := g.api()
	if sev == 0 {
		return false, g.fetch("SyclEvent_Make")
	}
	defer a.DecRef(sev)
	qobj, err := g.queueObjectOf(dq)
	if err != nil || qobj == 0 {
		return false, err
	}
	defer a.DecRef(qobj)
	som, err := g.orderManager()
	if err != nil {
		return false, err
	}
	getitem, add := g.py.internedName("__getitem__"), g.py.internedName("add_event_pair")
	if getitem == 0 || add == 0 {
		return false, g.fetch("SequentialOrderManager")
	}
	mgr := a.VectorcallMethod(getitem, []uintptr{som, qobj}, 2, 0)
	if mgr == 0 {
		return false, g.fetch("SequentialOrderManager[q]")
	}
	defer a.DecRef(mgr)
	// The launch is its own host-side completion (its arguments are kept
	// alive by Go, not by a host task), so it is both events of the pair.
	r := a.VectorcallMethod(add, []uintptr{mgr, sev, sev}, 3, 0)
	if r == 0 {
		return false, g.fetch("SequentialOrderManager[q].add_event_pair")
	}
	a.DecRef(r)
	return true, nil
}

// queueObjectOf returns a new reference to a dpctl.SyclQueue over dq: the
// object the queue cache holds for it (the SyclQueue a SUAI named, whose
// hash dpctl need not compute again), else a new one (SyclQueue_Make).
func (g *GIL) queueObjectOf(dq *dpctl.Queue) (uintptr, error) {
	if o := g.py.dpQueues.lookupQueue(dq); o != 0 {
		g.api().IncRef(o)
		return o, nil
	}
	o, err := g.QueueObject(dq)
	return o.p, err
}

// lookupQueue returns the cached SyclQueue object whose pinned queue is
// q (borrowed; the caller holds the GIL, which keeps the cache's
// reference), or 0.
func (c *queueCache) lookupQueue(q *dpctl.Queue) uintptr {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.e {
		if f.pin.Queue() == q {
			return f.obj
		}
	}
	return 0
}

// orderManager is dpctl.utils.SequentialOrderManager (imported the first
// time, then kept for the life of the process; borrowed).
func (g *GIL) orderManager() (uintptr, error) {
	const key = "\x00dpctl.utils.SequentialOrderManager"
	if o := g.py.internedObject(key); o != 0 {
		return o, nil
	}
	m, err := g.importModule("dpctl.utils")
	if err != nil {
		return 0, err
	}
	defer g.DecRef(m)
	som, err := g.getAttr(m, "SequentialOrderManager")
	if err != nil {
		return 0, err
	}
	return g.py.keepObject(key, som.p), nil
}
