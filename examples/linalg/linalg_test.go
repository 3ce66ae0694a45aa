package linalg_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/examples/linalg"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/pyext"
)

// The module's definition is valid: what `import linalg` would report
// otherwise fails here first.
func TestModuleDefinition(t *testing.T) {
	if err := pyext.Check("linalg", linalg.Module); err != nil {
		t.Fatal(err)
	}
}

// TestPython builds the example with `python -m usmbridge.build` and runs
// its Python test (test_linalg.py) with the project's Python: NumPy, dpnp,
// against it.
func TestPython(t *testing.T) {
	py := os.Getenv("USMBRIDGE_PYTHON")
	if py == "" {
		testutil.Runtime(t, testutil.Python, errkind.New(errkind.NotAvailable, "linalg", "USMBRIDGE_PYTHON is not set"))
	}
	if _, err := exec.LookPath("cc"); err != nil {
		testutil.Runtime(t, testutil.CCompiler, errkind.Wrap(errkind.NotAvailable, "linalg", "no C compiler for cgo", err))
	}
	if err := exec.Command(py, "-c", "import pytest, dpctl, dpnp").Run(); err != nil {
		testutil.Runtime(t, testutil.Dpctl, errkind.Wrap(errkind.NotAvailable, "linalg", "pytest/dpctl/dpnp not importable", err))
	}
	pkg, err := filepath.Abs("../../python")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	build := exec.Command(py, "-m", "usmbridge.build", ".", "-o", out)
	build.Env = append(os.Environ(), "PYTHONPATH="+pkg)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("python -m usmbridge.build: %v\n%s", err, b)
	}
	test := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_linalg.py")
	test.Env = append(os.Environ(), "PYTHONPATH="+out, "JAX_PLATFORMS=cpu")
	b, err := test.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("pytest: %v", err)
	}
	if strings.Contains(string(b), "skipped") {
		t.Fatal("tests skipped although every peer imports")
	}
}
