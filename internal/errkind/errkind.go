// Package errkind holds the error kinds that usmbridge errors are classified
// by. Each kind corresponds to the Python exception that the array API
// standard, DLPack and dpctl require for that failure, so the Python bridge
// can raise the right one. The public names are re-exported by package usm.
package errkind

import "errors"

// Kind is a sentinel error naming a class of failure. Structured errors
// report their kind through an Is method, so errors.Is(err, usm.ErrValue)
// works on any error the library returns.
type Kind struct{ name, python string }

func (k *Kind) Error() string { return k.name }

// Python is the name of the Python exception this kind maps to.
func (k *Kind) Python() string { return k.python }

var (
	// Value: a malformed field or an argument outside its domain.
	Value = &Kind{"invalid value", "ValueError"}
	// Type: an argument of the wrong type.
	Type = &Kind{"wrong type", "TypeError"}
	// Buffer: the data cannot be exported or imported as asked (DLPack).
	Buffer = &Kind{"buffer cannot be exchanged", "BufferError"}
	// Attribute: an object lacks a required attribute or method.
	Attribute = &Kind{"missing attribute", "AttributeError"}
	// NotAvailable: a native runtime (library, driver, device) is absent.
	NotAvailable = &Kind{"runtime not available", "RuntimeError"}
	// NotSupported: the runtime is present but cannot do what was asked.
	NotSupported = &Kind{"not supported", "NotImplementedError"}
	// Overflow: a size or index does not fit its integer type.
	Overflow = &Kind{"integer overflow", "OverflowError"}
	// Memory: an allocation failed.
	Memory = &Kind{"out of memory", "MemoryError"}
)

// All lists every kind, most specific first, for classification.
var All = []*Kind{Buffer, Type, Attribute, Overflow, Memory, NotSupported, NotAvailable, Value}

// Error is the common structured error: an operation, what was wrong, and
// the kind it belongs to. Packages wrap it or define richer types that also
// implement Is.
type Error struct {
	Kind   *Kind
	Op     string // what was being done, e.g. "typestr.Parse"
	Detail string // what was wrong, quoting the offending input
	Err    error  // an underlying cause, if any
}

func (e *Error) Error() string {
	s := e.Op + ": " + e.Detail
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Is(target error) bool { return target == error(e.Kind) }
func (e *Error) Unwrap() error        { return e.Err }

// New returns an *Error of the given kind.
func New(k *Kind, op, detail string) *Error { return &Error{Kind: k, Op: op, Detail: detail} }

// Wrap returns an *Error of the given kind wrapping cause.
func Wrap(k *Kind, op, detail string, cause error) *Error {
	return &Error{Kind: k, Op: op, Detail: detail, Err: cause}
}

// Of returns the kind of the outermost error in err's chain that states
// one (through its Is method), or nil. A wrapper that says a kind of its own
// decides what err means, whatever kind its cause had.
func Of(err error) *Kind {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if k := OwnKind(e); k != nil {
			return k
		}
	}
	return nil
}

// OwnKind returns the kind e states itself, without unwrapping: the first of
// All that its Is method accepts, or nil.
func OwnKind(e error) *Kind {
	if k, ok := e.(*Kind); ok { //nolint:errorlint // e's own kind: no unwrapping, by definition
		return k
	}
	x, ok := e.(interface{ Is(error) bool })
	if !ok {
		return nil
	}
	for _, k := range All {
		if x.Is(k) {
			return k
		}
	}
	return nil
}

// HideKind wraps a cause so that errors.Is finds no kind through it, for
// structured errors documented to match exactly one kind: their Unwrap
// returns HideKind(cause). errors.As, and errors.Is with any target that is
// not a kind, still reach the cause and its whole chain.
func HideKind(cause error) error {
	if cause == nil {
		return nil
	}
	return hiddenKind{cause}
}

type hiddenKind struct{ err error }

func (h hiddenKind) Error() string { return h.err.Error() }

func (h hiddenKind) Is(target error) bool {
	if _, ok := target.(*Kind); ok {
		return false
	}
	return errors.Is(h.err, target)
}

func (h hiddenKind) As(target any) bool { return errors.As(h.err, target) }
