package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// TestPytest builds the c-shared library (cgo, whatever this test's own
// cgo mode) and runs the package's pytest suite with the project's Python.
func TestPytest(t *testing.T) {
	py := os.Getenv("USMBRIDGE_PYTHON")
	if py == "" {
		testutil.Runtime(t, testutil.Python, errkind.New(errkind.NotAvailable, "pyext", "USMBRIDGE_PYTHON is not set"))
	}
	if _, err := exec.LookPath("cc"); err != nil {
		testutil.Runtime(t, testutil.CCompiler, errkind.Wrap(errkind.NotAvailable, "pyext", "no C compiler for -buildmode=c-shared", err))
	}
	if err := exec.Command(py, "-c", "import pytest, dpctl, dpnp.tensor").Run(); err != nil {
		testutil.Runtime(t, testutil.Dpctl, errkind.Wrap(errkind.NotAvailable, "pyext", "pytest/dpctl/dpnp not importable", err))
	}
	lib := filepath.Join(t.TempDir(), "libusmbridge.so")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", lib, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
	cmd.Env = append(os.Environ(), "USMBRIDGE_LIB="+lib)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("pytest: %v", err)
	}
}
