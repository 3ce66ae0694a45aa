package pybridge

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/usm"
)

var (
	cDLTensor              = staticC("dltensor")
	cDLTensorVersioned     = staticC("dltensor_versioned")
	cUsedDLTensor          = staticC("used_dltensor")
	cUsedDLTensorVersioned = staticC("used_dltensor_versioned")
)

// capsuleAPI is the interpreter whose capsules the destructor serves (one
// per process).
var capsuleAPI atomic.Pointer[pyapi.API]

// capsuleDestructorPtr is the C entry point of the DLPack capsule
// destructor, created once per process (purego callbacks are never freed)
// through the process's callback gate, if a host program installed one.
var capsuleDestructorPtr = sync.OnceValue(func() uintptr { return boundary.Callback(capsuleDestructor) })

// capsuleBoundary names the destructor for boundary.Recover and InjectPanic.
const capsuleBoundary = "pybridge capsule destructor"

// capsuleDestructor runs inside Python's deallocation, with the GIL. It
// calls the tensor's deleter only if the capsule still has its fresh name:
// a consumer that renamed it to used_* owns the tensor. A panic must not
// unwind through C: it is recovered, counted and logged (the tensor is
// then leaked).
func capsuleDestructor(c uintptr) {
	defer boundary.Recover(capsuleBoundary, nil)
	boundary.Check(capsuleBoundary)
	a := capsuleAPI.Load()
	if a == nil || c == 0 {
		return
	}
	versioned := false
	switch pyapi.GoString(a.CapsuleGetName(c)) {
	case "dltensor":
	case "dltensor_versioned":
		versioned = true
	default:
		return
	}
	name := cDLTensor
	if versioned {
		name = cDLTensorVersioned
	}
	p := a.CapsuleGetPointer(c, name)
	if p == 0 {
		a.ErrWriteUnraisable(c)
		return
	}
	dlpack.UnsafeManaged(p, versioned).Delete()
}

// ToDLPack exports a Go array as a DLPack capsule: "dltensor_versioned"
// when opts.MaxVersion has major ≥ 1, else "dltensor". The capsule
// destructor calls the deleter only if no consumer took the tensor. A
// kDLOneAPI array bound to a dpctl queue whose context is not its
// platform's default context is refused with usm.ErrBuffer (consumers could
// not find the memory from the device id alone).
//
// dl_device=(kDLCPU, 0) is served for every array with a queue, whatever
// its context: the host copy is made by that queue (RATIONALE.md, "Host
// copies of memory in a sub-device's context").
func (g *GIL) ToDLPack(arr *usm.Array, opts dlpack.ExportOptions) (Object, error) {
	m, err := g.export(arr, opts)
	if err != nil {
		return Object{}, err
	}
	return g.capsule(m)
}

// hostCopier lets dlpack.Export copy memory of a queue's own context to
// the host: the copy lands in host-backend memory, and the array's queue,
// the only one that may read that memory, copies it.
type hostCopier struct {
	usm.Backend
	q *dpctl.Queue
}

func (h hostCopier) Alloc(_ int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	return cpu.Default().Alloc(0, kind, size)
}

func (h hostCopier) Copy(dst, src, n uintptr) error { return h.q.Copy(dst, src, n) }

// Capsule wraps a managed tensor (ownership passes to the capsule).
func (g *GIL) capsule(m dlpack.Managed) (Object, error) {
	a := g.api()
	capsuleAPI.CompareAndSwap(nil, a)
	name := cDLTensor
	if m.Versioned() {
		name = cDLTensorVersioned
	}
	c := a.CapsuleNew(m.Pointer(), name, capsuleDestructorPtr())
	if c == 0 {
		m.Delete()
		return Object{}, g.fetch("PyCapsule_New")
	}
	return Object{c}, nil
}

// importCapsule consumes a DLPack capsule: "dltensor_versioned" or
// "dltensor" are imported with dlpack.Import (reg resolves kDLOneAPI
// devices; nil uses the interpreter's dpctl when the tensor is kDLOneAPI)
// and renamed to used_* only once the import succeeded, so a refused
// capsule keeps its name and its own destructor releases it. A used_*
// capsule is a usm.ErrValue error; anything else is usm.ErrType.
func (g *GIL) importCapsule(c Object, reg *usm.Registry) (*dlpack.Tensor, error) {
	a := g.api()
	if a.Type(c.p) != a.CapsuleType {
		return nil, errkind.New(errkind.Type, "pybridge.ImportCapsule", "expected a 'dltensor' capsule, got "+g.objTypeName(c))
	}
	var name, used *byte
	versioned := false
	switch n := pyapi.GoString(a.CapsuleGetName(c.p)); n {
	case "dltensor":
		name, used = cDLTensor, cUsedDLTensor
	case "dltensor_versioned":
		name, used, versioned = cDLTensorVersioned, cUsedDLTensorVersioned, true
	case "used_dltensor", "used_dltensor_versioned":
		return nil, errkind.New(errkind.Value, "pybridge.ImportCapsule", "A DLPack tensor object can not be consumed multiple times")
	default:
		return nil, errkind.New(errkind.Type, "pybridge.ImportCapsule", "expected a 'dltensor' capsule, got a capsule named "+errkind.Quote(n))
	}
	p := a.CapsuleGetPointer(c.p, name)
	if p == 0 {
		return nil, g.fetch("pybridge.ImportCapsule")
	}
	reg, err := g.importRegistry(reg, p, versioned, "pybridge.ImportCapsule")
	if err != nil {
		return nil, err
	}
	t, err := dlpack.Import(dlpack.UnsafeManaged(p, versioned), dlpack.ImportOptions{Registry: reg, KeepOnError: true})
	if err != nil {
		return nil, err
	}
	a.CapsuleSetName(c.p, used)
	return t, nil
}

// deviceType reads the DLTensor's device type in place.
func deviceType(p uintptr, versioned bool) dlabi.DeviceType {
	var t *dlabi.Tensor
	if versioned {
		t = &(*dlabi.ManagedTensorVersioned)(cmem.Ptr(p)).DLTensor
	} else {
		t = &(*dlabi.ManagedTensor)(cmem.Ptr(p)).DLTensor
	}
	return t.Device.Type
}

// FromDLPackOptions are from_dlpack's keywords.
type FromDLPackOptions struct {
	Device   *dlpack.Device  // dl_device to ask the producer for; nil: its own
	Copy     dlpack.CopyMode // copy=None/True/False
	Stream   Object          // passed as stream= when not NULL
	Registry *usm.Registry   // nil: dpctl's, when needed
}

// maxVersion is the max_version FromDLPack asks producers for.
var maxVersion = dlpack.ProducerVersion

// FromDLPack consumes x.__dlpack__() as the array API's from_dlpack does:
// it calls __dlpack__(copy=…, dl_device=…, max_version=(1, 2)[, stream=…])
// (keywords in that order, so a producer's TypeError names them the same
// way every time) and, if the producer raises TypeError (a pre-2023.12
// signature), calls it again with only the keyword it has always known,
// stream, and does on this side what the producer could not: the copy
// (copy=True) and the move to the host (dl_device=(kDLCPU, 0)), through
// dlpack.Export's rules, so copy=False with a move it cannot do without a
// copy is a usm.ErrBuffer error (RATIONALE.md, "A consumer for
// pre-2023.12 producers"). A missing __dlpack__ or __dlpack_device__ is a
// usm.ErrAttribute error.
//
// A producer whose type offers the DLPack C exchange API
// (__dlpack_c_exchange_api__, or the 1.2 int form) is taken through it
// instead, with the same import rules (fromExchange), unless a stream is
// given: the table has no stream argument. When the producer's table
// refuses with BufferError, __dlpack__ is asked.
func (g *GIL) FromDLPack(x Object, opts FromDLPackOptions) (*dlpack.Tensor, error) {
	a := g.api()
	if opts.Stream.isNil() {
		api, err := g.exchangeAPI(x)
		if err != nil {
			return nil, err
		}
		if api != 0 {
			t, fallback, err := g.fromExchange(x, api, opts)
			if !fallback {
				return t, err
			}
		}
	}
	meth, err := g.producerMethods(x)
	if err != nil {
		return nil, err
	}
	defer a.DecRef(meth)
	// Host memory asked onto a SYCL device: a host producer cannot make
	// that move (NumPy raises BufferError, which must reach the caller
	// unchanged if we ask), so ask for the data where it is and copy it
	// onto the device here, as dpnp's from_dlpack does (hostToDevice).
	var onto *dlabi.Device
	if opts.Device != nil && opts.Device.Type == dlabi.OneAPI {
		pd, err := g.producerDevice(x)
		if err != nil {
			return nil, err
		}
		if pd.Type == dlabi.CPU {
			if opts.Copy == dlpack.CopyNever {
				return nil, errkind.New(errkind.Buffer, "pybridge.FromDLPack", "host memory cannot be placed on "+opts.Device.String()+" without a copy (copy=False)")
			}
			onto, opts.Device, opts.Copy = opts.Device, nil, dlpack.CopyIfNeeded
		}
	}
	stream, copyHere := opts.Stream, false
	var bindTo *dpctl.PinnedQueue
	if !stream.isNil() && g.IsSyclQueue(stream) {
		// The caller's own queue: the producer orders it after its work,
		// and the array is bound to it, as to a producer's own queue. A
		// host producer has no stream to order (NumPy refuses one): the
		// copy made here onto the device is bound to it.
		if d, err := g.dpctlUnderGIL(); err == nil {
			bindTo = g.py.queuePin(g, d, stream.p)
		}
		if onto != nil {
			stream = Object{}
		}
	}
	if stream.isNil() {
		// The consumer passes its queue, or the producer's own, so the
		// producer orders it (consumerStream); a pre-2023.12 producer
		// gets it too.
		s, q, err := g.consumerStream(x, opts)
		if err != nil {
			return nil, err
		}
		if !s.isNil() {
			defer g.DecRef(s)
			stream, bindTo = s, q
			// A copy is made here, from the array the producer ordered
			// our queue after, not asked of the producer: dpnp 0.20's
			// __dlpack__(copy=True) reads an array on an out-of-order
			// queue before the work pending on it has written it
			// (RATIONALE.md, "Queue ordering on the device").
			copyHere = opts.Copy == dlpack.CopyAlways
		}
	}
	c, err := g.callDLPack(x, opts, stream, copyHere)
	if err == nil {
		defer g.DecRef(c)
	}
	return g.fromDLPackResult(x, Object{meth}, c, err, stream, bindTo, copyHere, opts, onto)
}

// callDLPack calls x.__dlpack__ with the keywords opts ask for, in the
// order of their names: copy (unless the copy is made here), dl_device,
// max_version (the version FromDLPack reads, one tuple made once) and
// stream.
func (g *GIL) callDLPack(x Object, opts FromDLPackOptions, stream Object, copyHere bool) (Object, error) {
	var names [4]string
	var vals [4]uintptr
	n := 0
	if opts.Copy != dlpack.CopyIfNeeded && !copyHere {
		names[n], vals[n] = "copy", g.api().False
		if opts.Copy == dlpack.CopyAlways {
			vals[n] = g.api().True
		}
		n++
	}
	if opts.Device != nil {
		d, err := g.fromGo([]any{int64(opts.Device.Type), int64(opts.Device.ID)})
		if err != nil {
			return Object{}, err
		}
		defer g.DecRef(d)
		names[n], vals[n] = "dl_device", d.p
		n++
	}
	mv, err := g.maxVersionObject()
	if err != nil {
		return Object{}, err
	}
	names[n], vals[n] = "max_version", mv
	n++
	if !stream.isNil() {
		names[n], vals[n] = "stream", stream.p
		n++
	}
	return g.callMethodKw(x, "__dlpack__", names[:n], vals[:n])
}

// maxVersionObject is the max_version tuple FromDLPack passes, made once
// (a borrowed reference).
func (g *GIL) maxVersionObject() (uintptr, error) {
	const key = "\x00max_version"
	if o := g.py.internedObject(key); o != 0 {
		return o, nil
	}
	o, err := g.fromGo([]any{int64(maxVersion.Major), int64(maxVersion.Minor)})
	if err != nil {
		return 0, err
	}
	return g.py.keepObject(key, o.p), nil
}

// producerMethods is x.__dlpack__, a new reference, when it is callable and
// x has a __dlpack_device__ too; else notAProducer's error. As with dpctl's
// getattr(x, name, None), only AttributeError means "has none": any other
// exception of the lookups is the caller's, as it is.
func (g *GIL) producerMethods(x Object) (uintptr, error) {
	a := g.api()
	var found [2]uintptr
	defer func() { a.DecRef(found[0]); a.DecRef(found[1]) }() // DecRef ignores 0
	for i, name := range [...]string{"__dlpack__", "__dlpack_device__"} {
		n := g.py.internedName(name)
		if n == 0 {
			return 0, g.fetch(name)
		}
		var r int
		if found[i], r = a.LookupAttr(x.p, n); r < 0 {
			return 0, g.fetch(name)
		}
	}
	if found[0] == 0 || found[1] == 0 || !a.Callable(found[0]) {
		return 0, g.notAProducer(x)
	}
	meth := found[0]
	found[0] = 0 // the caller's
	return meth, nil
}

// notAProducer is FromDLPack's error for an x without a callable
// __dlpack__ and a __dlpack_device__ (usm.ErrAttribute), for callers that
// made those checks themselves (the extension's fast path).
func (g *GIL) notAProducer(x Object) error {
	return errkind.New(errkind.Attribute, "pybridge.FromDLPack", "the argument of type "+g.objTypeName(x)+" does not implement `__dlpack__` and `__dlpack_device__` methods")
}

// fromDLPackResult is the rest of FromDLPack: stream is what the first call
// passed (the consumer's queue, or nil), copyHere whether the copy opts ask
// for is to be made here rather than by the producer, onto the device host
// memory is to be copied onto (hostToDevice), or nil.
func (g *GIL) fromDLPackResult(x, meth, c Object, err error, stream Object, bindTo *dpctl.PinnedQueue, copyHere bool, opts FromDLPackOptions, onto *dlabi.Device) (*dlpack.Tensor, error) {
	legacy := false
	if err != nil && isPyKind(err, errkind.Type) {
		g.ReleaseError(err) // handled: the retry decides
		legacyKw := map[string]any{}
		if !stream.isNil() {
			legacyKw["stream"] = stream
		}
		c, err = g.call(meth, nil, legacyKw)
		if err == nil {
			defer g.DecRef(c)
		}
		legacy = true
	}
	if err != nil {
		return nil, err
	}
	t, err := g.importCapsule(c, opts.Registry)
	if err != nil {
		return nil, err
	}
	// The stream was the producer's own queue (consumerStream): the array
	// is bound to it, so whoever uses it (a copy below, a later export)
	// waits for the queue its data was written on.
	if bindTo != nil {
		if d := g.py.loadedDpctl(); d != nil && t.Backend == usm.Backend(d) && t.DLDevice.Type == dlabi.OneAPI && t.Device == bindTo.Device() {
			t.Queue = bindTo.Queue()
		} else if err := bindTo.Queue().Wait(); err != nil {
			// A tensor elsewhere than x.__dlpack_device__ said: nothing
			// ordered a queue of its device, so wait on the host.
			t.Release()
			return nil, err
		}
	}
	// With stream=None dpctl's producers do not synchronise: the data may
	// still be being written on the producer's queue. Wait on it, as the
	// DLPack consumer rules ask, when the producer exposes one: when no
	// queue was passed (a Go caller's own registry), and for a
	// pre-2023.12 producer, which may well ignore the stream it is given.
	// An out-of-order queue the caller named does not order what is
	// submitted to it after the producer's barrier ("Queue ordering on the
	// device"): wait on the producer's queue too.
	outOfOrder := bindTo != nil && !bindTo.InOrder()
	if (stream.isNil() || legacy || outOfOrder) && t.DLDevice.Type == dlabi.OneAPI {
		if err := g.waitProducerQueue(x); err != nil {
			t.Release()
			return nil, err
		}
	}
	if legacy || copyHere {
		if t, err = g.placeLegacy(t, opts, legacy); err != nil {
			return nil, err
		}
	}
	if onto != nil && t.DLDevice != *onto {
		t, err := g.hostToDevice(t, *onto)
		if err == nil && bindTo != nil && t.Device == bindTo.Device() && bindTo.Queue() != nil && bindTo.Queue().IsDefaultContext() {
			t.Queue = bindTo.Queue() // its memory is in the default context, the queue's own
		}
		return t, err
	}
	return t, nil
}

// producerDevice calls x.__dlpack_device__(); an exception it raises
// propagates as itself, and a result that is not a 2-tuple of integers is
// a TypeError.
func (g *GIL) producerDevice(x Object) (dlabi.Device, error) {
	r, err := g.callMethod(x, "__dlpack_device__", nil, nil)
	if err != nil {
		return dlabi.Device{}, err
	}
	defer g.DecRef(r)
	p, ok, err := g.dlpackPair(r, "__dlpack_device__() result", "integers `(device_type, device_id)`")
	if err != nil {
		return dlabi.Device{}, err
	}
	if !ok || p[0].overflow != 0 || p[1].overflow != 0 || p[0].v != int64(int32(p[0].v)) || p[1].v != int64(int32(p[1].v)) {
		return dlabi.Device{}, errkind.New(errkind.Type, "pybridge.FromDLPack", "__dlpack_device__() returned "+g.reprOf(r)+", not a (device_type, device_id) tuple of 32-bit integers")
	}
	return dlabi.Device{Type: dlabi.DeviceType(p[0].v), ID: int32(p[1].v)}, nil
}

// hostToDevice copies the host tensor t into device USM of the dpctl
// device onto, keeping its layout (the window the array touches is
// copied, strides and offset stay) and its read-only flag, and releases
// t. The copy is allocated and made with the device's queue in its
// platform's default context, so it exports as kDLOneAPI like any USM of
// that device; the copy has completed when this returns.
func (g *GIL) hostToDevice(t *dlpack.Tensor, onto dlabi.Device) (*dlpack.Tensor, error) {
	defer t.Release() // the copy needs nothing of t once made
	if t.DLDevice.Type != dlabi.CPU {
		return nil, errkind.New(errkind.Buffer, "pybridge.FromDLPack", "the producer returned a tensor on "+t.DLDevice.String()+" for "+onto.String())
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil, errkind.Wrap(errkind.Buffer, "pybridge.FromDLPack", "placing host memory on "+onto.String()+" needs dpctl", err)
	}
	dev, ok := d.LocalDevice(onto)
	if !ok {
		return nil, errkind.New(errkind.Buffer, "pybridge.FromDLPack", "unsupported device requested: no SYCL device "+onto.String())
	}
	in := t.Interface
	win, err := in.Window()
	if err != nil {
		return nil, errkind.Wrap(errkind.Buffer, "pybridge.FromDLPack", "invalid layout", err)
	}
	n := uintptr(win.Len())
	alloc, err := d.Alloc(dev, usm.KindDevice, max(n, uintptr(in.DType.Size())))
	if err != nil {
		return nil, err
	}
	// From here on the export below keeps the memory, so Free only drops
	// the allocation's own reference; on the error paths the memory really
	// goes, and a failure to free it is secondary to the error returned.
	defer func() { _ = alloc.Free() }()
	if n > 0 {
		if err := d.Copy(alloc.Pointer(), in.Data+uintptr(win.Lo), n); err != nil {
			return nil, err
		}
	}
	sel, err := d.Registry().SelectorFor(alloc.Backend(), dev)
	if err != nil {
		return nil, err
	}
	in.Data = alloc.Pointer() - uintptr(win.Lo) // win.Lo may be negative: wraps correctly
	in.Syclobj = sel
	arr, err := d.Registry().Bind(in)
	if err != nil {
		return nil, err
	}
	arr.Owner = alloc
	v := maxVersion
	m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &v})
	if err != nil {
		return nil, err
	}
	return dlpack.Import(m, dlpack.ImportOptions{Registry: d.Registry()})
}

// placeLegacy does for a tensor from a pre-2023.12 producer what
// dl_device and copy asked the producer for: it exports the tensor again
// under those options (a copy, or a host copy of device memory, made by
// dlpack.Export) and imports the result, releasing the producer's tensor.
// A tensor already where it was asked to be, with no copy asked for, is
// returned as it is.
func (g *GIL) placeLegacy(t *dlpack.Tensor, opts FromDLPackOptions, legacy bool) (*dlpack.Tensor, error) {
	moved := opts.Device != nil && *opts.Device != t.DLDevice
	if !moved && opts.Copy != dlpack.CopyAlways {
		return t, nil
	}
	defer t.Release() // the new tensor keeps what it still needs
	v := maxVersion
	m, err := dlpack.Export(&t.Array, dlpack.ExportOptions{MaxVersion: &v, Device: opts.Device, Copy: opts.Copy, HostAllocator: cpu.Default()})
	if err != nil {
		return nil, err
	}
	c, err := g.importManaged(m, opts.Registry)
	if err != nil {
		return nil, err
	}
	// A legacy tensor is read-only because it cannot say it is writable,
	// not because its producer said so: the copy made here is memory only
	// the caller sees, and is the caller's to write (it could not go back
	// to the producer anyway). A versioned producer's READ_ONLY is kept, as
	// dpnp keeps it on the copies it makes.
	if legacy {
		c.ReadOnly = false
	}
	return c, nil
}

// importRegistry is the registry the tensor at p is imported with: reg
// when given; else, for a kDLOneAPI tensor, the interpreter's dpctl
// registry, and nil (dlpack.Import's host default) for any other device.
func (g *GIL) importRegistry(reg *usm.Registry, p uintptr, versioned bool, op string) (*usm.Registry, error) {
	if reg != nil || deviceType(p, versioned) != dlabi.OneAPI {
		return reg, nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil, errkind.Wrap(errkind.Buffer, op, "a kDLOneAPI tensor needs dpctl", err)
	}
	return d.Registry(), nil
}

// waitProducerQueue waits on x.sycl_queue if it is a dpctl.SyclQueue,
// with the GIL released; producers without one (AttributeError) are
// taken to be synchronised already. Any other exception reading it is
// the error, as itself (producerQueue reads it the same way).
func (g *GIL) waitProducerQueue(x Object) error {
	a := g.api()
	ty := g.dpctlTypes()
	if ty.queue == 0 || ty.queueRef == 0 {
		return nil
	}
	n := g.py.internedName("sycl_queue")
	if n == 0 {
		return g.fetch("sycl_queue")
	}
	q, found := a.LookupAttr(x.p, n)
	if found < 0 {
		return g.fetch("sycl_queue")
	}
	if found == 0 {
		return nil
	}
	defer a.DecRef(q) // keeps the queue, and so its ref, alive for the wait
	if a.Type(q) != ty.queue {
		return nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return err
	}
	ref := ty.queueRef.Call1(q)
	// The wait may be long: other Python threads run meanwhile (the one
	// that completes the producer's work may be one of them). q stays
	// referenced, so its ref stays valid.
	ts := a.SaveThread()
	defer a.RestoreThread(ts)
	return d.UnsafeBorrowQueue(ref).Wait()
}

func isPyKind(err error, k *errkind.Kind) bool {
	e, ok := err.(*Exception) //nolint:errorlint // err itself, not what it wraps
	return ok && e.kind == k
}

// parseDLPackArgs validates __dlpack__'s keywords for an array on device
// dev (its __dlpack_device__) as the array API, NumPy and dpctl do:
// max_version and dl_device are None or 2-tuples of integers (TypeError
// otherwise; an exception an item's __index__ raises propagates), copy is
// None or read as NumPy reads it (copyFlag). Integers are read by value, never truncated: a dl_device
// whose type or id does not fit DLPack's int32 is a device nobody supports
// (BufferError); a max_version beyond uint32 asks for any version (it is
// capped), and a negative one is a ValueError.
//
// stream follows the array's device (RATIONALE.md, "__dlpack__'s
// stream", has the reasons):
//   - kDLCPU (and any device other than kDLOneAPI): only None, as NumPy;
//     anything else is errHostStream, with the class the process's NumPy
//     raises (RuntimeError up to NumPy 2.4, ValueError from 2.5 on).
//   - kDLOneAPI: None (the export waits on the array's queue); -1, the
//     array API's "no synchronization" (ExportOptions.NoSync; the consumer
//     owns the ordering); a dpctl.SyclQueue (dpctl's convention,
//     ExportOptions.Stream: the queue is ordered after the array's queue
//     on the device, and the export returns without waiting; where the
//     two cannot be ordered on the device, the array's queue is waited
//     on). With a kDLCPU dl_device
//     any stream but None is a ValueError, as dpctl. Any other integer is a
//     ValueError (SYCL has no integer stream convention, and a raw
//     sycl::queue* cannot be validated); a bool or any other object is the
//     TypeError dpctl raises.
//
// Callers that parse only dl_device and copy (an import) pass a nil stream;
// dev is then not looked at.
func (g *GIL) parseDLPackArgs(dev dlpack.Device, stream, maxVersion, dlDevice, copyArg Object) (dlpack.ExportOptions, error) {
	var o dlpack.ExportOptions
	mv, ok, err := g.dlpackPair(maxVersion, "max_version", "integers `(major, minor)`")
	if err != nil {
		return o, err
	}
	if ok {
		var v [2]uint32
		for i, x := range mv {
			switch {
			case x.overflow < 0 || (x.overflow == 0 && x.v < 0):
				return o, errkind.New(errkind.Value, "__dlpack__", "max_version out of range: "+g.reprOf(maxVersion))
			case x.overflow > 0 || x.v > math.MaxUint32:
				v[i] = math.MaxUint32
			default:
				v[i] = uint32(x.v)
			}
		}
		o.MaxVersion = &dlpack.Version{Major: v[0], Minor: v[1]}
	}
	dd, ok, err := g.dlpackPair(dlDevice, "dl_device", "`(device_type, device_id)`")
	if err != nil {
		return o, err
	}
	if ok {
		for _, x := range dd {
			if x.overflow != 0 || x.v != int64(int32(x.v)) {
				return o, errkind.New(errkind.Buffer, "__dlpack__", "unsupported device requested: "+g.reprOf(dlDevice)+" (DLPack device types and ids are 32-bit)")
			}
		}
		o.Device = &dlpack.Device{Type: dlpack.DeviceType(dd[0].v), ID: int32(dd[1].v)}
	}
	if !copyArg.isNil() && !g.isNone(copyArg) {
		c, err := g.copyFlag(copyArg)
		if err != nil {
			return o, err
		}
		o.Copy = dlpack.CopyNever
		if c {
			o.Copy = dlpack.CopyAlways
		}
	}
	if !stream.isNil() && !g.isNone(stream) {
		noSync, err := g.dlpackStream(dev, stream, o.Device)
		if err != nil {
			return o, err
		}
		o.NoSync = noSync
		if !noSync {
			o.Stream = g.streamQueue(stream)
		}
	}
	return o, nil
}

// copyFlag reads a copy keyword that is not None as NumPy's copy
// converter does, so both peers' consumers and producers agree with us on
// what they pass: a str is a ValueError (copy="never" is not a bool), and
// anything else is its truth value, so numpy.True_ is True and an
// exception bool() raises (the ValueError of a many-element array)
// propagates as itself.
func (g *GIL) copyFlag(c Object) (bool, error) {
	if g.api().HasFlag(c.p, pyapi.TPFlagsUnicodeSubclass) {
		return false, errkind.New(errkind.Value, "__dlpack__", "`copy` must be True, False or None, got the string "+g.reprOf(c))
	}
	return g.truth(c.p)
}

// noSyncStream is the stream value of the array API's "producer must not
// perform any synchronization": __dlpack__(stream=-1), what mpi4py asks of
// every non-CPU producer.
const noSyncStream = -1

// acceptsNoSyncStream reports whether parseDLPackArgs accepts
// stream=noSyncStream (an int, not a bool) for an array on dev, with
// dl_device None or dev: only kDLOneAPI arrays have streams at all
// (RATIONALE.md, "__dlpack__'s stream").
func acceptsNoSyncStream(dev dlpack.Device) bool { return dev.Type == dlpack.OneAPI }

// streamQueue returns the dpctl.SyclQueue stream (checked by dlpackStream)
// as a queue that dlpack.Export can order after the array's: borrowed,
// valid while the caller holds stream (for the __dlpack__ call). nil, so
// that Export waits on the host instead, if its ref cannot be read.
func (g *GIL) streamQueue(stream Object) usm.Queue {
	ty := g.dpctlTypes()
	if ty.queueRef == 0 {
		return nil
	}
	ref := ty.queueRef.Call1(stream.p)
	if ref == 0 {
		return nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil
	}
	return d.UnsafeBorrowQueue(ref)
}

// errHostStream is parseDLPackArgs's error for a stream other than None
// on an array that is not kDLOneAPI. It has no error kind, so Python sees a
// RuntimeError: the exception NumPy up to 2.4 raises for the same call.
// NumPy 2.5 raises ValueError instead; hostStreamError gives the class of
// the NumPy the process has.
var errHostStream = errors.New("__dlpack__: only stream=None is supported for an array on a device without streams (kDLCPU)")

// valueError is an error of kind errkind.Value with the text and chain of
// the error it holds.
type valueError struct{ error }

func (e valueError) Is(target error) bool { return target == errkind.Value }
func (e valueError) Unwrap() error        { return e.error }

// hostStreamError is errHostStream as the process's NumPy raises it for
// the same call (RATIONALE.md, "__dlpack__'s stream"): a ValueError, which
// still matches errHostStream, when the numpy in sys.modules is 2.5 or
// later; else (NumPy up to 2.4, or no numpy imported) the RuntimeError.
func (g *GIL) hostStreamError() error {
	if g.numpyAtLeast(2, 5) {
		return valueError{errHostStream}
	}
	return errHostStream
}

// numpyAtLeast reports whether sys.modules holds a numpy whose __version__
// is major.minor or later. It imports nothing; a numpy whose version it
// cannot read counts as older.
func (g *GIL) numpyAtLeast(major, minor int) bool {
	a := g.api()
	sys, err := g.importModule("sys")
	if err != nil {
		g.ReleaseError(err)
		return false
	}
	defer g.DecRef(sys)
	mods, err := g.getAttr(sys, "modules")
	if err != nil {
		g.ReleaseError(err)
		return false
	}
	defer g.DecRef(mods)
	np := a.DictGetItemString(mods.p, "numpy")
	if np == 0 {
		return false
	}
	a.IncRef(np) // the attribute lookup may run a module __getattr__
	defer a.DecRef(np)
	v, err := g.getAttr(Object{np}, "__version__")
	if err != nil {
		g.ReleaseError(err)
		return false
	}
	defer g.DecRef(v)
	s, ok := a.UnicodeAsString(v.p)
	if !ok {
		a.ErrClear()
		return false
	}
	// "2.4.6", "2.5.0rc1", "2.6.0.dev0+git...": the first two fields.
	f := strings.SplitN(s, ".", 3)
	if len(f) < 2 {
		return false
	}
	lead := func(s string) (int, error) { // the digits s starts with
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return strconv.Atoi(s[:i])
	}
	vmajor, err1 := lead(f[0])
	vminor, err2 := lead(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return vmajor > major || vmajor == major && vminor >= minor
}

// dlpackStream applies parseDLPackArgs's stream rules to a stream that is
// not None; noSync is true for -1 on a kDLOneAPI array.
func (g *GIL) dlpackStream(dev dlpack.Device, stream Object, dlDevice *dlpack.Device) (noSync bool, err error) {
	if !acceptsNoSyncStream(dev) {
		return false, g.hostStreamError()
	}
	if dlDevice != nil && dlDevice.Type == dlpack.CPU {
		return false, errkind.New(errkind.Value, "__dlpack__", "`stream` must be `None` when `dl_device` is of type `kDLCPU`")
	}
	a := g.api()
	if a.HasFlag(stream.p, pyapi.TPFlagsLongSubclass) && a.Type(stream.p) != a.BoolType {
		x, overflow, err := g.longValue(stream.p)
		if err != nil {
			return false, err
		}
		if overflow == 0 && x == noSyncStream {
			return true, nil
		}
		return false, errkind.New(errkind.Value, "__dlpack__", "an integer stream for a kDLOneAPI array must be -1 (no synchronization), got "+g.reprOf(stream)+"; pass a dpctl.SyclQueue to order a queue after the array's work")
	}
	ty := g.dpctlTypes()
	isQueue := 0
	if ty.queue != 0 {
		// isinstance reads the stream's __class__: what that raises is
		// the caller's, as dpctl's isinstance check would raise it.
		if isQueue = a.IsInstance(stream.p, ty.queue); isQueue < 0 {
			return false, g.fetch("stream")
		}
	}
	if isQueue == 0 {
		return false, errkind.New(errkind.Type, "__dlpack__", "stream argument type was expected to be dpctl.SyclQueue, got "+g.objTypeName(stream)+" instead")
	}
	return false, nil
}

// dlpackInt is an integer keyword item: its value, or the sign of a value
// outside int64.
type dlpackInt struct {
	v        int64
	overflow int
}

// dlpackPair reads the keyword v, None or a 2-tuple of integers; ok is
// false for None (or absent). The tuple belongs to the caller, and a
// tuple's items cannot be replaced, so they live while __index__ runs.
func (g *GIL) dlpackPair(v Object, what, form string) (r [2]dlpackInt, ok bool, err error) {
	if v.isNil() || g.isNone(v) {
		return r, false, nil
	}
	a := g.api()
	bad := func() error {
		return errkind.New(errkind.Type, "__dlpack__", "`__dlpack__` expects `"+what+"` to be a 2-tuple of "+form+", instead got "+g.reprOf(v))
	}
	if !a.HasFlag(v.p, pyapi.TPFlagsTupleSubclass) || a.SeqSize(v.p) != 2 {
		return r, false, bad()
	}
	for i := range r {
		x, of, err := g.intValue(a.TupleItem(v.p, i))
		var re *usm.ReadError
		if errors.As(err, &re) {
			return r, false, bad()
		}
		if err != nil {
			return r, false, err
		}
		r[i] = dlpackInt{x, of}
	}
	return r, true, nil
}

func (g *GIL) reprOf(o Object) string {
	a := g.api()
	r := a.Repr(o.p)
	if r == 0 {
		a.ErrClear()
		return "<" + g.objTypeName(o) + ">"
	}
	defer a.DecRef(r)
	s, ok := a.UnicodeAsString(r)
	if !ok { // a lone surrogate: the message shows the type instead
		a.ErrClear()
		return "<" + g.objTypeName(o) + ">"
	}
	return s
}
