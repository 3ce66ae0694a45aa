package pyext

import (
	"errors"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// An argument that cannot be read keeps its cause for Go (errors.As, the
// cause's op in Error()) and names the function and parameter, not the
// cause's Go op, in the message Python reads.
func TestArgumentErrorKeepsItsCause(t *testing.T) {
	cause := errkind.New(errkind.Buffer, "dlpack.Import", "the tensor resides on unsupported device (kDLCUDA, 0)")
	err := error(&ArgumentError{Func: "total", Param: "x", Reason: "cannot be read", kind: errkind.Value, Err: cause})
	var ae *ArgumentError
	var ce *errkind.Error
	if !errors.As(err, &ae) || ae.Param != "x" || !errors.As(err, &ce) || ce != cause {
		t.Fatalf("%v: the ArgumentError and its cause must both be reachable", err)
	}
	if !errors.Is(err, usm.ErrValue) || errors.Is(err, usm.ErrBuffer) {
		t.Errorf("%v: want ErrValue only (the cause lends no kind)", err)
	}
	if got, want := err.Error(), "total() argument 'x' cannot be read: dlpack.Import: the tensor resides on unsupported device (kDLCUDA, 0)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := errkind.Message(err), "total() argument 'x' cannot be read: the tensor resides on unsupported device (kDLCUDA, 0)"; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
}
