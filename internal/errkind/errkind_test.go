package errkind

import (
	"errors"
	"fmt"
	"testing"
)

type ownKind struct {
	k     *Kind
	cause error
}

func (e *ownKind) Error() string        { return "own" }
func (e *ownKind) Is(target error) bool { return target == error(e.k) }
func (e *ownKind) Unwrap() error        { return e.cause }

func TestOfIsTheOutermostKind(t *testing.T) {
	inner := New(Buffer, "op", "inner")
	for _, c := range []struct {
		name string
		err  error
		want *Kind
	}{
		{"nil", nil, nil},
		{"plain", errors.New("x"), nil},
		{"a kind itself", Type, Type},
		{"an *Error", inner, Buffer},
		{"context only", fmt.Errorf("ctx: %w", inner), Buffer},
		{"a wrapper with its own kind", Wrap(Value, "op", "outer", inner), Value},
		{"own kind behind context", fmt.Errorf("ctx: %w", &ownKind{Overflow, inner}), Overflow},
		{"a hidden cause lends no kind", fmt.Errorf("ctx: %w", HideKind(inner)), nil},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("%s: Of = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestHideKind(t *testing.T) {
	sentinel := errors.New("sentinel")
	inner := Wrap(Buffer, "op", "inner", sentinel)
	h := HideKind(inner)
	if h.Error() != inner.Error() {
		t.Fatalf("message %q", h)
	}
	for _, k := range All {
		if errors.Is(h, k) {
			t.Errorf("hidden cause matches %v", k)
		}
	}
	if !errors.Is(h, sentinel) {
		t.Error("a sentinel that is not a kind is still found")
	}
	var e *Error
	if !errors.As(h, &e) || e != inner {
		t.Error("errors.As reaches the cause")
	}
	if HideKind(nil) != nil {
		t.Error("HideKind(nil) must be nil, so Unwrap of a causeless error is nil")
	}
}
