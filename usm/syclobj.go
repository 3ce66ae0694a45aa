package usm

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// The "syclobj" field as the parser reads it: only the parser, the Go
// readers (Parse, ParseJSON) and the registry call these, so they live
// where they are used (RATIONALE.md, "A public API sized to its users").

// syclobjError reports a syclobj that is missing or of no recognised form,
// or a capsule source that gave no SYCL reference (Err says why). It
// matches ErrValue, as dpctl raises ValueError for these, and only it (its
// cause lends no kind); the parser wraps it in a *MalformedError (or a
// *BindingError when _get_capsule fails), so callers reach it only as a
// cause.
type syclobjError struct {
	Value  any
	Reason string
	Err    error
}

func (e *syclobjError) Error() string {
	var s string
	switch e.Value.(type) {
	case nil:
		s = "syclobj is " + e.Reason
	case capsuleSource: // the *BindingError in front of it names the syclobj
		s = e.Reason
	default:
		s = "syclobj " + describe(e.Value) + ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *syclobjError) Is(target error) bool { return target == error(errkind.Value) }
func (e *syclobjError) Unwrap() error        { return errkind.HideKind(e.Err) }

// describe prints a value for a message: in full if it is a scalar or a
// syclobj value; by its type otherwise, since a slice, map or pointer may
// contain itself, which fmt would follow until the stack overflows.
func describe(v any) string {
	switch v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr,
		float32, float64, syclobj.ContextRef, syclobj.QueueRef, syclobj.Selector:
		return fmt.Sprintf("%#v", v)
	}
	return "of type " + fmt.Sprintf("%T", v)
}

// describeSyclobj prints a syclobj for a message: a filter selector or a
// SYCL reference as itself, and a capsule source (a Python capsule, or an
// object with _get_capsule) in the words a Python user wrote it with.
func describeSyclobj(o syclobj.Obj) string {
	switch x := o.(type) {
	case nil:
		return "None"
	case capsuleSource:
		return "a capsule or an object with _get_capsule()"
	case fmt.Stringer:
		return x.String()
	}
	return describe(o)
}

// capsuleSource is the syclobj of an object with a _get_capsule method
// (syclobj.FromCapsule): GetCapsule returns a ContextRef or QueueRef,
// freshly for every call.
type capsuleSource interface {
	syclobj.Obj
	GetCapsule() (syclobj.Obj, error)
}

// syclobjFromValue converts the generic decoded form of a "syclobj" entry:
// a filter string (syclobj.ParseSelector, which parses each string once),
// or a syclobj.Obj supplied by the caller. nil or any other value is a
// *syclobjError; a malformed string is a *syclobj.SelectorError.
func syclobjFromValue(v any) (syclobj.Obj, error) {
	switch x := v.(type) {
	case nil:
		return nil, &syclobjError{Value: v, Reason: "required (a filter string, SyclContext, SyclQueue or their capsules)"}
	case string:
		sel, err := syclobj.ParseSelector(x)
		if err != nil {
			return nil, err // not a non-nil Obj holding a zero Selector
		}
		return sel, nil
	case syclobj.Selector, syclobj.ContextRef, syclobj.QueueRef, capsuleSource:
		// Listed explicitly so that pointers such as *ContextRef, which
		// also have isSyclobj, do not slip into the closed set.
		return x.(syclobj.Obj), nil
	}
	return nil, &syclobjError{Value: v, Reason: fmt.Sprintf("unsupported type %T (want a filter string, SyclContext, SyclQueue or their capsules)", v)}
}

// resolveSyclobj reduces a capsule source to the ContextRef or QueueRef it
// yields; other values are returned unchanged. The source's errors follow
// the Fields rule: a *ReadError (what it gave is no capsule it can read)
// becomes dpctl's ValueError naming the syclobj; any other error (an
// exception its _get_capsule raised) is returned as it is, as dpctl lets
// it through.
func resolveSyclobj(o syclobj.Obj) (syclobj.Obj, error) {
	cs, ok := o.(capsuleSource)
	if !ok {
		return o, nil
	}
	got, err := cs.GetCapsule()
	if err != nil {
		var re *ReadError
		if !errors.As(err, &re) {
			return nil, err
		}
		return nil, &syclobjError{Value: o, Reason: "it gives no SYCL context or queue: " + re.Found, Err: re.Err}
	}
	switch got.(type) {
	case syclobj.ContextRef, syclobj.QueueRef:
		return got, nil
	}
	return nil, &syclobjError{Value: o, Reason: fmt.Sprintf("_get_capsule returned %T, want a SyclContextRef or SyclQueueRef capsule", got)}
}
