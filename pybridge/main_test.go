package pybridge

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/usmbridge/usmbridge/internal/pyapi"
)

// TestMain ends the process with exit_group directly once the SYCL runtime
// has been loaded. Under -race, os.Exit first runs the race runtime's
// finaliser, which calls libc exit(): the static destructors of Intel's
// SYCL and CPU OpenCL runtimes then run while their worker threads are
// still alive, and crash (SIGSEGV in the runtime, "PLEASE submit a bug
// report to https://software.intel.com/..."). Without -race os.Exit never
// runs C atexit handlers, so the modes then agree. Race reports are still
// counted: the testing package fails any test that raced.
//
// Built with the usmbridge_errcheck tag, the run also fails if pybridge
// called the C API with a Python exception pending (internal/pyapi).
func TestMain(m *testing.M) {
	code := m.Run()
	if calls := pyapi.PendingCalls(); len(calls) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d C API calls with a Python exception pending:\n%s\n", len(calls), strings.Join(calls, "\n"))
		code = 1
	}
	if embedPy != nil && embedPy.loadedDpctl() != nil {
		os.Stdout.Sync()
		syscall.Exit(code)
	}
	os.Exit(code)
}
