// Package boundary guards the places where C calls into Go: cgo exports of
// the Python extension module, purego callbacks, DLPack deleters and
// capsule destructors. A Go panic must not unwind through C (the process
// would abort), and it must not vanish either: Recover turns it into a
// *PanicError, counts it (Panics) and logs it, so a caller that can report
// an error (a Python call in progress) raises it and one that cannot (a
// deleter) still leaves a trace a test or a user can read.
//
// Callback makes the purego callbacks C calls. A program that has C of its
// own can install a gate first (SetGate): C code that runs before Go is
// entered and may refuse to enter it. The Python extension module uses it
// to keep a forked child out of the Go runtime, which does not survive
// fork without exec (see RATIONALE.md, "fork").
package boundary

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// PanicError is a Go panic recovered at a boundary. It matches no error
// kind, so Python sees it as RuntimeError: it is a bug in usmbridge (or in
// a callback it ran), never a verdict on the caller's input.
type PanicError struct {
	Where string // the boundary, e.g. "dlpack deleter"
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("usmbridge: internal error: Go panic in %s: %v", e.Where, e.Value)
}

var (
	panics atomic.Int64
	logger atomic.Pointer[func(*PanicError)]
)

// Panics returns how many panics Recover has caught in this process.
func Panics() int64 { return panics.Load() }

// SetLogger replaces where recovered panics are reported (by default a
// message with the stack on standard error); nil restores the default. It
// returns the previous logger (nil for the default).
func SetLogger(fn func(*PanicError)) func(*PanicError) {
	var prev *func(*PanicError)
	if fn == nil {
		prev = logger.Swap(nil)
	} else {
		prev = logger.Swap(&fn)
	}
	if prev == nil {
		return nil
	}
	return *prev
}

func logPanic(e *PanicError) {
	if p := logger.Load(); p != nil {
		(*p)(e)
		return
	}
	fmt.Fprintf(os.Stderr, "%v (recovered; counted in usmbridge's panic counter)\n%s", e, e.Stack)
}

// Recover must be deferred directly by the function C called:
//
//	defer boundary.Recover("dlpack deleter", nil)
//
// It stops a panic there, counts and logs it, and, when errp is not nil,
// stores it in *errp as a *PanicError for the caller to report.
func Recover(where string, errp *error) {
	v := recover()
	if v == nil {
		return
	}
	e := &PanicError{Where: where, Value: v, Stack: debug.Stack()}
	panics.Add(1)
	logPanic(e)
	if errp != nil {
		*errp = e
	}
}

// injected is the boundary whose next Check panics (tests only).
var injected atomic.Pointer[string]

// InjectPanic makes the next Check(where) panic, once. Tests use it to show
// that every boundary recovers.
func InjectPanic(where string) { injected.Store(&where) }

// Check panics if InjectPanic named where. Each boundary calls it inside
// its recovered region; in production it is one atomic load.
func Check(where string) {
	p := injected.Load()
	if p != nil && *p == where && injected.CompareAndSwap(p, nil) {
		panic("injected panic at " + where)
	}
}

var gate struct {
	mu    sync.Mutex
	fn    func(goFn uintptr) uintptr
	made  bool // a callback exists: a gate installed now would miss it
	gated int
}

// SetGate installs fn, which receives the C entry point of each Go
// callback made from now on and returns the C function pointer to hand out
// instead (one that decides in C whether to call Go at all), or 0 to hand
// out the Go entry point itself. It reports false, installing nothing, if a
// callback was already made: install the gate before any other use.
func SetGate(fn func(goFn uintptr) uintptr) bool {
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if gate.made {
		return false
	}
	gate.fn = fn
	return true
}

// Callback returns a C function pointer of type void (*)(void *) that
// calls fn. Every Go callback that C code may call must be made here, not
// with ffi.NewCallback directly, or a gate cannot cover it. Each call takes one of purego's permanent callback slots:
// make callbacks once per process (a sync.Once), never per operation. fn
// must recover its own panics (defer Recover).
func Callback(fn func(arg uintptr)) uintptr {
	gate.mu.Lock()
	defer gate.mu.Unlock()
	gate.made = true
	p := ffi.NewCallback(fn)
	if gate.fn != nil {
		if g := gate.fn(p); g != 0 {
			gate.gated++
			return g
		}
	}
	return p
}

// Gated returns how many callbacks were handed out through the gate.
func Gated() int {
	gate.mu.Lock()
	defer gate.mu.Unlock()
	return gate.gated
}
