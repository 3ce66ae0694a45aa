package linalg_test

import (
	"testing"

	"github.com/usmbridge/usmbridge/examples/linalg"
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
	py := testutil.ModulePython(t)
	testutil.Imports(t, py, testutil.Dpctl, "pytest", "dpctl", "dpnp")
	out := t.TempDir()
	testutil.BuildModule(t, py, out, ".")
	testutil.AllRan(t, testutil.Pytest(t, py, "", []string{"PYTHONPATH=" + out, "JAX_PLATFORMS=cpu"}, "test_linalg.py"))
}
