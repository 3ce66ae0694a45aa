package pybridge

import (
	"github.com/usmbridge/usmbridge/dlpack"
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
// instead, with the same import rules (fromTable), unless a stream is
// given: the table has no stream argument. When the producer's table
// refuses with BufferError, __dlpack__ is asked.
//
// Either way the tensor goes through the same stages, each in the file
// named for it, in this order: the producer is asked (exchange.go for the
// table, producer.go for __dlpack__, which also says what is asked: the
// version, the device, the copy, the stream), the tensor is imported
// (import.go), ordered on the queue its data was written on or waited for
// (order.go), and placed or copied where it was asked to be (place.go).
func (g *GIL) FromDLPack(x Object, opts FromDLPackOptions) (*dlpack.Tensor, error) {
	if opts.Stream.isNil() {
		api, err := g.exchangeAPI(x)
		if err != nil {
			return nil, err
		}
		if api != 0 {
			t, err := g.fromTable(x, api, opts)
			if err == nil || !isPyKind(err, errkind.Buffer) {
				return t, err
			}
			// The producer's BufferError (the header's "cannot be
			// described using DLPack"): __dlpack__, whose dl_device and
			// copy may still get the data out (a sub-device's memory
			// copied to the host), decides. tvm-ffi falls back the same
			// way.
			g.ReleaseError(err)
		}
	}
	return g.fromDunder(x, opts)
}

// fromTable takes x's tensor through its type's table (api): an owning
// DLManagedTensorVersioned from managed_tensor_from_py_object_no_sync,
// imported by dlpack.Import with the rules of every import (version,
// layout, extents, read-only flag), waited for (the producer has not
// synchronised), then placed where device and copy ask by placeLegacy,
// which applies dlpack.Export's rules, as for a producer that could not
// do it itself.
func (g *GIL) fromTable(x Object, api uintptr, opts FromDLPackOptions) (*dlpack.Tensor, error) {
	m, err := g.callTable(x, api)
	if err != nil {
		return nil, err
	}
	t, err := g.importManaged(m, opts.Registry)
	if err != nil {
		return nil, err
	}
	exchangeImports.Add(1)
	if err := g.orderTable(x, api, t); err != nil {
		t.Release()
		return nil, err
	}
	return g.placeLegacy(t, opts, false)
}

// fromDunder takes x's tensor through x.__dlpack__: what to ask (request:
// the device, the copy and the stream, and what is done here instead), the
// call, the import of the capsule, the ordering of the array on its queue,
// and the copies made here.
func (g *GIL) fromDunder(x Object, opts FromDLPackOptions) (*dlpack.Tensor, error) {
	meth, err := g.producerMethods(x)
	if err != nil {
		return nil, err
	}
	defer g.api().DecRef(meth)
	req, err := g.request(x, opts)
	if err != nil {
		return nil, err
	}
	defer req.release(g)
	c, legacy, err := g.callProducer(x, Object{meth}, req)
	if err != nil {
		return nil, err
	}
	defer g.DecRef(c)
	t, err := g.importCapsule(c, opts.Registry)
	if err != nil {
		return nil, err
	}
	if err := g.orderDunder(x, t, req, legacy); err != nil {
		t.Release()
		return nil, err
	}
	return g.placeAsked(t, req, legacy)
}
