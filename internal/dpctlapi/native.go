package dpctlapi

import "github.com/usmbridge/usmbridge/internal/ffi"

// Native holds the entry points that lead from a DPCTLSyclContextRef to
// the native context of its SYCL backend. dpctl's C API has no native
// getter, but a DPCTLSyclContextRef is a sycl::context*, and the SYCL
// library dpctl links exports the member function that returns its native
// handle (sycl::_V1::context::getNative() const: `this` is the only
// argument, the handle is the integer result). A field
// is 0 when the library does not export it.
//
// getNative is raw C++: it throws (which through purego terminates the
// process) where the backend has no native handle to give, and on OpenCL
// it retains the cl_context for the caller. Callers ask ContextGetBackend
// first and call it only for OpenCL and Level Zero contexts, where
// Unified Runtime's adapters always answer (RATIONALE.md, "Extents of
// dpctl memory").
type Native struct {
	ContextGetBackend uintptr // DPCTLContext_GetBackend (NULL context → unknown backend)
	ContextGetNative  uintptr // sycl::_V1::context::getNative() const
}

// LoadNative resolves Native through the handle of dpctl's library: dlsym
// on a library handle searches its dependencies too, so the symbols come
// from exactly the libsycl that dpctl's library was linked against,
// whatever its file name.
func (a *API) LoadNative() Native {
	var n Native
	n.ContextGetBackend, _ = ffi.Sym(a.Handle, "DPCTLContext_GetBackend")
	n.ContextGetNative, _ = ffi.Sym(a.Handle, "_ZNK4sycl3_V17context9getNativeEv")
	return n
}
