package dpctlapi

import "github.com/usmbridge/usmbridge/internal/ffi"

// symContextGetNative is sycl::_V1::context::getNative() const, mangled.
const symContextGetNative = "_ZNK4sycl3_V17context9getNativeEv"

// Native holds the entry points that lead from a DPCTLSyclContextRef to
// the native context of its SYCL backend. dpctl's C API has no native
// getter, but a DPCTLSyclContextRef is a sycl::context*, and the SYCL
// library dpctl links exports the member function that returns its native
// handle (sycl::_V1::context::getNative() const: `this` is the only
// argument, the handle is the integer result). They are optional symbols
// of the table, resolved through dpctl's library handle: dlsym on a
// library handle searches its dependencies too, so they come from exactly
// the libsycl that dpctl's library was linked against, whatever its file
// name. A field is 0 when the library does not export it; the fields are
// settable so that tests can put stand-ins in their place.
//
// getNative is raw C++: it throws (which through purego terminates the
// process) where the backend has no native handle to give, and on OpenCL
// it retains the cl_context for the caller. Callers ask ContextGetBackend
// first and call it only for OpenCL and Level Zero contexts, where
// Unified Runtime's adapters always answer (RATIONALE.md, "Extents of
// dpctl memory").
type Native struct {
	GetBackend ffi.Fn // DPCTLContext_GetBackend (NULL context → unknown backend)
	GetNative  ffi.Fn // sycl::_V1::context::getNative() const
}

// Native returns the entry points to native contexts.
func (a *API) Native() Native { return a.native }

// Present reports whether both entry points were found.
func (n Native) Present() bool { return n.GetBackend.Present() && n.GetNative.Present() }

// ContextGetBackend returns one of the Backend* constants.
func (n Native) ContextGetBackend(ctx uintptr) int { return cint(n.GetBackend.Call1(ctx)) }

// ContextGetNative returns the native handle of ctx (see Native for when
// it may be called).
func (n Native) ContextGetNative(ctx uintptr) uintptr { return n.GetNative.Call1(ctx) }
