// Package errkind holds the error kinds that usmbridge errors are classified
// by. Each kind corresponds to the Python exception that the array API
// standard, DLPack and dpctl require for that failure, so the Python bridge
// can raise the right one. The public names are re-exported by package usm.
// Message is the text a Python user reads of an error: its message without
// the Go operations it names.
package errkind

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

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
// implement Is. Error() begins with Op, for Go's reader; Message, the text
// Python reads, leaves it out, so Detail says what was wrong on its own.
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

// Origin returns the error of type E that err carries, if any, and
// whether err means the same: no error in front of it in the chain states
// a kind of its own. A wrapper that only adds context (fmt.Errorf's %w)
// keeps the origin's meaning; one that states a kind gives it another. An
// origin found only behind a join, or behind a cause that hides its kind
// (HideKind), does not mean the same. pybridge raises an error whose origin
// is a Python exception, meaning the same, as that very exception object,
// and pyext passes such an error through untouched where it words every
// other one itself: both ask this.
func Origin[E error](err error) (origin E, same bool) {
	same = true
	for e := err; e != nil; e = errors.Unwrap(e) {
		if x, ok := e.(E); ok { //nolint:errorlint // this link of the chain, walked by hand
			return x, same
		}
		if OwnKind(e) != nil {
			same = false
		}
	}
	var zero E
	if errors.As(err, &origin) {
		return origin, false
	}
	return zero, false
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

// Message is the text a Python user reads of err, the one rule for it:
// err's message with every Go operation left out, wherever in the chain of
// causes it stands. Go's Error() names the operation first (Go's
// convention, as strconv.NumError and os.PathError do: a Go caller's log
// says where it failed); a Python user called no Go function, and reads
// what was wrong with the argument. See RATIONALE.md, "Error messages: Go's
// text and Python's".
//
// The operation is the Op field of a struct error, as Go's convention
// names it (os.PathError, net.OpError; here *Error, dlpack.Error,
// pybridge.Exception), where Error() begins with Op and ": ". Each link of
// the chain is read as its own text followed by its cause's (": " and the
// cause's Error(), as *Error and fmt.Errorf("...: %w") write them); the
// cause is then rendered by the same rule. A link that prints its cause
// some other way is taken as it prints itself. errors.Join's errors are
// rendered one by one, a line each.
func Message(err error) string {
	switch e := err.(type) { //nolint:errorlint // this link of the chain; the causes are walked below
	case nil:
		return ""
	case *Error:
		return withCause(e.Detail, e.Err)
	case hiddenKind:
		return Message(e.err)
	}
	s := err.Error()
	if op := opField(err); op != "" {
		s = strings.TrimPrefix(s, op+": ")
	}
	switch u := err.(type) { //nolint:errorlint // as above
	case interface{ Unwrap() error }:
		if c := u.Unwrap(); c != nil {
			if own, ok := strings.CutSuffix(s, c.Error()); ok {
				return own + Message(c)
			}
		}
	case interface{ Unwrap() []error }:
		cs := u.Unwrap()
		texts, msgs := make([]string, len(cs)), make([]string, len(cs))
		for i, c := range cs {
			texts[i], msgs[i] = c.Error(), Message(c)
		}
		if own, ok := strings.CutSuffix(s, strings.Join(texts, "\n")); ok {
			return own + strings.Join(msgs, "\n")
		}
	}
	return s
}

// opField is the Op field of a struct error (or of the struct a pointer
// error points to), "" if it has none. Reflection, rather than a method
// every such error would export for this one reader: the field is Go's
// convention, and the rule then holds for errors of any package.
func opField(err error) string {
	v := reflect.ValueOf(err)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	if f := v.FieldByName("Op"); f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}

// withCause is detail followed by the Python text of its cause, as
// *Error.Error() writes them.
func withCause(detail string, cause error) string {
	switch {
	case cause == nil:
		return detail
	case detail == "":
		return Message(cause)
	}
	return detail + ": " + Message(cause)
}

// maxQuoted is how many bytes of a caller's string a message quotes, as
// CPython's "%.200s" quotes a type's name or an argument: a string of any
// size makes a message of bounded size.
const maxQuoted = 200

// Quote is strconv.Quote of a caller's string for an error message: the
// one rule every message that quotes one goes through (Clip's cut).
func Quote(s string) string {
	c, n := cut(s)
	if n == len(s) {
		return strconv.Quote(s)
	}
	return strconv.Quote(c) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// Clip is a caller's string for an error message unquoted (a Python type's
// name, as CPython's "%.200s" gives it): s, or its first 200 bytes, cut
// at a UTF-8 boundary, followed by "... (n bytes)".
func Clip(s string) string {
	c, n := cut(s)
	if n == len(s) {
		return s
	}
	return c + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// cut is s's first maxQuoted bytes, moved back to the start of a UTF-8
// sequence (at most 3 bytes, so bytes that are no UTF-8 are cut where
// they stand), and its length.
func cut(s string) (string, int) {
	if len(s) <= maxQuoted {
		return s, len(s)
	}
	n := maxQuoted
	for i := 0; i < utf8.UTFMax-1 && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n], n
}
