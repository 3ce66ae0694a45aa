//go:build usmbridge_errcheck

package pyapi

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
)

// With the usmbridge_errcheck tag every wrapper of a C API function that
// must not run with a Python exception pending (everything but the PyErr_
// functions, reference counts and the memory reads) first asks
// PyGILState_Check, then PyErr_Occurred, and records the call and its Go
// stack if the thread has no thread state (no GIL) or an exception is
// pending: the C API's rules, which release builds of CPython do not check
// and which show only as a crash or an odd failure later (an import that
// fails, a SystemError, a result read as an error). Run the tests that
// reach Python with the tag (scripts/test.sh does): they fail on any
// record.

var pending struct {
	mu    sync.Mutex
	calls []string
}

// ErrCheck reports whether this build records calls made with an
// exception pending.
const ErrCheck = true

func (a *API) noPending(fn string) {
	if a.gilCheck.Call0() == 0 {
		record(fn + " called without the GIL")
		return // PyErr_Occurred itself needs a thread state
	}
	if a.errOccurred.Call0() == 0 {
		return
	}
	record(fn + " called with a Python exception pending")
}

// record notes a call that broke the rules, with its Go stack.
func record(what string) {
	pc := make([]uintptr, 32)
	n := runtime.Callers(3, pc)
	frames := runtime.CallersFrames(pc[:n])
	var b strings.Builder
	b.WriteString(what)
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "\n\t%s\n\t\t%s:%d", f.Function, f.File, f.Line)
		if !more {
			break
		}
	}
	pending.mu.Lock()
	pending.calls = append(pending.calls, b.String())
	pending.mu.Unlock()
	fmt.Fprintln(os.Stderr, "usmbridge_errcheck:", b.String())
}

// PendingCalls lists the calls made with an exception pending so far,
// each with its Go stack.
func PendingCalls() []string {
	pending.mu.Lock()
	defer pending.mu.Unlock()
	return append([]string(nil), pending.calls...)
}
