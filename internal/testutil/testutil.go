// Package testutil holds test helpers shared by usmbridge's packages.
//
// # Crash-class tests in a child process
//
// A test that could abort or hang the process (a panic through C, a
// deadlock, a fault) runs its dangerous part in a child: RunChild
// re-executes the test binary for that one test with ChildEnv set, InChild
// tells the child apart, and the parent asserts on the exit status, the
// output and the time it took (Child.Expect).
//
// # Skips that cannot hide a missing runtime
//
// Tests that need a native runtime call Runtime(t, name, err) with the
// error from opening it. Locally a usm.ErrNotAvailable error skips the test
// with the reason. When the environment variable USMBRIDGE_REQUIRE names the
// runtime (a comma-separated list, or "all"), the same error fails the test:
// CI sets it for every runtime it installs, so a green run means the real
// runtimes ran. Any other error always fails.
//
// # Go extension modules and their Python tests
//
// Tests of Go extension modules (the examples', test/'s, python/ext's)
// build them with the command users run, `python -m usmbridge.build`, and
// run Python tests against them, with the same skips (ProjectPython alone
// where nothing is built):
//
//	py := testutil.ModulePython(t) // $USMBRIDGE_PYTHON and a C compiler
//	testutil.Imports(t, py, testutil.Dpctl, "pytest", "dpctl", "dpnp")
//	dir := t.TempDir()
//	testutil.BuildModule(t, py, dir, ".")
//	out := testutil.Pytest(t, py, "", []string{"PYTHONPATH=" + dir}, "test_x.py")
//	testutil.AllRan(t, out) // no test skipped
package testutil

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// RequireEnv is the variable that turns "runtime not available" skips into
// failures.
const RequireEnv = "USMBRIDGE_REQUIRE"

// Runtime names used with RequireEnv.
const (
	PoCL        = "pocl"         // OpenCL through PoCL (SVM path)
	IntelOpenCL = "intel-opencl" // Intel CPU OpenCL runtime (USM path)
	LevelZero   = "levelzero"    // Level Zero loader with the fake driver
	Python      = "python"       // CPython shared library with numpy
	Dpctl       = "dpctl"        // dpctl with a SYCL runtime
	MPI         = "mpi"          // mpi4py with MPICH's mpiexec (scripts/setup-50-mpi.sh)
	PyVersions  = "pyversions"   // a venv per supported CPython (scripts/setup-45-pyversions.sh)
	SidPythons  = "sid"          // CPython 3.14 and 3.15 in a Debian sid root (scripts/setup-46-sid.sh)
	CCompiler   = "cc"           // a C compiler for test fixtures
	SPIRVTools  = "spirv"        // clang's SPIR target and llvm-spirv (scripts/setup-25-spirv.sh)
)

// Required reports whether USMBRIDGE_REQUIRE names runtime (or is "all").
func Required(runtime string) bool {
	list := strings.Split(os.Getenv(RequireEnv), ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	return slices.Contains(list, "all") || slices.Contains(list, runtime)
}

// Runtime skips or fails t when err says the runtime is not available, as
// described in the package comment. A nil err does nothing.
func Runtime(tb testing.TB, runtime string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if !errors.Is(err, errkind.NotAvailable) {
		tb.Fatalf("%s: %v", runtime, err)
	}
	if Required(runtime) {
		tb.Fatalf("%s is required (%s=%q) but not available: %v", runtime, RequireEnv, os.Getenv(RequireEnv), err)
	}
	tb.Skipf("%s not available (set %s=%s to make this a failure): %v", runtime, RequireEnv, runtime, err)
}
