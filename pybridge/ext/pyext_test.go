package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// pythonDir is the Python package's source tree (usmbridge/ and tests/),
// relative to this package.
const pythonDir = "../../python"

// TestPytest builds the extension module (a c-shared library: cgo,
// whatever this test's own cgo mode) against the project's Python's
// headers and runs the package's pytest suite with that Python.
func TestPytest(t *testing.T) {
	py, lib := buildExtension(t, "pytest")
	cmd := exec.Command(py, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests")
	cmd.Dir = pythonDir
	cmd.Env = append(os.Environ(), "USMBRIDGE_LIB="+lib)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("pytest: %v", err)
	}
	// buildExtension made sure dpctl and dpnp import, so a skip would hide
	// a runtime that is missing.
	if strings.Contains(string(out), " skipped") {
		t.Fatalf("pytest skipped tests although dpctl and dpnp import")
	}
}

// buildExtension checks that the project's Python can import what the
// Python tests need (dpctl, dpnp.tensor and the modules in need), builds
// the extension module into a temporary directory, and returns the Python
// and the library (USMBRIDGE_LIB).
func buildExtension(t *testing.T, need ...string) (py, lib string) {
	t.Helper()
	py = os.Getenv("USMBRIDGE_PYTHON")
	if py == "" {
		testutil.Runtime(t, testutil.Python, errkind.New(errkind.NotAvailable, "pyext", "USMBRIDGE_PYTHON is not set"))
	}
	if _, err := exec.LookPath("cc"); err != nil {
		testutil.Runtime(t, testutil.CCompiler, errkind.Wrap(errkind.NotAvailable, "pyext", "no C compiler for -buildmode=c-shared", err))
	}
	if err := exec.Command(py, "-c", "import "+strings.Join(append(need, "dpctl", "dpnp.tensor"), ", ")).Run(); err != nil {
		testutil.Runtime(t, testutil.Dpctl, errkind.Wrap(errkind.NotAvailable, "pyext", strings.Join(need, "/")+"/dpctl/dpnp not importable", err))
	}
	inc, err := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])").Output()
	if err != nil {
		t.Fatalf("asking %s for its include directory: %v", py, err)
	}
	include := strings.TrimSpace(string(inc))
	if _, err := os.Stat(filepath.Join(include, "Python.h")); err != nil {
		testutil.Runtime(t, testutil.Python, errkind.Wrap(errkind.NotAvailable, "pyext", "no Python.h for the extension module (Debian: libpython3.11-dev)", err))
	}
	lib = filepath.Join(t.TempDir(), "libusmbridge.so")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", lib, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-I"+include+" "+os.Getenv("CGO_CFLAGS"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return py, lib
}
