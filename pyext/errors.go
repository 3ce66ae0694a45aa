package pyext

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// A Go function reports a wrong argument or a failure by returning an
// error: its kind says which Python exception is raised (usm.ErrValue is
// ValueError, usm.ErrType TypeError, usm.ErrBuffer BufferError, ...; no
// kind is RuntimeError), with the error's message, and a Python exception
// that reached Go (a callback that raised) is raised as the same object.
// These make errors of a given exception with exactly the message given.

// ValueError is an error raised in Python as ValueError.
func ValueError(format string, args ...any) error { return pyErr(errkind.Value, format, args) }

// TypeError is an error raised in Python as TypeError.
func TypeError(format string, args ...any) error { return pyErr(errkind.Type, format, args) }

// BufferError is an error raised in Python as BufferError.
func BufferError(format string, args ...any) error { return pyErr(errkind.Buffer, format, args) }

// RuntimeError is an error raised in Python as RuntimeError.
func RuntimeError(format string, args ...any) error { return pyErr(nil, format, args) }

type pyError struct {
	kind *errkind.Kind
	msg  string
}

func (e *pyError) Error() string        { return e.msg }
func (e *pyError) Is(target error) bool { return e.kind != nil && target == error(e.kind) }

func pyErr(k *errkind.Kind, format string, args []any) error {
	return &pyError{kind: k, msg: fmt.Sprintf(format, args...)}
}

// ArgTypeError is a TypeError about the Go function's parameter param, for
// checks the parameter's options do not express: its message is CPython's
// "f() argument 'param' " followed by the formatted reason ("must be
// sorted, got ..."), f being the function (or "Class.method") Python
// called. It is an *ArgumentError.
func ArgTypeError(param, format string, args ...any) error {
	return &ArgumentError{Param: param, Reason: fmt.Sprintf(format, args...), kind: errkind.Type}
}

// ArgValueError is ArgTypeError's ValueError.
func ArgValueError(param, format string, args ...any) error {
	return &ArgumentError{Param: param, Reason: fmt.Sprintf(format, args...), kind: errkind.Value}
}

// nameFunc gives an ArgumentError of the Go function (ArgTypeError,
// ArgValueError) the name of the function Python called, which the Go
// function does not know.
func nameFunc(fn string, err error) {
	if err == nil {
		return
	}
	var ae *ArgumentError
	if errors.As(err, &ae) && ae.Func == "" {
		ae.Func = fn
	}
}
