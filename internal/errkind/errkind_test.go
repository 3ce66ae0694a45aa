package errkind

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// opError is a structured error of another package: its Error() begins
// with its Op, as Go's convention names the operation.
type opError struct {
	Op, reason string
	cause      error
}

func (e *opError) Error() string {
	s := e.Op + ": " + e.reason
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}
func (e *opError) Unwrap() error { return e.cause }

// pathLike names its Op as os.PathError does, "op path: ...": not a prefix
// "Op: ", so nothing is left out.
type pathLike struct{ Op, Path string }

func (e pathLike) Error() string { return e.Op + " " + e.Path + ": no such file" }

// valueOp is an error that is a struct value, not a pointer.
type valueOp struct{ Op string }

func (e valueOp) Error() string { return e.Op + ": failed" }

// reworded prints its cause its own way, not as a ": cause" suffix.
type reworded struct{ cause error }

func (e *reworded) Error() string { return "because (" + e.cause.Error() + ")" }
func (e *reworded) Unwrap() error { return e.cause }

func TestMessageLeavesOutGoOps(t *testing.T) {
	inner := New(Buffer, "dlpack.Import", "the tensor is on (kDLCUDA, 0)")
	for _, c := range []struct {
		name   string
		err    error
		goText string // Error(): Go's reader keeps every op
		pyText string // Message: Python's reader none
	}{
		{"nil", nil, "", ""},
		{"a kind", Value, "invalid value", "invalid value"},
		{"plain", errors.New("plain words"), "plain words", "plain words"},
		{"an *Error", inner, "dlpack.Import: the tensor is on (kDLCUDA, 0)", "the tensor is on (kDLCUDA, 0)"},
		{"ops all down the chain", Wrap(Buffer, "pybridge.FromDLPack", "the producer's tensor", inner),
			"pybridge.FromDLPack: the producer's tensor: dlpack.Import: the tensor is on (kDLCUDA, 0)",
			"the producer's tensor: the tensor is on (kDLCUDA, 0)"},
		{"an *Error without detail", Wrap(Value, "usm.Parse", "", inner),
			"usm.Parse: : dlpack.Import: the tensor is on (kDLCUDA, 0)", "the tensor is on (kDLCUDA, 0)"},
		{"context kept, the op behind it dropped", fmt.Errorf("argument 'x': %w", inner),
			"argument 'x': dlpack.Import: the tensor is on (kDLCUDA, 0)",
			"argument 'x': the tensor is on (kDLCUDA, 0)"},
		{"another package's op", &opError{"dlpack.Export", "read-only", New(Value, "usm.View", "no view")},
			"dlpack.Export: read-only: usm.View: no view", "read-only: no view"},
		{"behind a hidden kind", fmt.Errorf("f() argument 'a' is wrong: %w", HideKind(inner)),
			"f() argument 'a' is wrong: dlpack.Import: the tensor is on (kDLCUDA, 0)",
			"f() argument 'a' is wrong: the tensor is on (kDLCUDA, 0)"},
		{"joined", errors.Join(inner, New(Value, "usm.Parse", "bad shape")),
			"dlpack.Import: the tensor is on (kDLCUDA, 0)\nusm.Parse: bad shape",
			"the tensor is on (kDLCUDA, 0)\nbad shape"},
		{"an Op that does not lead the message", fmt.Errorf("reading: %w", pathLike{"open", "/x"}),
			"reading: open /x: no such file", "reading: open /x: no such file"},
		{"an Op of a struct value", valueOp{"pkg.Do"}, "pkg.Do: failed", "failed"},
		{"a cause printed another way is kept as printed", &reworded{inner},
			"because (dlpack.Import: the tensor is on (kDLCUDA, 0))",
			"because (dlpack.Import: the tensor is on (kDLCUDA, 0))"},
	} {
		if c.err != nil && c.err.Error() != c.goText {
			t.Errorf("%s: Error() = %q, want %q", c.name, c.err.Error(), c.goText)
		}
		if got := Message(c.err); got != c.pyText {
			t.Errorf("%s: Message = %q, want %q", c.name, got, c.pyText)
		}
	}
}

type originErr struct{ msg string }

func (e *originErr) Error() string { return e.msg }

// Origin finds the error of a type in the chain, and says whether the
// chain means what it means: only context stands in front of it.
func TestOrigin(t *testing.T) {
	o := &originErr{"producer's"}
	for _, c := range []struct {
		name  string
		err   error
		found bool
		same  bool
	}{
		{"nil", nil, false, false},
		{"none in the chain", errors.New("x"), false, false},
		{"itself", o, true, true},
		{"behind context", fmt.Errorf("ctx: %w", o), true, true},
		{"behind a kind of its own", Wrap(Value, "op", "outer", o), true, false},
		{"behind context and a kind", fmt.Errorf("ctx: %w", &ownKind{Type, o}), true, false},
		{"behind a join", errors.Join(errors.New("a"), o), true, false},
		{"behind a hidden cause", fmt.Errorf("ctx: %w", HideKind(o)), true, false},
	} {
		got, same := Origin[*originErr](c.err)
		if (got != nil) != c.found || (c.found && got != o) || same != c.same {
			t.Errorf("%s: Origin = %v, %v; want found %v, same %v", c.name, got, same, c.found, c.same)
		}
	}
}

// A caller's string of 100 kB makes a message of a few hundred bytes (it
// made one of 200 kB, quoting the string twice), cut where a character
// begins.
func TestQuote(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	for _, c := range []struct{ in, quoted, clipped string }{
		{"", `""`, ""},
		{"opencl:gpu", `"opencl:gpu"`, "opencl:gpu"},
		{big[:200], strconv.Quote(big[:200]), big[:200]},
		{big, strconv.Quote(big[:200]) + "... (100000 bytes)", big[:200] + "... (100000 bytes)"},
		{strings.Repeat("€", 1000), strconv.Quote(strings.Repeat("€", 66)) + "... (3000 bytes)", strings.Repeat("€", 66) + "... (3000 bytes)"},
		{strings.Repeat("\xff", 1000), strconv.Quote(strings.Repeat("\xff", 200)) + "... (1000 bytes)", strings.Repeat("\xff", 200) + "... (1000 bytes)"},
		{strings.Repeat("\x80", 1000), strconv.Quote(strings.Repeat("\x80", 197)) + "... (1000 bytes)", strings.Repeat("\x80", 197) + "... (1000 bytes)"},
	} {
		if got := Quote(c.in); got != c.quoted {
			t.Errorf("Quote(%d bytes) = %s, want %s", len(c.in), got, c.quoted)
		}
		if got := Clip(c.in); got != c.clipped {
			t.Errorf("Clip(%d bytes) = %s, want %s", len(c.in), got, c.clipped)
		}
	}
	if n := len(Quote(big)); n > 300 {
		t.Errorf("Quote of 100 kB is %d bytes", n)
	}
}
