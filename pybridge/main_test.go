package pybridge

import (
	"os"
	"syscall"
	"testing"
)

// TestMain ends the process with exit_group directly once the SYCL runtime
// has been loaded. Under -race, os.Exit first runs the race runtime's
// finaliser, which calls libc exit(): the static destructors of Intel's
// SYCL and CPU OpenCL runtimes then run while their worker threads are
// still alive, and crash (SIGSEGV in the runtime, "PLEASE submit a bug
// report to https://software.intel.com/..."). Without -race os.Exit never
// runs C atexit handlers, so the modes then agree. Race reports are still
// counted: the testing package fails any test that raced.
func TestMain(m *testing.M) {
	code := m.Run()
	if embedPy != nil && embedPy.loadedDpctl() != nil {
		os.Stdout.Sync()
		syscall.Exit(code)
	}
	os.Exit(code)
}
