package dpctlapi

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// symMakeContext is sycl::_V1::detail::make_context(unsigned long,
// std::function<void(sycl::_V1::exception_list)> const&, sycl::_V1::backend,
// bool, std::vector<sycl::_V1::device> const&), mangled: what SYCL's
// make_context<backend::opencl>(cl_context) template calls.
const symMakeContext = "_ZN4sycl3_V16detail12make_contextEmRKSt8functionIFvNS0_14exception_listEEENS0_7backendEbRKSt6vectorINS0_6deviceESaISA_EE"

// symMakeQueue is sycl::_V1::detail::make_queue(unsigned long, int,
// sycl::_V1::context const&, sycl::_V1::device const*, bool,
// sycl::_V1::property_list const&, std::function<void(
// sycl::_V1::exception_list)> const&, sycl::_V1::backend), mangled: what
// SYCL's make_queue<backend::opencl>(cl_command_queue, context) calls.
const symMakeQueue = "_ZN4sycl3_V16detail10make_queueEmiRKNS0_7contextEPKNS0_6deviceEbRKNS0_13property_listERKSt8functionIFvNS0_14exception_listEEENS0_7backendE"

// symOperatorNew is ::operator new(std::size_t), mangled.
const symOperatorNew = "_Znwm"

// backendOpenCL is sycl::backend::opencl (an enum class of char).
const backendOpenCL = 1

// objectSize is sizeof(sycl::context) and sizeof(sycl::queue): each is
// one std::shared_ptr to its implementation.
const objectSize = 16

// Interop holds the entry points that make SYCL contexts and queues from
// native ones. dpctl's C API has none, but the SYCL library it links
// exports the functions that SYCL's make_context and make_queue templates
// call, and a DPCTLSyclContextRef (DPCTLSyclQueueRef) is a sycl::context
// (sycl::queue) allocated with operator new and destroyed by
// DPCTLContext_Delete's (DPCTLQueue_Delete's) delete. So an object those
// functions make in memory from the same operator new is a ref like
// dpctl's own. Both are optional symbols,
// resolved through dpctl's library handle (its dependencies: the very
// libsycl and libstdc++ it uses); a field is 0 when absent, and settable
// so that tests can put stand-ins in their place.
//
// The ABI facts these calls rely on are listed in docs/native.md, "SYCL
// objects from native OpenCL handles". make_context and make_queue are
// raw C++: they throw (which through purego terminates the
// process) when the runtime cannot make the context, so callers establish
// first that it can (package dpctl, interop.go).
type Interop struct {
	MakeContext ffi.Fn
	MakeQueue   ffi.Fn
	OperatorNew ffi.Fn
}

// Interop returns the entry points to native-context interop.
func (a *API) Interop() Interop { return a.interop }

// Present reports whether both entry points were found.
func (i Interop) Present() bool {
	return i.MakeContext.Present() && i.MakeQueue.Present() && i.OperatorNew.Present()
}

// MakeOpenCLContext returns a new DPCTLSyclContextRef over the cl_context
// h (0 if no memory came back for it). keepOwnership says SYCL must not
// release h (the caller keeps the reference it holds).
//
// The call follows the Itanium C++ ABI on x86-64: the sycl::context is
// returned through a hidden pointer in the first argument register (it
// has a non-trivial destructor); the async handler and the device list
// are passed by reference, and both are empty: an empty std::function and
// an empty std::vector are all-zero objects in libstdc++ (no manager, no
// elements), which SYCL copies without calling into them. make_context
// then asks the native context for its devices.
func (i Interop) MakeOpenCLContext(h uintptr, keepOwnership bool) uintptr {
	var handler [4]uintptr // std::function<void(exception_list)>{}: 32 bytes
	var devices [3]uintptr // std::vector<device>{}: 24 bytes
	buf := i.OperatorNew.Call1(objectSize)
	if buf == 0 {
		return 0
	}
	keep := uintptr(0)
	if keepOwnership {
		keep = 1
	}
	i.MakeContext.Call6(buf, h, uintptr(unsafe.Pointer(&handler)), backendOpenCL, keep, uintptr(unsafe.Pointer(&devices)))
	return buf
}

// MakeOpenCLQueue returns a new DPCTLSyclQueueRef over the
// cl_command_queue h, in ctx (a DPCTLSyclContextRef over h's cl_context),
// or 0 if no memory came back for it. The arguments are those
// make_queue<backend::opencl>(h, ctx) passes: no device (SYCL takes the
// queue's), the caller keeps its reference to h, no properties (an empty
// property_list is all-zero: an empty bitset and an empty vector; 64
// bytes cover its 32), the empty handler. The sycl::queue is returned
// through the hidden pointer, and the last three arguments go on the
// stack.
func (i Interop) MakeOpenCLQueue(h, ctx uintptr) uintptr {
	var handler [4]uintptr // std::function<void(exception_list)>{}
	var props [8]uintptr   // property_list{}
	buf := i.OperatorNew.Call1(objectSize)
	if buf == 0 {
		return 0
	}
	const keepOwnership = 1
	i.MakeQueue.Call9(buf, h, 0, ctx, 0, keepOwnership, uintptr(unsafe.Pointer(&props)), uintptr(unsafe.Pointer(&handler)), backendOpenCL)
	return buf
}
