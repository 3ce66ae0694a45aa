package extbridge

import (
	"sync/atomic"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// Ops are pybridge's operations for the extension module. G is
// pybridge.GIL and O is pybridge.Object; every field is set by pybridge
// (pybridge's tests check that none is nil).
type Ops[G, O any] struct {
	// Attach finds the interpreter of the Python process that loaded the
	// extension (pybridge's counterpart of Embed) and returns how to enter
	// it from code Python called with the GIL held (every entry point of
	// the extension): enter returns the GIL (on a locked OS thread,
	// skipping PyGILState_Ensure), exit leaves; calling enter without the
	// GIL corrupts the interpreter. They are a pair rather than a function
	// taking fn because a func passed through a function value escapes:
	// every entry's closure would be a heap allocation.
	Attach func() (enter func() *G, exit func(), err error)

	// Object wraps a raw PyObject* the caller guarantees is live (or 0,
	// NULL); Ptr is its inverse.
	Object func(p uintptr) O
	Ptr    func(o O) uintptr
	// FromGo converts a Go value to a new Python object (pybridge's
	// converter: nil, bool, integers, floats, strings, slices, maps,
	// Objects).
	FromGo func(g *G, v any) (O, error)
	// Raise sets the Python exception for err (the same object when err
	// carries a Python exception, pybridge.Exception); ReleaseError drops
	// the Python exception err carries at once.
	Raise        func(g *G, err error)
	ReleaseError func(g *G, err error)

	// AsArrayRead is GIL.AsArray with the default registry, for a caller
	// that read obj's SUAI itself, making the calls into Python AsArray
	// would. It also returns the SUAI's syclobj when it is a
	// dpctl.SyclQueue or SyclContext (nil otherwise), so a re-export names
	// the object the array was bound to. d is
	// obj.__sycl_usm_array_interface__ (0 when that raised, the exception
	// still set), got the tuple SUAIGetters()[min(n, len-1)] returned for d,
	// an exact dict of n items (0 where it called none, or it raised and was
	// cleared). d and got stay the caller's.
	AsArrayRead func(g *G, obj O, d, got uintptr, n int) (*usm.Array, Ref[G, O], error)
	// SUAIGetters is which operator.itemgetter AsArrayRead's caller calls
	// for an exact dict of n items (0: none), for n = 0 .. len-1, the last
	// for any larger n. They live as long as the interpreter.
	SUAIGetters func(g *G) []uintptr

	// ParseDLPackArgs validates __dlpack__'s keywords for an array on dev;
	// an import passes a NULL stream and parses only dl_device and copy.
	ParseDLPackArgs func(g *G, dev dlpack.Device, stream, maxVersion, dlDevice, copyArg O) (dlpack.ExportOptions, error)
	// NotAProducer is from_dlpack's error for an x without a callable
	// __dlpack__ and a __dlpack_device__.
	NotAProducer func(g *G, x O) error
	// FromDLPackAfterCall is GIL.FromDLPack (no options) after the
	// caller's own first call of x.__dlpack__ (meth) returned c
	// (borrowed), or raised (c NULL, the exception still set).
	FromDLPackAfterCall func(g *G, x, meth, c O) (*dlpack.Tensor, error)
	// ImportHostManaged imports a kDLCPU tensor of a fresh capsule (p is
	// its pointer), keeping it on error: the caller renames the capsule
	// only on success. Any other device is usm.ErrValue.
	ImportHostManaged func(p uintptr, versioned bool, reuse *dlpack.Tensor) (*dlpack.Tensor, error)

	// Export is GIL.ToDLPack without the capsule: the tensor ext.c's
	// template copies, and the C exchange API's export.
	Export func(g *G, arr *usm.Array, opts dlpack.ExportOptions) (dlpack.Managed, error)
	// AcceptsNoSyncStream reports whether __dlpack__ accepts stream=-1 for
	// an array on dev.
	AcceptsNoSyncStream func(dev dlpack.Device) bool
	// ExchangeNeedsWait reports whether the C exchange API's no-sync export
	// of arr must wait on the array's queue first.
	ExchangeNeedsWait func(g *G, arr *usm.Array) bool
	// WaitPlan gives the calls q.Wait makes, for C to make them itself;
	// ok is false when q is not a queue C can wait on (nil q: ok, an
	// empty plan).
	WaitPlan func(q usm.Queue) (p WaitPlan, ok bool)

	// The producer side of the DLPack C exchange API: ImportManaged takes
	// a versioned tensor's ownership (managed_tensor_to_py_object_no_sync),
	// CurrentWorkStream is current_work_stream, AllocTensor is
	// managed_tensor_allocator. ExchangeImports counts the tensors
	// from_dlpack took through a producer's table (the leak tests' stats).
	ImportManaged     func(g *G, m dlpack.Managed) (*dlpack.Tensor, error)
	CurrentWorkStream func(g *G, dev dlpack.Device) (uintptr, error)
	AllocTensor       func(g *G, dev dlpack.Device, dt dtype.DataType, shape []int64) (dlpack.Managed, error)
	ExchangeImports   func() int64
}

// Ref is a strong reference to a Python object that pybridge keeps
// outside the GIL (the syclobj AsArrayRead returns, and the Owner
// of the arrays pybridge reads).
type Ref[G, O any] interface {
	usm.Owner
	// Object is the object, for use while the caller holds the GIL and the
	// Ref.
	Object() O
	// ReleaseHeld is Release for a caller that holds the GIL.
	ReleaseHeld(g *G)
	// ReleasedByCaller drops a reference whose Python reference the
	// caller has dropped itself (the extension's C half, with the GIL),
	// and reports whether it was the last: otherwise someone still holds
	// a Ref to an object it no longer keeps alive, a bug.
	ReleasedByCaller() (last bool)
}

// WaitPlan is how C waits on a dpctl queue as usm.Array.Wait does: Ref is
// the DPCTLSyclQueueRef (0: nothing to wait for), and Barrier, EventWait
// and EventDelete the dpctl functions to call with it.
type WaitPlan struct {
	Ref, Barrier, EventWait, EventDelete uintptr
}

var ops atomic.Value // *Ops[G, O] of the one Set call

// Set publishes pybridge's operations; pybridge calls it once, in init.
func Set[G, O any](o Ops[G, O]) { ops.Store(&o) }

// Get returns the operations Set published for these type arguments; ok
// is false before Set, or when G and O are not the types Set used.
func Get[G, O any]() (o *Ops[G, O], ok bool) {
	o, ok = ops.Load().(*Ops[G, O])
	return o, ok
}
