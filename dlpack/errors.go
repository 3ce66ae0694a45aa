package dlpack

import "github.com/usmbridge/usmbridge/internal/errkind"

// Error reports a failed export or import. It matches exactly one of
// usm.ErrBuffer, usm.ErrValue, usm.ErrType, usm.ErrOverflow (a shape,
// stride or offset whose byte count does not fit: the OverflowError NumPy
// raises for one) or usm.ErrMemory with errors.Is, which is the Python
// exception the array API standard requires, whatever kind its cause has:
// the cause (Err) stays reachable with errors.As, and with errors.Is for
// targets that are not kinds (usm.ErrClosed: an export of an array whose
// memory has been freed, of kind usm.ErrValue), but not as a second kind.
type Error struct {
	Op     string // "dlpack.Export" or "dlpack.Import"
	Reason string
	Err    error // the cause, if any
	kind   *errkind.Kind
}

func (e *Error) Error() string {
	s := e.Op
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Is(target error) bool { return target == error(e.kind) }
func (e *Error) Unwrap() error        { return errkind.HideKind(e.Err) }

func exportErr(k *errkind.Kind, reason string, cause error) error {
	return &Error{Op: "dlpack.Export", Reason: reason, Err: cause, kind: k}
}

func importErr(k *errkind.Kind, reason string, cause error) error {
	return &Error{Op: "dlpack.Import", Reason: reason, Err: cause, kind: k}
}
