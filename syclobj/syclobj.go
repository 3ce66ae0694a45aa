package syclobj

import "fmt"

// Obj is a syclobj value. The variants are Selector (a filter string),
// ContextRef, QueueRef, and FromCapsule's values for objects with dpctl's
// _get_capsule method (resolved to a ContextRef or QueueRef when the usm
// registry binds a pointer). The set is closed: only this package makes
// them.
type Obj interface{ isSyclobj() }

// ContextRef is an opaque DPCTLSyclContextRef (a sycl::context*), as carried
// by a "SyclContextRef" capsule. usmbridge never dereferences it; only the
// SYCL runtime that made it can use it.
type ContextRef struct{ ptr uintptr }

// QueueRef is an opaque DPCTLSyclQueueRef (a sycl::queue*), as carried by a
// "SyclQueueRef" capsule.
type QueueRef struct{ ptr uintptr }

// UnsafeContextRef wraps a raw DPCTLSyclContextRef. The caller guarantees
// that p is a live context reference of the SYCL runtime in this process for
// as long as the ContextRef is used; a wrong pointer crashes that runtime.
func UnsafeContextRef(p uintptr) ContextRef { return ContextRef{p} }

// UnsafeQueueRef wraps a raw DPCTLSyclQueueRef; the contract of
// UnsafeContextRef applies.
func UnsafeQueueRef(p uintptr) QueueRef { return QueueRef{p} }

// Pointer returns the raw reference.
func (r ContextRef) Pointer() uintptr { return r.ptr }

// Pointer returns the raw reference.
func (r QueueRef) Pointer() uintptr { return r.ptr }

func (r ContextRef) String() string { return fmt.Sprintf("SyclContextRef(%#x)", r.ptr) }
func (r QueueRef) String() string   { return fmt.Sprintf("SyclQueueRef(%#x)", r.ptr) }

func (ContextRef) isSyclobj() {}
func (QueueRef) isSyclobj()   {}

// FromCapsule is the syclobj of an object with dpctl's _get_capsule
// method, for a SUAI reader (usm.Fields) that meets one: get calls the
// method and returns the ContextRef or QueueRef of the "SyclContextRef"
// or "SyclQueueRef" capsule it gives. The usm registry calls get when it
// binds the array's pointer, not before, as dpctl does: a dict that fails
// an earlier check never has its capsule taken, and a parse without
// binding (usm.ParseFields) never takes it. pybridge makes these for
// Python objects.
func FromCapsule(get func() (Obj, error)) Obj { return capsuleSource(get) }

// capsuleSource is FromCapsule's Obj: GetCapsule calls get, freshly each
// time.
type capsuleSource func() (Obj, error)

func (f capsuleSource) GetCapsule() (Obj, error) { return f() }
func (capsuleSource) isSyclobj()                 {}
