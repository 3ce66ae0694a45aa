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
// PyErr_Occurred, and records the call and its Go stack if one is
// pending: the C API's rule, which release builds of CPython do not check
// and which shows only as an odd failure later (an import that fails, a
// SystemError, a result read as an error). Run the tests that reach Python
// with the tag (scripts/test.sh does): they fail on any record.

var pending struct {
	mu    sync.Mutex
	calls []string
}

// ErrCheck reports whether this build records calls made with an
// exception pending.
const ErrCheck = true

func (a *API) noPending(fn string) {
	if a.errOccurred.Call() == 0 {
		return
	}
	pc := make([]uintptr, 32)
	n := runtime.Callers(2, pc)
	frames := runtime.CallersFrames(pc[:n])
	var b strings.Builder
	fmt.Fprintf(&b, "%s called with a Python exception pending", fn)
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
