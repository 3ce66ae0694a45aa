package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// PythonEnv names the project's Python (the interpreter of the venv the
// setup scripts make), which these tests run.
const PythonEnv = "USMBRIDGE_PYTHON"

// ProjectPython returns the project's Python, $USMBRIDGE_PYTHON. It skips
// or fails tb as Runtime does for Python when the variable is not set.
func ProjectPython(tb testing.TB) string {
	tb.Helper()
	py := os.Getenv(PythonEnv)
	if py == "" {
		Runtime(tb, Python, errkind.New(errkind.NotAvailable, "testutil.ProjectPython", PythonEnv+" is not set"))
	}
	return py
}

// ModulePython is ProjectPython for a test that builds a Go extension
// module: it also skips or fails tb as Runtime does for CCompiler when
// there is no C compiler for cgo (CC).
func ModulePython(tb testing.TB) string {
	tb.Helper()
	py := ProjectPython(tb)
	_, err := CC()
	Runtime(tb, CCompiler, err)
	return py
}

// Imports skips or fails tb as Runtime does for runtime when py cannot
// import every module of modules (the Python side of that runtime, or
// what the test runs with: pytest, mypy).
func Imports(tb testing.TB, py, runtime string, modules ...string) {
	tb.Helper()
	if err := exec.Command(py, "-c", "import "+strings.Join(modules, ", ")).Run(); err != nil {
		Runtime(tb, runtime, errkind.Wrap(errkind.NotAvailable, "testutil.Imports",
			strings.Join(modules, "/")+" not importable (the project's venv has them: requirements*.txt)", err))
	}
}

// BuildModule builds a Go extension module into dir with py -m
// usmbridge.build args... -o dir, the usmbridge package coming from this
// checkout's python/, and returns what the command printed: the module's
// path. A failed build fails tb with the command's output.
func BuildModule(tb testing.TB, py, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(py, append([]string{"-m", "usmbridge.build", "-o", dir}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(ModuleRoot(), "python"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("python -m usmbridge.build %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Pytest runs py -m pytest -q -p no:cacheprovider args... in dir (the
// test's own directory when empty) with env added to the test's
// environment, logs what pytest printed and returns it. A failed run fails
// tb.
func Pytest(tb testing.TB, py, dir string, env []string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(py, append([]string{"-m", "pytest", "-q", "-p", "no:cacheprovider"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	tb.Logf("%s", out)
	if err != nil {
		tb.Fatalf("pytest: %v", err)
	}
	return string(out)
}

// AllRan fails tb when pytest's output out reports a skipped test: for a
// run whose every peer (dpctl, dpnp, ...) is known to import, where a skip
// would hide one that is missing.
func AllRan(tb testing.TB, out string) {
	tb.Helper()
	if strings.Contains(out, "skipped") {
		tb.Fatal("pytest skipped tests although every peer they need imports")
	}
}
