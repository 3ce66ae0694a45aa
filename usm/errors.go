package usm

import (
	"errors"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Error kinds. Every error usmbridge makes matches exactly one of these
// with errors.Is; each maps to one Python exception (see PythonException).
// The one error that may match none is a Python exception that crossed
// into Go (a *pybridge.Exception) of a class no kind names, such as
// KeyError: it is Python's own, and raised back it is itself.
var (
	// ErrValue: a malformed field or an argument outside its domain (ValueError).
	ErrValue error = errkind.Value
	// ErrType: an argument of the wrong type (TypeError).
	ErrType error = errkind.Type
	// ErrBuffer: data that cannot be exchanged as asked (BufferError), e.g.
	// a needed copy with copy=False, an unsupported device or dtype.
	ErrBuffer error = errkind.Buffer
	// ErrAttribute: an object lacks a required attribute (AttributeError).
	ErrAttribute error = errkind.Attribute
	// ErrNotAvailable: a native runtime (library, driver, device) is absent.
	ErrNotAvailable error = errkind.NotAvailable
	// ErrNotSupported: the runtime is present but cannot do what was asked.
	ErrNotSupported error = errkind.NotSupported
	// ErrOverflow: a size, pointer or index does not fit (OverflowError).
	ErrOverflow error = errkind.Overflow
	// ErrMemory: an allocation failed (MemoryError).
	ErrMemory error = errkind.Memory
)

// ErrClosed is the error of using an array whose memory is gone: an
// Array whose Owner has released it (Allocation.Free with no export
// holding it), or an NDArray that was closed. It is of kind ErrValue (the
// ValueError a closed Python file raises), so errors.Is(err, ErrClosed)
// and errors.Is(err, ErrValue) both hold; every accessor, export and
// kernel argument of such an array returns an error matching it, and
// nothing reads or writes the memory.
var ErrClosed error = errkind.New(errkind.Value, "usm", "the array is closed or its memory has been freed")

// closedError is an accessor's refusal of an array whose memory is gone:
// ErrClosed, naming the operation.
type closedError struct {
	Op     string
	Reason string
}

func (e *closedError) Error() string        { return e.Op + ": " + e.Reason }
func (e *closedError) Is(target error) bool { return target == ErrClosed || target == ErrValue }

// PythonException names the Python exception that err should raise:
// "BufferError", "ValueError", "TypeError", "AttributeError",
// "OverflowError", "MemoryError", "NotImplementedError", or "RuntimeError"
// for errors of no kind (and for ErrNotAvailable). nil gives "". The
// outermost error in the chain that states a kind decides: a wrapper that
// gives its cause another meaning wins over the cause's kind.
func PythonException(err error) string {
	if err == nil {
		return ""
	}
	if k := errkind.Of(err); k != nil {
		return k.Python()
	}
	for _, k := range errkind.All { // a tree (errors.Join): the first kind found
		if errors.Is(err, k) {
			return k.Python()
		}
	}
	return "RuntimeError"
}

// MalformedError reports a malformed __sycl_usm_array_interface__ field.
// Field names it as a path into the dict: a key ("data", "shape",
// "typestr", "syclobj", "version", "offset"), or one item of a key's
// value where that item is what is wrong ("data[0]", "shape[1]",
// "strides[0]"); a layout whose shape, strides and offset are each well
// formed but do not fit together is "shape/strides/offset", and a value
// that is no dict at all "dict". It matches ErrValue, ErrType or
// ErrOverflow, whichever dpctl raises for the same input.
type MalformedError struct {
	Field  string
	Reason string
	kind   *errkind.Kind
	Err    error
}

func (e *MalformedError) Error() string {
	s := "__sycl_usm_array_interface__ is malformed: " + e.Field + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *MalformedError) Is(target error) bool { return target == error(e.kind) }
func (e *MalformedError) Unwrap() error        { return e.Err }

func malformed(k *errkind.Kind, field, reason string) *MalformedError {
	return &MalformedError{Field: field, Reason: reason, kind: k}
}
