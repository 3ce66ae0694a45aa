package dpctl

import (
	"sync"

	"github.com/usmbridge/usmbridge/dpctl/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/levelzero"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/usm"
)

// Extents of dpctl memory. SYCL (and so dpctl) can tell a pointer's USM
// kind and device but not the allocation it lies in; the native runtime
// under an OpenCL or Level Zero context can (clGetMemAllocInfoINTEL,
// zeMemGetAddressRange), if asked in that very context. The way down is
// SYCL's exported context::getNative(), called on the
// DPCTLSyclContextRef; see RATIONALE.md, "Extents of dpctl memory".

// ctxNative measures allocations of one SYCL context through its native
// context. A nil *ctxNative knows no extents.
type ctxNative struct {
	cl *opencl.Context    // OpenCL: owns the reference getNative() took
	ze *levelzero.Context // Level Zero: borrowed; lives as long as the SYCL context
}

// extent returns the allocation containing ptr, or 0, 0 when the runtime
// does not say.
func (n *ctxNative) extent(ptr uintptr) (base, size uintptr) {
	info := n.query(ptr)
	return info.Base, info.Size
}

// query is what the native runtime reports of ptr in this context: its
// USM kind and the allocation containing it (Base and Size 0 where the
// runtime does not say), or KindUnknown. Device is left to the caller,
// which knows it as SYCL numbers it.
func (n *ctxNative) query(ptr uintptr) usm.PointerInfo {
	var info usm.PointerInfo
	switch {
	case n == nil:
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	case n.cl != nil:
		info = n.cl.QueryPointer(ptr)
	case n.ze != nil:
		info = n.ze.QueryPointer(ptr)
	}
	if !info.HasExtent() || info.Base+info.Size < info.Base {
		info.Base, info.Size = 0, 0
	}
	info.Device = -1
	return info
}

// classifies reports whether query answers for any pointer, so that its
// KindUnknown means the context does not know it (as SYCL would say).
func (n *ctxNative) classifies() bool {
	switch {
	case n == nil:
		return false
	case n.cl != nil:
		return n.cl.CanQueryPointers()
	}
	return n.ze.CanQueryPointers()
}

// release gives back what newNative took: the cl_context reference (a
// borrowed Level Zero context is only forgotten).
func (n *ctxNative) release() {
	if n == nil {
		return
	}
	_ = n.cl.Close() // nil-safe, and a second Close never reaches C
	_ = n.ze.Close()
}

// newNative returns the native side of ctx, a live DPCTLSyclContextRef
// whose devices have USM (callers check usmContext first), or nil.
//
// context::getNative() is C++ that throws where Unified Runtime's adapter
// has no native handle to give (CUDA and HIP multi-device contexts, the
// native CPU and offload adapters), and a C++ exception through purego
// ends the process. So the backend is asked first, through dpctl, and
// getNative is called for OpenCL and Level Zero contexts only: there the
// adapters answer without failing (OpenCL returns its cl_context, retained
// for us; Level Zero its ze_context_handle_t, not retained).
func (b *Backend) newNative(ctx uintptr) *ctxNative {
	n := b.nat
	if ctx == 0 || !n.Present() {
		return nil
	}
	switch n.ContextGetBackend(ctx) {
	case dpctlapi.BackendOpenCL:
		h := n.ContextGetNative(ctx)
		if h == 0 {
			return nil
		}
		// An OpenCL SYCL context means the ICD loader is in the process, so
		// UnsafeAdoptContext can open it and releases h itself if it fails.
		c, err := opencl.UnsafeAdoptContext(h)
		if err != nil {
			return nil
		}
		return &ctxNative{cl: c}
	case dpctlapi.BackendLevelZero:
		// getNative does not retain a Level Zero context: it is borrowed
		// for as long as the SYCL context lives, which the caller ensures.
		h := n.ContextGetNative(ctx)
		c, err := levelzero.UnsafeBorrowContext(h)
		if err != nil {
			return nil
		}
		return &ctxNative{ze: c}
	}
	return nil
}

// defaultCtx is a device's cached (default) context, in which QueryPointer
// classifies pointers, with its native side made on first use and kept
// for the life of the Backend.
type defaultCtx struct {
	ref  uintptr // DPCTLSyclContextRef, owned by its dpDevice
	devs []int   // the devices (positions) whose cached context this is
	once sync.Once
	nat  *ctxNative
}

func (c *defaultCtx) native(b *Backend) *ctxNative {
	c.once.Do(func() { c.nat = b.newNative(c.ref) })
	return c.nat
}

// extentIn returns the allocation containing ptr, a USM pointer of ctx:
// through def's native side when ctx is that default context, else
// through a native side made for this query and released after it.
func (b *Backend) extentIn(ctx uintptr, def *defaultCtx, ptr uintptr) (base, size uintptr) {
	if def != nil {
		return def.native(b).extent(ptr)
	}
	n := b.newNative(ctx)
	defer n.release()
	return n.extent(ptr)
}
