package saxpy_test

import (
	"testing"

	"github.com/usmbridge/usmbridge/examples/saxpy"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/pyext"
)

// The module's definition is valid: what `import saxpy` would report
// otherwise fails here first.
func TestModuleDefinition(t *testing.T) {
	if err := pyext.Check("saxpy", saxpy.Module); err != nil {
		t.Fatal(err)
	}
}

// TestPython builds the example with `python -m usmbridge.build` and runs
// its Python test (test_saxpy.py) with the project's Python: NumPy, dpnp,
// jax and tvm-ffi against it.
func TestPython(t *testing.T) {
	py := testutil.ModulePython(t)
	testutil.Imports(t, py, testutil.Dpctl, "pytest", "dpctl", "dpnp", "jax", "tvm_ffi")
	out := t.TempDir()
	testutil.BuildModule(t, py, out, ".")
	testutil.AllRan(t, testutil.Pytest(t, py, "", []string{"PYTHONPATH=" + out, "JAX_PLATFORMS=cpu"}, "test_saxpy.py"))
}
