package ext_test

import (
	"testing"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// pythonDir is the Python package's source tree (usmbridge/ and tests/),
// relative to this package.
const pythonDir = ".."

// TestPytest builds usmbridge._ext with `python -m usmbridge.build` (what
// setup.py runs) and runs the package's pytest suite with it.
func TestPytest(t *testing.T) {
	py, lib := buildExtension(t, "pytest")
	// buildExtension made sure dpctl and dpnp import, so a skip would hide
	// a runtime that is missing.
	testutil.AllRan(t, testutil.Pytest(t, py, pythonDir, []string{"USMBRIDGE_LIB=" + lib}, "-rs", "tests"))
}

// buildExtension checks that the project's Python can import what the
// Python tests need (dpctl, dpnp.tensor and the modules in need), builds
// the extension module into a temporary directory with the build command
// users run, and returns the Python and the library (USMBRIDGE_LIB).
func buildExtension(t *testing.T, need ...string) (py, lib string) {
	t.Helper()
	py = testutil.ModulePython(t)
	testutil.Imports(t, py, testutil.Dpctl, append(need, "dpctl", "dpnp.tensor")...)
	return py, testutil.BuildModule(t, py, t.TempDir(), ".", "--name", "usmbridge._ext")
}
