package rolling_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/usmbridge/usmbridge/examples/rolling"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/pyext"
)

// The module's definition is valid: what `import rolling` would report
// otherwise fails here first.
func TestModuleDefinition(t *testing.T) {
	if err := pyext.Check("rolling", rolling.Module); err != nil {
		t.Fatal(err)
	}
}

// TestPython builds the example with its stub and runs its Python test
// (test_rolling.py: values against NumPy, on the host and, with dpnp, on a
// SYCL device), then holds the stub to mypy --strict: a user script
// (use_rolling.py) type-checks, and its one deliberate mistake is the one
// error mypy reports.
func TestPython(t *testing.T) {
	py := testutil.ModulePython(t)
	testutil.Imports(t, py, testutil.Dpctl, "pytest", "dpctl", "dpnp", "mypy")
	out := t.TempDir()
	testutil.BuildModule(t, py, out, "--stubs", ".")
	testutil.AllRan(t, testutil.Pytest(t, py, "", []string{"PYTHONPATH=" + out}, "test_rolling.py"))

	cmd := exec.Command(py, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", filepath.Join(out, "mypy-cache"), "use_rolling.py")
	cmd.Env = append(os.Environ(), "MYPYPATH="+out)
	got, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("mypy accepted use_rolling.py, whose last line is a type error:\n%s", got)
	}
	errs := regexp.MustCompile(`(?m)^use_rolling\.py:(\d+): error: (.*)$`).FindAllStringSubmatch(string(got), -1)
	if len(errs) != 1 || !regexp.MustCompile(`"push" of "Window" has incompatible type "float"`).MatchString(errs[0][2]) {
		t.Fatalf("mypy did not report exactly the deliberate error of use_rolling.py:\n%s", got)
	}
}
