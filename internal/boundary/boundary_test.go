package boundary

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// captureLogs routes recovered panics to a slice for the test's duration.
func captureLogs(t *testing.T) func() []*PanicError {
	var mu sync.Mutex
	var got []*PanicError
	prev := SetLogger(func(e *PanicError) { mu.Lock(); got = append(got, e); mu.Unlock() })
	t.Cleanup(func() { SetLogger(prev) })
	return func() []*PanicError { mu.Lock(); defer mu.Unlock(); return append([]*PanicError(nil), got...) }
}

func TestRecoverCountsLogsAndReports(t *testing.T) {
	logs := captureLogs(t)
	before := Panics()
	var err error
	func() {
		defer Recover("test boundary", &err)
		var m map[string]int
		m["x"] = 1 //nolint:staticcheck // a runtime error, as a real bug would be
	}()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Where != "test boundary" || len(pe.Stack) == 0 {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "test boundary") || !strings.Contains(err.Error(), "nil map") {
		t.Fatalf("message %q", err)
	}
	if Panics() != before+1 || len(logs()) != 1 || logs()[0] != pe {
		t.Fatalf("count %d→%d, logs %v", before, Panics(), logs())
	}

	// Without an error to report to, the panic is still counted and logged.
	func() {
		defer Recover("no error", nil)
		panic("boom")
	}()
	if Panics() != before+2 || len(logs()) != 2 || logs()[1].Value != "boom" {
		t.Fatalf("count %d, logs %v", Panics(), logs())
	}

	// No panic: nothing is touched.
	err = nil
	func() { defer Recover("quiet", &err) }()
	if err != nil || Panics() != before+2 {
		t.Fatal("Recover without a panic changed something")
	}
}

func TestInjectPanicFiresOnceAtItsBoundary(t *testing.T) {
	captureLogs(t)
	InjectPanic("here")
	Check("elsewhere") // another boundary is not affected
	var err error
	func() {
		defer Recover("here", &err)
		Check("here")
	}()
	if err == nil || !strings.Contains(err.Error(), "injected panic at here") {
		t.Fatalf("got %v", err)
	}
	Check("here") // fired once: no second panic
}

// A panic inside a Go callback that C called must be caught there; past
// that frame it would abort the process, so the call runs in a child.
func TestCallbackPanicIsRecovered(t *testing.T) {
	if testutil.InChild("callback-panic") {
		logs := captureLogs(t)
		var seen uintptr
		cb := Callback(func(arg uintptr) {
			defer Recover("test callback", nil)
			seen = arg
			Check("test callback")
		})
		InjectPanic("test callback")
		ffi.Fn(cb).Call(42) // C calls Go, which panics
		ffi.Fn(cb).Call(43) // and the callback still works
		if seen != 43 || Panics() != 1 || len(logs()) != 1 {
			t.Fatalf("seen %d, panics %d, logs %v", seen, Panics(), logs())
		}
		t.Log("callback survived its panic")
		return
	}
	testutil.RunChild(t, "callback-panic", time.Minute).Expect(t, 0, "callback survived its panic")
}

func TestSetGateOnlyBeforeTheFirstCallback(t *testing.T) {
	if testutil.InChild("gate") {
		var gated []uintptr
		if !SetGate(func(p uintptr) uintptr { gated = append(gated, p); return 0 }) {
			t.Fatal("SetGate refused in a fresh process")
		}
		Callback(func(uintptr) {})
		if len(gated) != 1 || Gated() != 0 { // 0 from the gate: the Go pointer is handed out
			t.Fatalf("gate saw %v, gated %d", gated, Gated())
		}
		if SetGate(func(uintptr) uintptr { return 1 }) {
			t.Fatal("SetGate accepted after a callback existed")
		}
		t.Log("gate ok")
		return
	}
	testutil.RunChild(t, "gate", time.Minute).Expect(t, 0, "gate ok")
}
