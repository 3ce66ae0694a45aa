package pybridge

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/usm"
)

// The DLPack C exchange API (DLPack 1.2/1.3; RATIONALE.md, "The DLPack C
// exchange API, both sides"): a producer type carries a static table of C
// functions that hand tensors over without a Python call and without
// synchronising. This file is the consumer, and the Go parts of the
// producer pyext's C half offers (WorkQueue, export).

// The names a producer type uses: the 1.3 capsule and its name, and the
// 1.2 int form.
const (
	exchangeAttr        = "__dlpack_c_exchange_api__"
	exchangeAttrInt     = "__c_dlpack_exchange_api__"
	exchangeCapsuleName = "dlpack_exchange_api"
)

var cExchangeCapsuleName = staticC(exchangeCapsuleName)

// tpFlagsHeapType is Py_TPFLAGS_HEAPTYPE: a type made at run time (a
// class statement), whose attributes can be set and which can be freed.
const tpFlagsHeapType = 1 << 9

// exchangeMajor is the only major version of the table this consumer
// reads (the one whose layout dlabi.ExchangeAPI is).
const exchangeMajor = 1

// exchangeCache holds, per producer type, the table found on it. Each key
// is a type object this cache keeps a reference to, so its address cannot
// be reused by another type while it is cached. A type without a table is
// cached (as 0) only when it is static, which makes it immutable and
// never freed; a Python class is asked again each time (a miss is cheap,
// pyapi.LookupAttr), since its attributes can change.
var exchangeCache struct {
	sync.Mutex
	m map[uintptr]uintptr
}

// exchangeImports counts tensors taken through a producer's exchange API
// (tests prove the path with it).
var exchangeImports atomic.Int64

// exchangeAPI returns the table of type(x), or 0 when the type offers none
// this consumer can read, in which case FromDLPack uses __dlpack__:
//   - neither attribute, or an int form of 0;
//   - a table (and each table its prev_api chain leads to) whose major
//     version is not 1: a newer producer whose older table is gone still
//     speaks __dlpack__.
//
// A malformed offer is an error naming what is wrong: an attribute that is
// neither a capsule named "dlpack_exchange_api" nor an int (TypeError), a
// NULL table, a table with a NULL function the header says must be set
// (BufferError). An exception the attribute lookup raises (a metaclass
// property, say) propagates as it is.
func (g *GIL) exchangeAPI(x Object) (uintptr, error) {
	a := g.api()
	typ := a.Type(x.p)
	exchangeCache.Lock()
	api, ok := exchangeCache.m[typ]
	exchangeCache.Unlock()
	if ok {
		return api, nil
	}
	attr, err := g.typeAttr(typ, exchangeAttr)
	if err == nil && attr == 0 {
		attr, err = g.typeAttr(typ, exchangeAttrInt)
	}
	if err != nil {
		return 0, err
	}
	if attr == 0 {
		if a.TypeFlags(typ)&tpFlagsHeapType == 0 {
			// A static type (numpy.ndarray, say) is immutable and never
			// freed: its answer holds for the process.
			exchangeCache.Lock()
			if exchangeCache.m == nil {
				exchangeCache.m = map[uintptr]uintptr{}
			}
			exchangeCache.m[typ] = 0
			exchangeCache.Unlock()
		}
		return 0, nil
	}
	defer a.DecRef(attr)
	var p uintptr
	switch {
	case a.Type(attr) == a.CapsuleType:
		name := pyapi.GoString(a.CapsuleGetName(attr))
		if name != exchangeCapsuleName {
			a.ErrClear()
			return 0, errkind.New(errkind.Type, "pybridge.FromDLPack", "the "+exchangeAttr+" of "+g.objTypeName(x)+" is a capsule named "+errkind.Quote(name)+", not "+errkind.Quote(exchangeCapsuleName))
		}
		p = a.CapsuleGetPointer(attr, cExchangeCapsuleName)
		if p == 0 {
			return 0, g.fetch("pybridge.FromDLPack")
		}
	case a.Type(attr) != a.LongType:
		return 0, errkind.New(errkind.Type, "pybridge.FromDLPack", "the DLPack exchange API of "+g.objTypeName(x)+" is neither a "+errkind.Quote(exchangeCapsuleName)+" capsule nor an int")
	default:
		v, err := g.readPointer(attr)
		if err != nil {
			return 0, err
		}
		if v == 0 {
			return 0, nil
		}
		p = uintptr(v)
	}
	// Find the newest table of the major this consumer reads.
	for hops := 0; p != 0 && hops < 64; hops++ {
		t := (*dlabi.ExchangeAPI)(cmem.Ptr(p))
		if t.Version.Major == exchangeMajor {
			if missing := checkExchangeAPI(t); missing != "" {
				return 0, errkind.New(errkind.Buffer, "pybridge.FromDLPack", "the DLPack exchange API of "+g.objTypeName(x)+": "+missing)
			}
			exchangeCache.Lock()
			if exchangeCache.m == nil {
				exchangeCache.m = map[uintptr]uintptr{}
			}
			if _, dup := exchangeCache.m[typ]; !dup {
				a.IncRef(typ)
				exchangeCache.m[typ] = p
			}
			exchangeCache.Unlock()
			return p, nil
		}
		p = t.PrevAPI
	}
	return 0, nil
}

// checkExchangeAPI holds a 1.x table to what this consumer calls:
// managed_tensor_from_py_object_no_sync must be set. The header asks for
// every function but dltensor_from_py_object_no_sync, yet a consumer that
// never allocates or converts back does not need them, and tvm-ffi's own
// test producer leaves the allocator NULL; current_work_stream is checked
// when a device tensor needs it (waitWorkStream).
// dltensor_from_py_object_no_sync is never called, even when it is the
// only one set: its bare DLTensor has no flags, so a read-only array would
// arrive writable (RATIONALE.md, "Read-only survives every format, or the
// format is refused").
func checkExchangeAPI(t *dlabi.ExchangeAPI) (missing string) {
	if t.ManagedTensorFromPyObjectNoSync == 0 {
		return "managed_tensor_from_py_object_no_sync is NULL"
	}
	return ""
}

// typeAttr reads an attribute of a type object: a new reference, 0 when
// it has none (no exception left set), or the exception the lookup
// raised. A miss raises no AttributeError where the interpreter has an
// optional lookup (pyapi.LookupAttr), so producers without a table pay
// little for the question.
func (g *GIL) typeAttr(typ uintptr, name string) (uintptr, error) {
	a := g.api()
	n := g.py.internedName(name)
	if n == 0 {
		return 0, g.fetch("pybridge.FromDLPack")
	}
	v, r := a.LookupAttr(typ, n)
	if r < 0 {
		return 0, g.fetch("pybridge.FromDLPack")
	}
	return v, nil
}

// fromExchange takes x's tensor through its producer's table: an owning
// DLManagedTensorVersioned from managed_tensor_from_py_object_no_sync,
// imported by dlpack.Import with the rules of every import (version,
// layout, extents, read-only flag), then placed where device and copy ask
// by placeLegacy, which applies dlpack.Export's rules, as for a producer
// that could not do it itself. The producer has not synchronised: for a
// kDLOneAPI tensor the consumer waits on the producer's current work
// stream (a SYCL queue) and, as on the __dlpack__ path, on x.sycl_queue.
//
// A BufferError from the producer (the header's "cannot be described
// using DLPack") gives fallback true: __dlpack__, whose dl_device and copy
// may still get the data out (a sub-device's memory copied to the host),
// decides. tvm-ffi falls back the same way.
func (g *GIL) fromExchange(x Object, api uintptr, opts FromDLPackOptions) (t *dlpack.Tensor, fallback bool, err error) {
	t, err = g.takeExchange(x, api, opts)
	if err != nil && isPyKind(err, errkind.Buffer) && errors.As(err, new(*Exception)) {
		g.ReleaseError(err)
		return nil, true, nil
	}
	return t, false, err
}

func (g *GIL) takeExchange(x Object, api uintptr, opts FromDLPackOptions) (*dlpack.Tensor, error) {
	t := (*dlabi.ExchangeAPI)(cmem.Ptr(api))
	// Out-parameters live in C memory: the producer may call Python, and
	// Python Go (usmbridge's own table does), which can move this stack.
	blk := cmem.Alloc(8)
	defer cmem.Free(blk, 8)
	r := int32(ffi.Fn(t.ManagedTensorFromPyObjectNoSync).Call2(x.p, blk))
	out := *(*uintptr)(cmem.Ptr(blk))
	if r == 0 && out != 0 && g.api().ErrOccurred() != 0 {
		// Success with an exception set is a failure (CPython refuses
		// a function's result the same way): the exception must not stay
		// pending under the calls that follow, and it propagates.
		dlpack.UnsafeManaged(out, true).Delete()
		return nil, g.fetch("pybridge.FromDLPack")
	}
	if r != 0 || out == 0 {
		if g.api().ErrOccurred() != 0 {
			return nil, g.fetch("pybridge.FromDLPack")
		}
		if out != 0 {
			dlpack.UnsafeManaged(out, true).Delete()
		}
		return nil, errkind.New(errkind.Value, "pybridge.FromDLPack", "managed_tensor_from_py_object_no_sync of "+g.objTypeName(x)+" failed without setting an exception")
	}
	tn, err := g.importManaged(dlpack.UnsafeManaged(out, true), opts.Registry)
	if err != nil {
		return nil, err
	}
	exchangeImports.Add(1)
	if tn.DLDevice.Type == dlabi.OneAPI {
		if err := g.waitWorkStream(t, tn.DLDevice); err != nil {
			tn.Release()
			return nil, err
		}
		if err := g.waitProducerQueue(x); err != nil {
			tn.Release()
			return nil, err
		}
	}
	return g.placeLegacy(tn, opts, false)
}

// waitWorkStream waits on the producer's current work stream of dev, a
// sycl::queue* (DPCTLSyclQueueRef) for kDLOneAPI; NULL means nothing to
// wait on.
func (g *GIL) waitWorkStream(t *dlabi.ExchangeAPI, dev dlabi.Device) error {
	if t.CurrentWorkStream == 0 {
		return errkind.New(errkind.Buffer, "pybridge.FromDLPack", "current_work_stream is NULL: the producer cannot say what to wait on for a tensor on "+dev.String())
	}
	blk := cmem.Alloc(8) // C memory, as in takeExchange
	defer cmem.Free(blk, 8)
	r := int32(ffi.Fn(t.CurrentWorkStream).Call3(uintptr(dev.Type), uintptr(dev.ID), blk))
	s := *(*uintptr)(cmem.Ptr(blk))
	if r != 0 || g.api().ErrOccurred() != 0 { // success with an exception set fails too
		if g.api().ErrOccurred() != 0 {
			return g.fetch("pybridge.FromDLPack")
		}
		return errkind.New(errkind.Buffer, "pybridge.FromDLPack", "current_work_stream failed without setting an exception")
	}
	if s == 0 {
		return nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return errkind.Wrap(errkind.Buffer, "pybridge.FromDLPack", "waiting on a SYCL queue needs dpctl", err)
	}
	return d.UnsafeBorrowQueue(s).Wait()
}

// importManaged takes ownership of a producer's versioned tensor (the C
// exchange API's import, managed_tensor_to_py_object_no_sync, steals it):
// dlpack.Import with reg, or the interpreter's dpctl registry for a
// kDLOneAPI tensor when reg is nil. On error the tensor's deleter has
// been called.
func (g *GIL) importManaged(m dlpack.Managed, reg *usm.Registry) (*dlpack.Tensor, error) {
	if m.IsNil() {
		return nil, errkind.New(errkind.Value, "pybridge.importManaged", "NULL managed tensor")
	}
	reg, err := g.importRegistry(reg, m.Pointer(), m.Versioned(), "pybridge.importManaged")
	if err != nil {
		m.Delete()
		return nil, err
	}
	return dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
}

// currentWorkStream is the producer's current_work_stream: NULL for
// kDLCPU; for kDLOneAPI, the DPCTLSyclQueueRef of the queue usmbridge uses
// for that device (the one imports of that device are bound to, made once
// per process). Other devices are a usm.ErrBuffer error.
func (g *GIL) currentWorkStream(dev dlpack.Device) (uintptr, error) {
	switch dev.Type {
	case dlabi.CPU:
		return 0, nil
	case dlabi.OneAPI:
		d, err := g.dpctlUnderGIL()
		if err != nil {
			return 0, errkind.Wrap(errkind.Buffer, "pybridge.currentWorkStream", "a kDLOneAPI device needs dpctl", err)
		}
		local, ok := d.LocalDevice(dev)
		if !ok {
			return 0, errkind.New(errkind.Buffer, "pybridge.currentWorkStream", "no SYCL device "+dev.String())
		}
		q, err := defaultQueue(d, local)
		if err != nil {
			return 0, err
		}
		return q.Ref(), nil
	}
	return 0, errkind.New(errkind.Buffer, "pybridge.currentWorkStream", "usmbridge has no work stream on "+dev.String())
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

// internedNames holds the str objects internedName made, and the objects
// keepObject keeps, per interpreter; each lives as long as its
// interpreter.
var internedNames struct {
	sync.Mutex
	m map[*Python]map[string]uintptr
}

// internedObject returns the object kept under key (keepObject), or 0.
func (py *Python) internedObject(key string) uintptr {
	internedNames.Lock()
	defer internedNames.Unlock()
	return internedNames.m[py][key]
}

// keepObject keeps o, a new reference, under key for the life of the
// process, and returns the object kept there: o, or the one another
// caller kept first (o is then released).
func (py *Python) keepObject(key string, o uintptr) uintptr {
	internedNames.Lock()
	defer internedNames.Unlock()
	if old, ok := internedNames.m[py][key]; ok {
		py.api.DecRef(o)
		return old
	}
	if internedNames.m == nil {
		internedNames.m = map[*Python]map[string]uintptr{}
	}
	if internedNames.m[py] == nil {
		internedNames.m[py] = map[string]uintptr{}
	}
	internedNames.m[py][key] = o
	return o
}

// internedName returns a str object for name, made once per interpreter
// and kept for its life; 0 with an exception if it cannot be made. The
// caller holds the GIL.
func (py *Python) internedName(name string) uintptr {
	internedNames.Lock()
	defer internedNames.Unlock()
	if o, ok := internedNames.m[py][name]; ok {
		return o
	}
	o := py.api.UnicodeFromString(name)
	if o == 0 {
		return 0
	}
	if internedNames.m == nil {
		internedNames.m = map[*Python]map[string]uintptr{}
	}
	if internedNames.m[py] == nil {
		internedNames.m[py] = map[string]uintptr{}
	}
	internedNames.m[py][name] = o
	return o
}
