package syclobj

import (
	"fmt"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Obj is a syclobj value. The variants are Selector (a filter string),
// ContextRef, QueueRef and CapsuleSource. The set is closed.
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

// CapsuleSource is an object with a _get_capsule method (dpctl's duck type):
// GetCapsule returns a ContextRef or QueueRef, freshly for every call.
type CapsuleSource interface {
	Obj
	GetCapsule() (Obj, error)
}

// capsuleSource adapts a function to CapsuleSource.
type capsuleSource func() (Obj, error)

func (f capsuleSource) GetCapsule() (Obj, error) { return f() }
func (capsuleSource) isSyclobj()                 {}

// FromCapsuleFunc returns a CapsuleSource that calls get.
func FromCapsuleFunc(get func() (Obj, error)) CapsuleSource { return capsuleSource(get) }

// Error reports a syclobj that is missing or of no recognised form. It
// matches usm.ErrValue, as dpctl raises ValueError for these.
type Error struct {
	Value  any
	Reason string
}

func (e *Error) Error() string { return "syclobj " + describe(e.Value) + ": " + e.Reason }

// describe prints a value for a message: in full if it is a scalar or a
// syclobj value; by its type otherwise, since a slice, map or pointer may
// contain itself, which fmt would follow until the stack overflows.
func describe(v any) string {
	switch v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr,
		float32, float64, ContextRef, QueueRef, Selector:
		return fmt.Sprintf("%#v", v)
	}
	return "of type " + fmt.Sprintf("%T", v)
}
func (e *Error) Is(target error) bool {
	return target == error(errkind.Value)
}

// FromValue converts the generic decoded form of a "syclobj" entry: a filter
// string, or an Obj supplied by the caller (e.g. pybridge). nil or any other
// value is an *Error; a malformed string is a *SelectorError.
func FromValue(v any) (Obj, error) {
	switch x := v.(type) {
	case nil:
		return nil, &Error{Value: v, Reason: "required (a filter string, SyclContext, SyclQueue or their capsules)"}
	case string:
		if o := parsed.get(x); o != nil {
			return o, nil
		}
		sel, err := ParseSelector(x)
		if err != nil {
			return nil, err // not a non-nil Obj holding a zero Selector
		}
		return parsed.put(x, sel), nil
	case Selector, ContextRef, QueueRef, CapsuleSource:
		// Listed explicitly so that pointers such as *ContextRef, which
		// also have isSyclobj, do not slip into the closed set.
		return x.(Obj), nil
	}
	return nil, &Error{Value: v, Reason: fmt.Sprintf("unsupported type %T (want a filter string, SyclContext, SyclQueue or their capsules)", v)}
}

// Resolve reduces a CapsuleSource to the ContextRef or QueueRef it yields;
// other values are returned unchanged.
func Resolve(o Obj) (Obj, error) {
	cs, ok := o.(CapsuleSource)
	if !ok {
		return o, nil
	}
	got, err := cs.GetCapsule()
	if err != nil {
		return nil, &Error{Value: o, Reason: "_get_capsule failed: " + err.Error()}
	}
	switch got.(type) {
	case ContextRef, QueueRef:
		return got, nil
	}
	return nil, &Error{Value: o, Reason: fmt.Sprintf("_get_capsule returned %T, want a SyclContextRef or SyclQueueRef capsule", got)}
}

// parsed remembers the selectors FromValue parsed, boxed as Obj: a program
// hands over the same few strings ("host", "opencl:cpu:0") with every
// array, and a Selector never changes once parsed, so the parse (and its
// allocations) is made once per string. Errors are not kept: a bad string
// is parsed, and reported, every time. The cache is bounded in entries and
// key length, so hostile input cannot grow it without limit.
var parsed = selectorCache{m: map[string]Obj{}}

const (
	selectorCacheMax    = 256
	selectorCacheKeyMax = 128
)

type selectorCache struct {
	mu sync.RWMutex
	m  map[string]Obj
}

func (c *selectorCache) get(s string) Obj {
	c.mu.RLock()
	o := c.m[s]
	c.mu.RUnlock()
	return o
}

func (c *selectorCache) put(s string, sel Selector) Obj {
	var o Obj = sel
	if len(s) > selectorCacheKeyMax {
		return o
	}
	c.mu.Lock()
	if len(c.m) < selectorCacheMax {
		c.m[s] = o
	}
	c.mu.Unlock()
	return o
}
