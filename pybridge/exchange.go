package pybridge

import (
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/pyapi"
)

// The DLPack C exchange API (DLPack 1.2/1.3; RATIONALE.md, "The DLPack C
// exchange API, both sides"): a producer type carries a static table of C
// functions that hand tensors over without a Python call and without
// synchronising. This file is the consumer's first stage (FromDLPack asks
// a producer through its table: exchangeAPI, callTable); the producer is
// pyext's (its C half's exchange.c, and exchange_cgo.go).

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

// callTable asks x's producer for its tensor through the table api:
// managed_tensor_from_py_object_no_sync, which hands over an owning
// DLManagedTensorVersioned without synchronising (fromTable waits). A
// failure is the producer's exception, as itself.
func (g *GIL) callTable(x Object, api uintptr) (dlpack.Managed, error) {
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
		return dlpack.Managed{}, g.fetch("pybridge.FromDLPack")
	}
	if r != 0 || out == 0 {
		if g.api().ErrOccurred() != 0 {
			return dlpack.Managed{}, g.fetch("pybridge.FromDLPack")
		}
		if out != 0 {
			dlpack.UnsafeManaged(out, true).Delete()
		}
		return dlpack.Managed{}, errkind.New(errkind.Value, "pybridge.FromDLPack", "managed_tensor_from_py_object_no_sync of "+g.objTypeName(x)+" failed without setting an exception")
	}
	return dlpack.UnsafeManaged(out, true), nil
}

// Live returns pybridge's counts for leak tests: "exchange_imports", the
// tensors FromDLPack took through a producer's DLPack C exchange table.
func Live() map[string]int64 {
	return map[string]int64{"exchange_imports": exchangeImports.Load()}
}
