package pybridge

import (
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

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
