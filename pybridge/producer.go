package pybridge

import (
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
)

// What FromDLPack asks of a __dlpack__ producer, and the call: the
// version (max_version, and the retry without keywords for a producer
// that predates it), the device and the copy, and the stream the producer
// orders its work before. The table route asks in exchange.go.

// request is what fromDunder asks of the producer, and what it does on
// this side instead.
type request struct {
	// opts are the keywords as asked of the producer: with onto set, the
	// device is not asked (nil) and neither is a copy.
	opts FromDLPackOptions
	// stream is the stream argument (NULL: none); ownStream says request
	// holds a reference to it (consumerStream's), dropped by release.
	stream    Object
	ownStream bool
	// bindTo is the queue the imported array is bound to (orderDunder):
	// the caller's dpctl.SyclQueue, or the producer's own; nil for none.
	bindTo *dpctl.PinnedQueue
	// copyHere: the copy opts ask for is made here (placeAsked), from the
	// array the producer ordered our queue after, not asked of it.
	copyHere bool
	// onto: host memory is asked for where it is and copied onto this
	// device here (hostToDevice); nil for none.
	onto *dlabi.Device
}

// request decides what to ask of x (see request's fields).
func (g *GIL) request(x Object, opts FromDLPackOptions) (request, error) {
	req := request{opts: opts, stream: opts.Stream}
	// Host memory asked onto a SYCL device: a host producer cannot make
	// that move (NumPy raises BufferError, which must reach the caller
	// unchanged if we ask), so ask for the data where it is and copy it
	// onto the device here, as dpnp's from_dlpack does (hostToDevice).
	if opts.Device != nil && opts.Device.Type == dlabi.OneAPI {
		pd, err := g.producerDevice(x)
		if err != nil {
			return req, err
		}
		if pd.Type == dlabi.CPU {
			if opts.Copy == dlpack.CopyNever {
				return req, errkind.New(errkind.Buffer, "pybridge.FromDLPack", "host memory cannot be placed on "+opts.Device.String()+" without a copy (copy=False)")
			}
			req.onto, req.opts.Device, req.opts.Copy = opts.Device, nil, dlpack.CopyIfNeeded
		}
	}
	if !req.stream.isNil() && g.IsSyclQueue(req.stream) {
		// The caller's own queue: the producer orders it after its work,
		// and the array is bound to it, as to a producer's own queue. A
		// host producer has no stream to order (NumPy refuses one): the
		// copy made here onto the device is bound to it.
		if d, err := g.dpctlUnderGIL(); err == nil {
			req.bindTo = g.py.queuePin(g, d, req.stream.p)
		}
		if req.onto != nil {
			req.stream = Object{}
		}
	}
	if req.stream.isNil() {
		// The consumer passes its queue, or the producer's own, so the
		// producer orders it (consumerStream); a pre-2023.12 producer
		// gets it too.
		s, q, err := g.consumerStream(x, req.opts)
		if err != nil {
			return req, err
		}
		if !s.isNil() {
			req.stream, req.ownStream, req.bindTo = s, true, q
			// A copy is made here, from the array the producer ordered
			// our queue after, not asked of the producer: dpnp 0.20's
			// __dlpack__(copy=True) reads an array on an out-of-order
			// queue before the work pending on it has written it
			// (RATIONALE.md, "Queue ordering on the device").
			req.copyHere = req.opts.Copy == dlpack.CopyAlways
		}
	}
	return req, nil
}

// release drops the stream reference the request holds.
func (req *request) release(g *GIL) {
	if req.ownStream {
		g.DecRef(req.stream)
	}
}

// callProducer calls x.__dlpack__ as req asks (callDLPack) and, if the
// producer raises TypeError (a pre-2023.12 signature), meth again with
// only the stream, the keyword it has always known (legacy true): the
// copy and the move are then made here (placeAsked). The capsule is a new
// reference.
func (g *GIL) callProducer(x, meth Object, req request) (c Object, legacy bool, err error) {
	c, err = g.callDLPack(x, req.opts, req.stream, req.copyHere)
	if err == nil || !isPyKind(err, errkind.Type) {
		return c, false, err
	}
	g.ReleaseError(err) // handled: the retry decides
	legacyKw := map[string]any{}
	if !req.stream.isNil() {
		legacyKw["stream"] = req.stream
	}
	c, err = g.call(meth, nil, legacyKw)
	return c, true, err
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

// consumerStream returns the stream FromDLPack passes to x.__dlpack__ when
// the caller gave none, and the pin of the queue the imported array is
// then bound to (nil: the one dlpack.Import picks, dpctl's queue of the
// device).
//
// For a producer with its own in-order queue (x.sycl_queue, a
// dpctl.SyclQueue of the array's device, as dpctl's and dpnp's arrays
// have) the stream is that queue: dpctl's producers order nothing for their own queue, and the
// array, bound to it, is waited for on exactly the queue its data was
// written on. Otherwise it is a dpctl.SyclQueue over the queue of the
// target kDLOneAPI device, so that the producer orders that queue after
// its own work on the device, as dpctl's stream convention asks, and
// nobody waits on the host (RATIONALE.md, "Queue ordering on the device").
//
// The stream is the nil Object when there is no such queue: a target that
// is not kDLOneAPI (the standard then asks for stream None, and the
// producer synchronises), a caller's own registry, dpctl not imported, or
// a __dlpack_device__ that does not return two integers (the __dlpack__
// call then reports what is wrong). The caller owns the returned
// reference. What __dlpack_device__ raises, and an exception reading
// x.sycl_queue other than AttributeError, is the error, as itself.
func (g *GIL) consumerStream(x Object, opts FromDLPackOptions) (Object, *dpctl.PinnedQueue, error) {
	if opts.Registry != nil {
		return Object{}, nil, nil
	}
	ty := g.dpctlTypes()
	if ty.queue == 0 || ty.queueMake == 0 {
		return Object{}, nil, nil
	}
	var dev dlabi.Device
	if opts.Device != nil {
		dev = *opts.Device
	} else {
		var ok bool
		var err error
		if dev, ok, err = g.dlpackDeviceOf(x); err != nil || !ok {
			return Object{}, nil, err
		}
	}
	if dev.Type != dlabi.OneAPI {
		return Object{}, nil, nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return Object{}, nil, nil
	}
	local, ok := d.LocalDevice(dev)
	if !ok {
		return Object{}, nil, nil
	}
	if opts.Device == nil {
		s, q, err := g.producerQueue(x, d, local)
		if err != nil || q != nil {
			return s, q, err
		}
	}
	o := g.streamObject(d, local)
	if o == 0 {
		return Object{}, nil, nil
	}
	g.api().IncRef(o)
	return Object{o}, nil, nil
}

// producerQueue is x.sycl_queue when it is an in-order dpctl.SyclQueue on
// device local, and its pin; nil for none (no such attribute, another
// type, device or an out-of-order queue). The Object is a new reference.
func (g *GIL) producerQueue(x Object, d *dpctl.Backend, local int) (Object, *dpctl.PinnedQueue, error) {
	a := g.api()
	n := g.py.internedName("sycl_queue")
	if n == 0 {
		return Object{}, nil, g.fetch("sycl_queue")
	}
	o, r := a.LookupAttr(x.p, n)
	if r < 0 {
		return Object{}, nil, g.fetch("sycl_queue")
	}
	if r == 0 {
		return Object{}, nil, nil
	}
	if a.Type(o) == g.dpctlTypes().queue {
		// Only an in-order queue orders what is submitted to it later:
		// on an out-of-order one, a copy made after the producer's
		// kernels may run before them, and no barrier is seen to order it
		// (RATIONALE.md, "Queue ordering on the device"); such a producer
		// orders dpctl's in-order queue of the device instead.
		if pin := g.py.queuePin(g, d, o); pin != nil && pin.Device() == local && pin.Queue() != nil && pin.InOrder() {
			return Object{o}, pin, nil
		}
	}
	a.DecRef(o)
	return Object{}, nil, nil
}

// streamObject is a dpctl.SyclQueue over dpctl's queue of device local,
// made once and kept (a borrowed reference), or 0 where it cannot be made.
func (g *GIL) streamObject(d *dpctl.Backend, local int) uintptr {
	py := g.py
	py.streamMu.Lock()
	o := py.streamObjs[local]
	py.streamMu.Unlock()
	if o != 0 {
		return o
	}
	q, err := defaultQueue(d, local)
	if err != nil {
		return 0
	}
	o = g.dpctlTypes().queueMake.Call1(q.Ref()) // copies the ref: the object owns its own
	if o == 0 {
		g.api().ErrClear()
		return 0
	}
	py.streamMu.Lock()
	defer py.streamMu.Unlock()
	if old := py.streamObjs[local]; old != 0 { // made meanwhile (SyclQueue_Make may have released the GIL)
		g.api().DecRef(o)
		return old
	}
	if py.streamObjs == nil {
		py.streamObjs = map[int]uintptr{}
	}
	py.streamObjs[local] = o
	return o
}

// dlpackDeviceOf calls x.__dlpack_device__(). ok is false when it does not
// return two integers that fit a DLDevice (the __dlpack__ call then says
// what is wrong); what the method, or an item's __index__, raises is the
// error, as itself.
func (g *GIL) dlpackDeviceOf(x Object) (dlabi.Device, bool, error) {
	r, err := g.callMethodKw(x, "__dlpack_device__", nil, nil)
	if err != nil {
		return dlabi.Device{}, false, err
	}
	defer g.DecRef(r)
	p, ok, err := g.dlpackPair(r, "__dlpack_device__", "integers")
	if err != nil {
		if _, raised := raisedAsItself(err); raised {
			return dlabi.Device{}, false, err
		}
		return dlabi.Device{}, false, nil
	}
	if !ok {
		return dlabi.Device{}, false, nil
	}
	for _, v := range p {
		if v.overflow != 0 || v.v != int64(int32(v.v)) {
			return dlabi.Device{}, false, nil
		}
	}
	return dlabi.Device{Type: dlabi.DeviceType(p[0].v), ID: int32(p[1].v)}, true, nil
}
