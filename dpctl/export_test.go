package dpctl

import (
	"github.com/usmbridge/usmbridge/dpctl/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/usm"
)

// What the external tests (package dpctl_test, which load the library
// through pybridge's Python.Dpctl, as a program does) reach inside a
// Backend.

// API is the bound library.
func (b *Backend) API() *dpctlapi.API { return b.api }

// DeviceRef is device i's DPCTLSyclDeviceRef.
func (b *Backend) DeviceRef(i int) uintptr { return b.devs[i].ref }

// HasUSM reports whether device i has USM (a cached context to classify
// pointers in).
func (b *Backend) HasUSM(i int) bool { return b.devs[i].cached != nil }

// SharesContext reports whether devices i and j have the same cached
// context.
func (b *Backend) SharesContext(i, j int) bool { return b.devs[i].cached == b.devs[j].cached }

// OwnQueue wraps a queue ref the Backend then owns.
func (b *Backend) OwnQueue(ref uintptr) *Queue { return b.ownQueue(ref) }

// Position is the index in Devices() of dev's root device.
func (b *Backend) Position(dev uintptr) int { return b.position(dev) }

// WithoutOrdering is b as a library without the barrier entry points
// would give it.
func (b *Backend) WithoutOrdering() *Backend {
	return &Backend{api: b.api, devs: b.devs, descs: b.descs, ctxs: b.ctxs, nat: b.nat, reg: b.reg}
}

// SetNativeRoute puts stand-ins in place of DPCTLContext_GetBackend and
// context::getNative (0 keeps the library's).
func (b *Backend) SetNativeRoute(getBackend, getNative ffi.Fn) {
	if getBackend != 0 {
		b.nat.GetBackend = getBackend
	}
	if getNative != 0 {
		b.nat.GetNative = getNative
	}
}

// NativeCL is the cl_context of ctx's native side, made for the caller
// (release it), or 0 and a no-op release when ctx has none.
func (b *Backend) NativeCL(ctx uintptr) (cl uintptr, release func()) {
	n := b.newNative(ctx)
	if n == nil || n.cl == nil {
		n.release()
		return 0, func() {}
	}
	return n.cl.Native(), n.release
}

// Pinned reports whether ref is pinned.
func (b *Backend) Pinned(ref uintptr) bool {
	b.pins.mu.Lock()
	defer b.pins.mu.Unlock()
	for _, p := range b.pins.e {
		if p.ref == ref {
			return true
		}
	}
	return false
}

// QueryPointerSYCL is QueryPointer asked of SYCL in every default context
// (the route for contexts whose native side cannot classify pointers),
// for comparing it with the native route.
func (b *Backend) QueryPointerSYCL(ptr uintptr) usm.PointerInfo {
	for _, c := range b.ctxs {
		if info := b.pointerIn(ptr, c.ref); info.Kind != usm.KindUnknown {
			info.Base, info.Size = c.native(b).extent(ptr)
			return info
		}
	}
	return usm.PointerInfo{Device: -1}
}

// NativeRoutes counts the default contexts QueryPointer asks natively.
func (b *Backend) NativeRoutes() int {
	n := 0
	for _, c := range b.ctxs {
		if len(c.devs) == 1 && c.native(b).classifies() {
			n++
		}
	}
	return n
}

// SetInteropRoute puts stand-ins in place of SYCL's make_context and
// make_queue (0 makes the entry point absent).
func (b *Backend) SetInteropRoute(makeContext, makeQueue ffi.Fn) {
	b.interop.MakeContext, b.interop.MakeQueue = makeContext, makeQueue
}

// Lent counts the native contexts and queues lent to SYCL.
func (b *Backend) Lent() (ctxs, queues int) {
	b.lent.mu.Lock()
	defer b.lent.mu.Unlock()
	return len(b.lent.ctxs), len(b.lent.queues)
}

// ProgramBundle is the DPCTLSyclKernelBundleRef of a program the backend
// built (the launch benchmark's C peer gets its kernel from it).
func ProgramBundle(p usm.Program) uintptr { return p.(*program).kb }
