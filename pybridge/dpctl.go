package pybridge

import (
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/hugepage"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// Dpctl is dpctl's SYCL runtime seen from Go, through the very
// libDPCTLSyclInterface.so that the interpreter's dpctl loaded. It is a
// usm.Backend whose devices are sycl::device::get_devices() in order, so a
// backend-local device index is the kDLOneAPI device_id; it is also a
// usm.Allocator, binds SyclContextRef/SyclQueueRef syclobj values
// (BindRef), numbers devices for DLPack (DLPackDevice, LocalDevice), and
// copies (Copy) and gives queues (Queue) for the registry: usm's
// backends_test.go checks these against usm's interfaces.
type Dpctl struct {
	api     *dpctlapi.API
	version string
	devs    []*dpDevice
	descs   []syclobj.Device
	ctxs    []*defaultCtx // distinct cached (default) contexts with USM, for QueryPointer
	native  nativeRoutes  // to allocation extents (native.go)
	reg     *usm.Registry
	queues  queueCache
	order   dpctlapi.Ordering // device-side ordering (dpctl_order.go)
}

type dpDevice struct {
	ref    uintptr     // DPCTLSyclDeviceRef (owned)
	ctx    uintptr     // dpctl's cached context of the device (owned)
	defCtx uintptr     // the platform's default context (owned; 0 if none)
	usm    bool        // the device can allocate USM (see hasUSM)
	cached *defaultCtx // ctx among Dpctl.ctxs (nil without USM)
	qOnce  sync.Once
	q      *dpctlQueue
	qErr   error
}

var (
	_ usm.Backend   = (*Dpctl)(nil)
	_ usm.Allocator = (*Dpctl)(nil)
)

// Dpctl imports dpctl in the interpreter and binds its C library, once it
// succeeds: a failed load is not remembered, so the next call tries again
// (a KeyboardInterrupt during the import, or a dpctl installed since, must
// not disable dpctl for the life of the process). Callers that arrive
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
func (py *Python) Dpctl() (*Dpctl, error) {
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
	d    *Dpctl
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

// loadedDpctl returns the Dpctl if Dpctl() has succeeded, without loading
// it (ReadSUAI must not import dpctl or enumerate devices).
func (py *Python) loadedDpctl() *Dpctl { return py.dpLoaded.Load() }

func (py *Python) loadDpctl() (*Dpctl, error) {
	var dir, version string
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
		if v, err := g.getAttr(m, "__version__"); err == nil {
			version, _ = g.String(v)
			g.DecRef(v)
		} else {
			g.releaseError(err) // optional
		}
		return nil
	})
	if interrupted {
		return nil, err
	}
	if err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "pybridge.Dpctl", "cannot import dpctl", err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "libDPCTLSyclInterface.so*"))
	if len(matches) == 0 {
		return nil, errkind.New(errkind.NotAvailable, "pybridge.Dpctl", "no libDPCTLSyclInterface.so in "+dir)
	}
	// RTLD_NOLOAD: only the instance dpctl already loaded will do.
	api, err := dpctlapi.Open(matches...)
	var le *ffi.LibraryError
	if errors.As(err, &le) {
		return nil, errkind.Wrap(errkind.NotAvailable, "pybridge.Dpctl", "dpctl is imported but its C library is not loaded", err)
	}
	if err != nil {
		return nil, err
	}
	d := &Dpctl{api: api, version: version, native: nativeRoutes{fn: api.Native()}, order: api.Ordering()}
	if err := d.enumerate(); err != nil {
		return nil, err
	}
	d.reg = usm.NewRegistry(d)
	return d, nil
}

func (d *Dpctl) enumerate() error {
	a := d.api
	vec := a.DeviceMgrGetDevices(dpctlapi.AllBackends | dpctlapi.AllDevices)
	if vec == 0 {
		return errkind.New(errkind.NotAvailable, "pybridge.Dpctl", "DPCTLDeviceMgr_GetDevices failed")
	}
	defer a.DeviceVectorDelete(vec)
	n := a.DeviceVectorSize(vec)
	for i := range n {
		ref := a.DeviceVectorGetAt(vec, i)
		if ref == 0 {
			continue
		}
		dev := &dpDevice{ref: ref, ctx: a.DeviceMgrGetCachedContext(ref), usm: d.hasUSM(ref)}
		if p := a.DeviceGetPlatform(ref); p != 0 {
			dev.defCtx = a.PlatformGetDefaultContext(p)
			a.PlatformDelete(p)
		}
		desc := syclobj.Device{}
		switch a.DeviceGetBackend(ref) {
		case dpctlapi.BackendOpenCL:
			desc.Backend = syclobj.OpenCL
		case dpctlapi.BackendLevelZero:
			desc.Backend = syclobj.LevelZero
		case dpctlapi.BackendCUDA:
			desc.Backend = syclobj.CUDA
		case dpctlapi.BackendHIP:
			desc.Backend = syclobj.HIP
		}
		switch a.DeviceGetDeviceType(ref) {
		case dpctlapi.DeviceCPU:
			desc.Type = syclobj.CPU
		case dpctlapi.DeviceGPU:
			desc.Type = syclobj.GPU
		case dpctlapi.DeviceAccelerator:
			desc.Type = syclobj.Accelerator
		}
		desc.Name = a.DeviceGetName(ref)
		d.devs = append(d.devs, dev)
		d.descs = append(d.descs, desc)
	}
	for i := range d.devs {
		c := d.devs[i].ctx
		if c == 0 || !d.devs[i].usm {
			continue // never ask a context without USM about pointers
		}
		var same *defaultCtx
		for _, o := range d.ctxs {
			if a.ContextAreEq(o.ref, c) {
				same = o
				break
			}
		}
		if same == nil {
			same = &defaultCtx{ref: c}
			d.ctxs = append(d.ctxs, same)
		}
		d.devs[i].cached = same
	}
	return nil
}

// Version is dpctl.__version__.
func (d *Dpctl) Version() string { return d.version }

// Registry returns a registry holding this backend (and nothing else).
func (d *Dpctl) Registry() *usm.Registry { return d.reg }

// Name returns the backend of the first device (OpenCL when there is none).
// The devices themselves carry their own backends.
func (d *Dpctl) Name() syclobj.Backend {
	if len(d.descs) > 0 && d.descs[0].Backend != syclobj.AnyBackend {
		return d.descs[0].Backend
	}
	return syclobj.OpenCL
}

// Devices lists the root devices in sycl::device::get_devices() order.
func (d *Dpctl) Devices() []syclobj.Device { return append([]syclobj.Device(nil), d.descs...) }

func usmKind(t int) usm.Kind {
	switch t {
	case dpctlapi.USMDevice:
		return usm.KindDevice
	case dpctlapi.USMShared:
		return usm.KindShared
	case dpctlapi.USMHost:
		return usm.KindHost
	}
	return usm.KindUnknown
}

// pointerIn classifies ptr in context ctx and finds its (root) device. The
// type is asked first: DPCTLUSM_GetPointerDevice throws through the C ABI
// for pointers the context does not know.
func (d *Dpctl) pointerIn(ptr, ctx uintptr) usm.PointerInfo {
	a := d.api
	if ptr == 0 || ctx == 0 {
		return usm.PointerInfo{Device: -1}
	}
	k := usmKind(a.USMGetPointerType(ptr, ctx))
	if k == usm.KindUnknown {
		return usm.PointerInfo{Device: -1}
	}
	info := usm.PointerInfo{Kind: k, Device: -1}
	if dev := a.USMGetPointerDevice(ptr, ctx); dev != 0 {
		info.Device = d.position(dev)
		a.DeviceDelete(dev)
	}
	return info
}

// position returns the index of dev's root device in Devices(), or -1. It
// does not take dev.
func (d *Dpctl) position(dev uintptr) int {
	a := d.api
	root := dev
	for {
		p := a.DeviceGetParentDevice(root)
		if p == 0 {
			break
		}
		if root != dev {
			a.DeviceDelete(root)
		}
		root = p
	}
	pos := -1
	for i := range d.devs {
		if a.DeviceAreEq(d.devs[i].ref, root) {
			pos = i
			break
		}
	}
	if root != dev {
		a.DeviceDelete(root)
	}
	return pos
}

// QueryPointer classifies ptr in each device's default (cached) context,
// and reports the allocation's extent where the context's native runtime
// can tell it (OpenCL with cl_intel_unified_shared_memory, Level Zero;
// see native.go).
func (d *Dpctl) QueryPointer(ptr uintptr) usm.PointerInfo {
	info, c := d.locate(ptr)
	if c != nil {
		info.Base, info.Size = c.native(d).extent(ptr)
	}
	return info
}

// QueryPointerInContextOf is QueryPointer in device's cached context
// alone, the one a filter selector naming the device binds to
// (dpctl.SyclQueue(filter) makes its queue there): memory of another
// context is KindUnknown, and a device without USM knows no pointer.
// usm.Registry binds filter selectors with it.
func (d *Dpctl) QueryPointerInContextOf(ptr uintptr, device int) usm.PointerInfo {
	if device < 0 || device >= len(d.devs) || d.devs[device].cached == nil {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	c := d.devs[device].cached
	info := d.pointerIn(ptr, c.ref)
	if info.Kind != usm.KindUnknown {
		info.Base, info.Size = c.native(d).extent(ptr)
	}
	return info
}

// locate is QueryPointer without the extent: the kind and device, and the
// default context that knows ptr (nil if none does).
func (d *Dpctl) locate(ptr uintptr) (usm.PointerInfo, *defaultCtx) {
	for _, c := range d.ctxs {
		if info := d.pointerIn(ptr, c.ref); info.Kind != usm.KindUnknown {
			return info, c
		}
	}
	return usm.PointerInfo{Device: -1}, nil
}

// hasUSM reports whether a device supports any kind of USM allocation.
//
// Why it matters: DPCTLUSM_GetPointerType has no try/catch, and SYCL's
// get_pointer_type throws in a context whose devices have no USM (PoCL 3.1
// on OpenCL, for one), which aborts the process. Pointers are only ever
// classified in contexts that pass this check.
func (d *Dpctl) hasUSM(dev uintptr) bool {
	for _, asp := range []int{dpctlapi.AspectUSMDevice, dpctlapi.AspectUSMHost, dpctlapi.AspectUSMShared} {
		if d.api.DeviceHasAspect(dev, asp) {
			return true
		}
	}
	return false
}

// usmContext reports whether pointers may be classified in ctx: it is one
// of the USM-capable default contexts (returned as def), or one of its
// devices has USM.
func (d *Dpctl) usmContext(ctx uintptr) (ok bool, def *defaultCtx) {
	a := d.api
	for _, c := range d.ctxs {
		if a.ContextAreEq(c.ref, ctx) {
			return true, c
		}
	}
	vec := a.ContextGetDevices(ctx)
	if vec == 0 {
		return false, nil
	}
	defer a.DeviceVectorDelete(vec)
	for i := range a.DeviceVectorSize(vec) {
		dev := a.DeviceVectorGetAt(vec, i)
		ok := dev != 0 && d.hasUSM(dev)
		if dev != 0 {
			a.DeviceDelete(dev)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// BindRef binds ptr to a syclobj reference for the usm registry, with
// dpctl's rules for syclobj: for a queue, the pointer must be USM of the
// queue's context and the array is on the queue's device, with (a copy
// of) that queue; for a context, the pointer's type is checked first, then
// its device, and a new queue is made on that context and device.
func (d *Dpctl) BindRef(ref syclobj.Obj, ptr uintptr) (usm.PointerInfo, usm.Queue, bool, error) {
	a := d.api
	switch r := ref.(type) {
	case syclobj.QueueRef:
		if r.Pointer() == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "pybridge.BindRef", "NULL SyclQueueRef")
		}
		if info, q, hit, err := d.queues.bind(d, r.Pointer(), ptr); hit {
			return info, q, true, err
		}
		ctx := a.QueueGetContext(r.Pointer())
		if ctx == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "pybridge.BindRef", "cannot get the queue's context")
		}
		ok, def := d.usmContext(ctx)
		if !ok {
			a.ContextDelete(ctx)
			return usm.PointerInfo{}, nil, true, errQueueNoUSM()
		}
		k := usmKind(a.USMGetPointerType(ptr, ctx))
		if k == usm.KindUnknown {
			a.ContextDelete(ctx)
			return usm.PointerInfo{}, nil, true, errNotQueueUSM()
		}
		info := usm.PointerInfo{Kind: k, Device: -1}
		info.Base, info.Size = d.extentIn(ctx, def, ptr)
		a.ContextDelete(ctx)
		if dev := a.QueueGetDevice(r.Pointer()); dev != 0 {
			info.Device = d.position(dev)
			a.DeviceDelete(dev)
		}
		q := a.QueueCopy(r.Pointer())
		if q == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "pybridge.BindRef", "DPCTLQueue_Copy failed")
		}
		return info, d.ownQueue(q), true, nil
	case syclobj.ContextRef:
		ctx := r.Pointer()
		if ctx == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "pybridge.BindRef", "NULL SyclContextRef")
		}
		ok, def := d.usmContext(ctx)
		if !ok {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "pybridge.BindRef", "no device of the context supports USM")
		}
		k := usmKind(a.USMGetPointerType(ptr, ctx))
		if k == usm.KindUnknown {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "pybridge.BindRef", "not a USM pointer of the context")
		}
		dev := a.USMGetPointerDevice(ptr, ctx)
		if dev == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "pybridge.BindRef", "cannot get the pointer's device")
		}
		defer a.DeviceDelete(dev)
		info := usm.PointerInfo{Kind: k, Device: d.position(dev)}
		info.Base, info.Size = d.extentIn(ctx, def, ptr)
		q := a.QueueCreate(ctx, dev)
		if q == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "pybridge.BindRef", "DPCTLQueue_Create failed")
		}
		return info, d.ownQueue(q), true, nil
	}
	return usm.PointerInfo{}, nil, false, nil
}

func errQueueNoUSM() error {
	return errkind.New(errkind.Value, "pybridge.BindRef", "the queue's device does not support USM")
}

func errNotQueueUSM() error {
	return errkind.New(errkind.Value, "pybridge.BindRef", "not a USM pointer of the queue's context")
}

// queueCacheSize bounds the queue cache: programs use a few queues, and
// each entry keeps a dpctl.SyclQueue alive.
const queueCacheSize = 8

// queueCache remembers what BindRef learns about a dpctl.SyclQueue seen
// as a SUAI syclobj, so that binding the next array on the same queue
// takes one C call (DPCTLUSM_GetPointerType) instead of nine, plus two
// for the allocation's extent through the entry's native context, and
// shares one queue copy instead of making one per array.
//
// Why a pointer key is safe: every entry holds a strong Python reference
// to its SyclQueue, and a SyclQueue owns its DPCTLSyclQueueRef for its
// whole life (set at construction, deleted at deallocation, not settable
// from Python; the type is immutable). So while the entry exists the
// pointer cannot be freed and reused by another queue: a QueueRef, or an
// object, with the entry's pointer is the entry's live queue. This is why
// entries are made only where the Python object is known (ReadSUAI with an
// exact dpctl.SyclQueue, holding the GIL); capsules and contexts take the
// uncached path. Entries are dropped oldest first, or all at once by
// dropQueueCache; the reference is then given back with the GIL.
type queueCache struct {
	mu sync.Mutex
	e  []*queueFacts // oldest first
}

type queueFacts struct {
	obj uintptr     // the dpctl.SyclQueue (a strong reference)
	ref uintptr     // its DPCTLSyclQueueRef (owned by obj)
	ctx uintptr     // DPCTLQueue_GetContext(ref) (owned by the entry)
	usm bool        // usmContext(ctx): pointers may be classified in ctx
	dev int         // position of the queue's device, or -1
	q   *dpctlQueue // a copy of the queue, shared by the arrays bound to it
	nat *ctxNative  // ctx's native side, for extents; nil if none
	own bool        // nat was made for this entry (not a default context's)
}

// lookupObj returns the queue ref of a cached SyclQueue object.
func (c *queueCache) lookupObj(obj uintptr) (uintptr, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.e {
		if f.obj == obj {
			return f.ref, true
		}
	}
	return 0, false
}

// bind is BindRef for a cached queue; hit is false if ref is not cached.
// The lock is held across DPCTLUSM_GetPointerType and the extent query so
// that the entry's context and native side cannot be released by an
// eviction meanwhile.
func (c *queueCache) bind(d *Dpctl, ref, ptr uintptr) (info usm.PointerInfo, q usm.Queue, hit bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.e {
		if f.ref != ref {
			continue
		}
		if !f.usm {
			return usm.PointerInfo{}, nil, true, errQueueNoUSM()
		}
		// The native context is the queue's own, so what it reports of
		// ptr is what SYCL would: kind and extent in one query. SYCL is
		// asked where it has no native side or that side does not know
		// ptr; there is then no extent.
		info := f.nat.query(ptr)
		if info.Kind == usm.KindUnknown {
			info = usm.PointerInfo{Kind: usmKind(d.api.USMGetPointerType(ptr, f.ctx))}
			if info.Kind == usm.KindUnknown {
				return usm.PointerInfo{}, nil, true, errNotQueueUSM()
			}
		}
		info.Device = f.dev
		return info, f.q, true, nil
	}
	return usm.PointerInfo{}, nil, false, nil
}

// noteQueue caches the facts about the SyclQueue obj, whose ref is ref,
// unless it is cached already. The caller holds the GIL (the entry takes a
// reference to obj; an eviction gives one back).
func (d *Dpctl) noteQueue(g *GIL, obj, ref uintptr) {
	c := &d.queues
	if _, ok := c.lookupObj(obj); ok || ref == 0 {
		return
	}
	a := d.api
	ctx := a.QueueGetContext(ref)
	if ctx == 0 {
		return // BindRef reports it
	}
	f := &queueFacts{obj: obj, ref: ref, ctx: ctx, dev: -1}
	var def *defaultCtx
	f.usm, def = d.usmContext(ctx)
	if f.usm {
		if dev := a.QueueGetDevice(ref); dev != 0 {
			f.dev = d.position(dev)
			a.DeviceDelete(dev)
		}
		q := a.QueueCopy(ref)
		if q == 0 {
			a.ContextDelete(ctx)
			return // BindRef reports it
		}
		f.q = d.ownQueue(q)
		if def != nil {
			f.nat = def.native(d)
		} else {
			f.nat, f.own = d.newNative(ctx), true
		}
	}
	g.api().IncRef(obj)
	var old *queueFacts
	c.mu.Lock()
	for _, e := range c.e {
		if e.obj == obj { // defensive: nothing above releases the GIL
			c.mu.Unlock()
			d.dropFacts(g, f)
			return
		}
	}
	if len(c.e) == queueCacheSize {
		old = c.e[0]
		c.e = append(c.e[:0], c.e[1:]...)
	}
	c.e = append(c.e, f)
	c.mu.Unlock()
	if old != nil {
		d.dropFacts(g, old) // out of the lock: the DecRef may run Python code
	}
}

// dropFacts frees what an entry that left the cache owns. Arrays bound to
// its queue copy keep that copy alive on their own.
func (d *Dpctl) dropFacts(g *GIL, f *queueFacts) {
	if f.own {
		f.nat.release()
	}
	d.api.ContextDelete(f.ctx)
	g.api().DecRef(f.obj)
}

// dropQueueCache forgets the dpctl.SyclQueue objects that AsArray and
// ReadSUAI have cached (at most eight, see queueCache) and releases the
// references that kept them alive. Call it with the GIL, for example
// before the interpreter finalises or when a queue must be collected now;
// later arrays repopulate the cache.
func (d *Dpctl) dropQueueCache(g *GIL) {
	c := &d.queues
	c.mu.Lock()
	e := c.e
	c.e = nil
	c.mu.Unlock()
	for _, f := range e {
		d.dropFacts(g, f)
	}
}

// DLPackDevice returns (kDLOneAPI, device): local indices are positions in
// get_devices().
func (d *Dpctl) DLPackDevice(device int) (dlpack.Device, error) {
	if device < 0 || device >= len(d.devs) {
		return dlabi.Device{}, errkind.New(errkind.Buffer, "pybridge.DLPackDevice", "no SYCL device "+strconv.Itoa(device))
	}
	return dlabi.Device{Type: dlabi.OneAPI, ID: int32(device)}, nil
}

// LocalDevice maps a kDLOneAPI device id back.
func (d *Dpctl) LocalDevice(dv dlpack.Device) (int, bool) {
	if dv.Type != dlabi.OneAPI || dv.ID < 0 || int(dv.ID) >= len(d.devs) {
		return -1, false
	}
	return int(dv.ID), true
}

// dpctlQueue is a DPCTLSyclQueueRef owned by Go. Wait submits a barrier and
// waits on its event (DPCTLQueue_Wait can let an exception escape).
type dpctlQueue struct {
	d   *Dpctl
	ref uintptr
}

func (d *Dpctl) ownQueue(ref uintptr) *dpctlQueue {
	q := &dpctlQueue{d: d, ref: ref}
	api := d.api
	runtime.AddCleanup(q, func(r uintptr) { api.QueueDelete(r) }, ref)
	return q
}

// Ref returns the DPCTLSyclQueueRef, valid while q is reachable.
func (q *dpctlQueue) Ref() uintptr { return q.ref }

// Wait waits for all work submitted to the queue so far.
func (q *dpctlQueue) Wait() error {
	err := q.d.waitRef(q.ref)
	runtime.KeepAlive(q)
	return err
}

// waitRef waits for a queue ref the caller keeps alive: a barrier and a
// wait on its event, which (unlike DPCTLQueue_Wait) cannot let a C++
// exception escape.
func (d *Dpctl) waitRef(ref uintptr) error {
	a := d.api
	ev := a.QueueSubmitBarrier(ref)
	if ev == 0 {
		return errkind.New(errkind.Value, "pybridge.dpctlQueue.Wait", "DPCTLQueue_SubmitBarrier failed")
	}
	a.EventWait(ev)
	a.EventDelete(ev)
	return nil
}

// IsDefaultContext reports whether the queue's context is the default
// context of its device's platform: only such memory may be exported as
// kDLOneAPI, as dpctl's exporter requires (a consumer finds the memory
// from the device id alone, through that default context).
func (q *dpctlQueue) IsDefaultContext() bool {
	a := q.d.api
	ctx := a.QueueGetContext(q.ref)
	if ctx == 0 {
		return false
	}
	defer a.ContextDelete(ctx)
	dev := a.QueueGetDevice(q.ref)
	runtime.KeepAlive(q)
	if dev == 0 {
		return false
	}
	pos := q.d.position(dev)
	a.DeviceDelete(dev)
	if pos < 0 || q.d.devs[pos].defCtx == 0 {
		return false
	}
	return a.ContextAreEq(ctx, q.d.devs[pos].defCtx)
}

// Queue returns the device's in-order queue in its default context (made
// once).
func (d *Dpctl) Queue(device int) (usm.Queue, error) { return d.queue(device) }

func (d *Dpctl) queue(device int) (*dpctlQueue, error) {
	if device < 0 || device >= len(d.devs) {
		return nil, errkind.New(errkind.Value, "pybridge.Dpctl.Queue", "no SYCL device "+strconv.Itoa(device))
	}
	dv := d.devs[device]
	dv.qOnce.Do(func() {
		// In order: the queue is what from_dlpack passes to producers as
		// the stream they order on the device, which SYCL's barriers do
		// only for in-order queues (dpctl_order.go).
		r := d.api.QueueCreateForDevice(dv.ref, dpctlapi.QueueInOrder)
		if r == 0 {
			dv.qErr = errkind.New(errkind.NotAvailable, "pybridge.Dpctl.Queue", "cannot create a queue on "+d.descs[device].String())
			return
		}
		dv.q = &dpctlQueue{d: d, ref: r} // lives as long as the process
	})
	return dv.q, dv.qErr
}

// Alloc allocates USM of the given kind with the device's queue. A size of
// 0 allocates one byte, so the pointer is valid (dpctl requires it). On a
// CPU device an allocation of 4 MiB or more is advised to use transparent
// huge pages (RATIONALE.md, "Huge pages for large host allocations").
func (d *Dpctl) Alloc(device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	q, err := d.queue(device)
	if err != nil {
		return nil, err
	}
	var malloc func(size, q uintptr) uintptr
	var aspect int
	switch kind {
	case usm.KindDevice:
		malloc, aspect = d.api.MallocDevice, dpctlapi.AspectUSMDevice
	case usm.KindShared:
		malloc, aspect = d.api.MallocShared, dpctlapi.AspectUSMShared
	case usm.KindHost:
		malloc, aspect = d.api.MallocHost, dpctlapi.AspectUSMHost
	default:
		return nil, errkind.New(errkind.Value, "pybridge.Dpctl.Alloc", "cannot allocate USM of kind "+kind.String())
	}
	// The SYCL runtime throws, through dpctl's C API, out of the process
	// (abort) when the device cannot allocate this kind: ask first.
	if !d.api.DeviceHasAspect(d.devs[device].ref, aspect) {
		return nil, errkind.New(errkind.NotSupported, "pybridge.Dpctl.Alloc", d.descs[device].Name+" cannot allocate "+kind.String()+" USM (no usm_"+kind.String()+"_allocations aspect)")
	}
	p := malloc(max(size, 1), q.ref)
	if p == 0 {
		return nil, errkind.New(errkind.Memory, "pybridge.Dpctl.Alloc", "cannot allocate "+strconv.FormatUint(uint64(size), 10)+" bytes of "+kind.String()+" USM")
	}
	if d.descs[device].Type == syclobj.CPU {
		// A CPU device's USM of every kind is the process's own memory:
		// large allocations get huge pages, as the opencl backend's and
		// NumPy's do (internal/hugepage).
		_ = hugepage.Advise(p, size)
	}
	api := d.api
	return usm.NewAllocation(d, p, size, kind, device, func() error {
		api.FreeWithQueue(p, q.ref)
		return nil
	}), nil
}

// Copy copies n bytes between USM and/or host memory and waits for it, on
// the queue of the device that owns dst or src.
func (d *Dpctl) Copy(dst, src, n uintptr) error {
	if n == 0 {
		return nil
	}
	dev := 0
	if info, _ := d.locate(dst); info.Device >= 0 {
		dev = info.Device
	} else if info, _ := d.locate(src); info.Device >= 0 {
		dev = info.Device
	}
	q, err := d.queue(dev)
	if err != nil {
		return err
	}
	return q.Copy(dst, src, n)
}

// Copy copies n bytes with this queue and waits for it: USM of the
// queue's context, or host memory.
func (q *dpctlQueue) Copy(dst, src, n uintptr) error {
	if n == 0 {
		return nil
	}
	a := q.d.api
	ev := a.QueueMemcpy(q.ref, dst, src, n)
	runtime.KeepAlive(q)
	if ev == 0 {
		return errkind.New(errkind.Value, "pybridge.dpctlQueue.Copy", "DPCTLQueue_Memcpy failed")
	}
	a.EventWait(ev)
	a.EventDelete(ev)
	return nil
}
