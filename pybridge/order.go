package pybridge

import (
	"github.com/usmbridge/usmbridge/internal/dlabi"
)

// consumerStream returns the stream FromDLPack passes to x.__dlpack__ when
// the caller gave none: a new dpctl.SyclQueue over the queue the imported
// array will be bound to (dpctl's queue of the target kDLOneAPI device,
// the one dlpack.Import picks), so that the producer orders that queue
// after its own work on the device, as dpctl's stream convention asks,
// and nobody waits on the host (RATIONALE.md, "Queue ordering on the
// device"). It is the nil Object when there is no such queue: a target
// that is not kDLOneAPI (the standard then asks for stream None, and the
// producer synchronises), a caller's own registry, dpctl not imported, or
// a __dlpack_device__ that fails (the __dlpack__ call then reports what
// is wrong). The caller owns the returned reference.
func (g *GIL) consumerStream(x Object, opts FromDLPackOptions) Object {
	if opts.Registry != nil {
		return Object{}
	}
	ty := g.dpctlTypes()
	if ty.queue == 0 || ty.queueMake == 0 {
		return Object{}
	}
	var dev dlabi.Device
	if opts.Device != nil {
		dev = *opts.Device
	} else {
		var ok bool
		if dev, ok = g.dlpackDeviceOf(x); !ok {
			return Object{}
		}
	}
	if dev.Type != dlabi.OneAPI {
		return Object{}
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return Object{}
	}
	local, ok := d.LocalDevice(dev)
	if !ok {
		return Object{}
	}
	q, err := defaultQueue(d, local)
	if err != nil {
		return Object{}
	}
	o := ty.queueMake.Call(q.Ref()) // copies the ref: the object owns its own
	if o == 0 {
		g.api().ErrClear()
		return Object{}
	}
	return Object{o}
}

// dlpackDeviceOf calls x.__dlpack_device__(); ok is false (and no error
// is left set) if it fails or does not return two integers.
func (g *GIL) dlpackDeviceOf(x Object) (dlabi.Device, bool) {
	a := g.api()
	m, err := g.getAttr(x, "__dlpack_device__")
	if err != nil {
		g.releaseError(err)
		return dlabi.Device{}, false
	}
	defer g.DecRef(m)
	r, err := g.call(m, nil, nil)
	if err != nil {
		g.releaseError(err)
		return dlabi.Device{}, false
	}
	defer g.DecRef(r)
	p, ok, err := g.dlpackPair(r, "__dlpack_device__", "integers")
	if err != nil || !ok {
		if err != nil {
			g.releaseError(err)
		}
		a.ErrClear()
		return dlabi.Device{}, false
	}
	for _, v := range p {
		if v.overflow != 0 || v.v != int64(int32(v.v)) {
			return dlabi.Device{}, false
		}
	}
	return dlabi.Device{Type: dlabi.DeviceType(p[0].v), ID: int32(p[1].v)}, true
}
