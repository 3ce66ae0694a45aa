package ext_test

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
const pythonDir = ".."

// TestPytest builds usmbridge._ext with `python -m usmbridge.build` (what
// setup.py runs) and runs the package's pytest suite with it.
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
// the extension module into a temporary directory with the build command
// users run, and returns the Python and the library (USMBRIDGE_LIB).
func buildExtension(t *testing.T, need ...string) (py, lib string) {
	t.Helper()
	py = os.Getenv("USMBRIDGE_PYTHON")
	if py == "" {
		testutil.Runtime(t, testutil.Python, errkind.New(errkind.NotAvailable, "ext", "USMBRIDGE_PYTHON is not set"))
	}
	if _, err := exec.LookPath("cc"); err != nil {
		testutil.Runtime(t, testutil.CCompiler, errkind.Wrap(errkind.NotAvailable, "ext", "no C compiler for -buildmode=c-shared", err))
	}
	if err := exec.Command(py, "-c", "import "+strings.Join(append(need, "dpctl", "dpnp.tensor"), ", ")).Run(); err != nil {
		testutil.Runtime(t, testutil.Dpctl, errkind.Wrap(errkind.NotAvailable, "ext", strings.Join(need, "/")+"/dpctl/dpnp not importable", err))
	}
	dir := t.TempDir()
	cmd := exec.Command(py, "-m", "usmbridge.build", ".", "--name", "usmbridge._ext", "-o", dir)
	pkg, err := filepath.Abs(pythonDir)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pkg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python -m usmbridge.build: %v\n%s", err, out)
	}
	return py, strings.TrimSpace(string(out))
}
