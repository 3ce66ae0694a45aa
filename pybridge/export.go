package pybridge

import (
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/boundary"
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
	var m dlpack.Managed
	err := g.released(arr, func() (err error) { m, err = g.export(arr, opts); return err })
	if err != nil {
		return Object{}, err
	}
	return g.capsule(m)
}

// released runs fn, which touches no Python object, with the GIL
// released when it may wait for arr (its pending work, a queue that can
// have work: every wait of an export, a copy or the SUAI), for a caller
// that holds the GIL: the work on a dpctl queue may follow dpnp's host
// tasks, which take the GIL to let their arguments go, and would wait
// for ever behind a holder that waits for them (RATIONALE.md, "Launches
// that return before their kernel ends").
func (g *GIL) released(arr *usm.Array, fn func() error) error {
	if arr.Pending.Empty() && !mayHaveWork(arr.Queue) {
		return fn()
	}
	a := g.api()
	ts := a.SaveThread()
	defer a.RestoreThread(ts)
	return fn()
}

// mayHaveWork reports whether work may be pending on q: any queue but
// none and one that says it never has any (Idle).
func mayHaveWork(q usm.Queue) bool {
	if q == nil {
		return false
	}
	i, ok := q.(interface{ Idle() bool })
	return !ok || !i.Idle()
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

// export is ToDLPack without the capsule: dlpack.Export under pybridge's
// rule for queues outside their platform's default context, with the host
// backend holding copies of host memory no backend knows (a NumPy array's,
// unless opts names another HostAllocator).
func (g *GIL) export(arr *usm.Array, opts dlpack.ExportOptions) (dlpack.Managed, error) {
	if opts.HostAllocator == nil {
		opts.HostAllocator = cpu.Default()
	}
	if q, err := outsideDefaultContext(arr); q != nil {
		if opts.Device == nil || *opts.Device != (dlpack.Device{Type: dlpack.CPU, ID: 0}) {
			return dlpack.Managed{}, err
		}
		own := *arr
		own.Backend = hostCopier{arr.Backend, q}
		arr = &own
	}
	return dlpack.Export(arr, opts)
}

// outsideDefaultContext is pybridge's rule for exports of dpctl memory,
// dpctl's own: only memory bound to its platform's default SYCL context
// may be handed out as kDLOneAPI, since a consumer finds it from the
// device id alone. It returns the array's queue, and the refusal, for an
// array outside it; nil for any other array.
func outsideDefaultContext(arr *usm.Array) (*dpctl.Queue, error) {
	q, ok := arr.Queue.(*dpctl.Queue)
	if !ok || arr.DLDevice.Type != dlabi.OneAPI || q.IsDefaultContext() {
		return nil, nil
	}
	return q, errkind.New(errkind.Buffer, "pybridge.ToDLPack", "DLPack can only export arrays based on USM allocations bound to a default platform SYCL context")
}

// ExportView is dlpack.ViewOf under the rules of Export: what an export of
// arr without a copy, a wait or a change of device would hand a consumer,
// refused as Export refuses it (dpctl memory outside its platform's
// default context included), without making it. An extension module's
// Array describes its memory with it.
func ExportView(arr *usm.Array) (dlpack.View, error) {
	if _, err := outsideDefaultContext(arr); err != nil {
		return dlpack.View{}, err
	}
	return dlpack.ViewOf(arr)
}
