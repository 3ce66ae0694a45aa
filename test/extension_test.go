package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/test/extmod"
)

func TestExtmodDefinition(t *testing.T) {
	if err := pyext.Check("extmod", extmod.Module); err != nil {
		t.Fatal(err)
	}
}

// buildModule builds the Go package dir into dir with `python -m
// usmbridge.build` (from the repository's python/ directory) and returns
// the project's Python.
func buildModule(t *testing.T, dir string, args ...string) string {
	t.Helper()
	py := os.Getenv("USMBRIDGE_PYTHON")
	if py == "" {
		testutil.Runtime(t, testutil.Python, errkind.New(errkind.NotAvailable, "extension", "USMBRIDGE_PYTHON is not set"))
	}
	if _, err := exec.LookPath("cc"); err != nil {
		testutil.Runtime(t, testutil.CCompiler, errkind.Wrap(errkind.NotAvailable, "extension", "no C compiler for cgo", err))
	}
	pkg, err := filepath.Abs("../python")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, append([]string{"-m", "usmbridge.build", "-o", dir}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python -m usmbridge.build %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return py
}

// TestExtmod runs test_extmod.py against extmod built by the command users
// run: pyext's contract (arguments, results, errors, panics, threads).
func TestExtmod(t *testing.T) {
	dir := t.TempDir()
	py := buildModule(t, dir, "extmod")
	cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "extmod/test_extmod.py")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("pytest: %v", err)
	}
}
