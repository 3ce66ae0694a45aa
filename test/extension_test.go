package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/test/extmod"
	"github.com/usmbridge/usmbridge/test/hostilemod"
)

func TestExtmodDefinition(t *testing.T) {
	if err := pyext.Check("extmod", extmod.Module); err != nil {
		t.Fatal(err)
	}
	if err := pyext.Check("hostilé", hostilemod.Module); err != nil {
		t.Fatal(err)
	}
}

// buildModule builds a Go extension module into dir with `python -m
// usmbridge.build args...` (testutil.BuildModule) and returns the
// project's Python.
func buildModule(t *testing.T, dir string, args ...string) string {
	t.Helper()
	py := testutil.ModulePython(t)
	testutil.BuildModule(t, py, dir, args...)
	return py
}

// TestExtmod runs extmod's Python tests against extmod built by the command
// users run: pyext's contract (arguments, results, errors, panics, threads;
// test_extmod.py), the lifecycle of kept and returned arguments against a
// model (test_lifecycle.py), the soundness cases of issue 28
// (test_soundness.py), and an argument's SUAI read by C and by Go held
// equal (test_suai_read.py).
func TestExtmod(t *testing.T) {
	dir := t.TempDir()
	py := buildModule(t, dir, "extmod")
	testutil.Pytest(t, py, "", []string{"PYTHONPATH=" + dir}, "extmod")
}

// TestTwoRuntimes loads two Go extension modules into one interpreter,
// usmbridge._ext and saxpy, each with its own Go runtime (Go does not
// promise that several coexist: golang/go#18976), and hammers them: two
// threads pass arrays across the two for 20,000 rounds each way while both
// runtimes collect garbage often (GOGC=5). It runs in a child process, so
// a runtime that breaks the other fails this test, not the run.
func TestTwoRuntimes(t *testing.T) {
	dir := t.TempDir()
	py := buildModule(t, dir, "../examples/saxpy")
	buildModule(t, dir, "--name", "usmbridge._ext", "../python/ext")
	lib, err := filepath.Glob(filepath.Join(dir, "_ext.*"))
	if err != nil || len(lib) != 1 {
		t.Fatalf("no usmbridge._ext built in %s: %v", dir, lib)
	}
	pkg, _ := filepath.Abs("../python")
	cmd := exec.Command(py, "runtimes.py")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir+string(os.PathListSeparator)+pkg, "USMBRIDGE_LIB="+lib[0], "GOGC=5")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("two runtimes: %v", err)
	}
	if !strings.Contains(string(out), "round trips each way") || !strings.Contains(string(out), "'panics': 0") {
		t.Fatal("the run did not finish cleanly")
	}
}

// A module whose definition has errors is refused at import with all of
// them (what pyext.Check reports): here a function named like the module's
// Array type and a class named like its ForkError (issue 29, item 7),
// which replaced them silently.
func TestDefinitionErrorsAtImport(t *testing.T) {
	src := t.TempDir()
	code := `package clash

import "github.com/usmbridge/usmbridge/pyext"

type plan struct{}

func Module(m *pyext.Module) error {
	pyext.Func0(m, "Array", "", func() error { return nil })
	pyext.NewClass[plan](m, "ForkError", "")
	return nil
}
`
	if err := os.WriteFile(filepath.Join(src, "clash.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	py := buildModule(t, dir, src)
	cmd := exec.Command(py, "-c", "import clash")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("import clash succeeded:\n%s", out)
	}
	for _, want := range []string{"ImportError: clash: function Array: the name is the module's Array type",
		"class ForkError: the name is the module's fork error"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the import did not say %q:\n%s", want, out)
		}
	}
}

// TestHostileNames builds test/hostilemod, the names, docs and defaults
// that pyext accepts and that once broke a module or its stub (issue 41),
// as the module "hostilé" with its stub: a non-ASCII module name, which
// CPython imports through PyInitU_ and the name's punycode (PEP 489). The
// module imports, help() renders it, inspect.signature reads every
// signature and the stub says what the module says (test_hostile.py);
// test/stubs_test.go holds the stub to mypy.
func TestHostileNames(t *testing.T) {
	dir := t.TempDir()
	py := buildModule(t, dir, "--stubs", "--name", "hostilé", "hostilemod")
	testutil.Pytest(t, py, "", []string{"PYTHONPATH=" + dir, "HOSTILE_STUB=" + filepath.Join(dir, "hostilé.pyi")}, "hostilemod")
}

// The build refuses a module name Python could not import as written (a
// keyword, a name Python reads as another), before it builds anything, and
// says why; pyext.Check refuses the same names (pyext/names_test.go holds
// usmbridge.build's rule and pyext's equal).
func TestModuleNamesRefused(t *testing.T) {
	py := testutil.ProjectPython(t)
	for name, want := range map[string]string{
		"class":      "module name 'class' is a Python keyword",
		"pkg.def":    "module name 'pkg.def' has a part 'def' that is a Python keyword",
		"\ufb01t":    "module name '\ufb01t' is not in the NFKC form to which Python normalizes the identifiers it reads (code that writes it names 'fit')",
		"a-b":        "module name 'a-b' is not a Python identifier",
		"pkg..saxpy": "has a part '' that is not a Python identifier",
	} {
		cmd := exec.Command(py, "-m", "usmbridge.build", "-o", t.TempDir(), "--name", name, "extmod")
		cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(testutil.ModuleRoot(), "python"))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("--name %q: %v, want a refusal saying %q:\n%s", name, err, want, out)
		}
		if err := pyext.Check(name, extmod.Module); err == nil {
			t.Errorf("pyext.Check accepted the module name %q", name)
		}
	}
}

// The build works whatever GOFLAGS, GOWORK and GO111MODULE the user's
// shell has, or `go env -w` wrote (issue 44: GOFLAGS=-mod=mod failed with
// "-mod may only be set to readonly or vendor when in workspace mode"): it
// builds in a workspace of its own, which decides -mod, and keeps the
// user's other flags. The module built imports and runs.
func TestBuildWhateverGoEnv(t *testing.T) {
	py := testutil.ModulePython(t)
	goenv := filepath.Join(t.TempDir(), "goenv")
	if err := os.WriteFile(goenv, []byte("GOFLAGS=-mod=vendor\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range [][]string{
		{"GOFLAGS=-mod=mod -tags=usmbridge_test", "GOWORK=off", "GO111MODULE=off"},
		{"GOFLAGS=", "GOENV=" + goenv},
		{"GOFLAGS=-modfile=/nonexistent/go.mod", "GOWORK=/nonexistent/go.work"},
	} {
		dir := t.TempDir()
		cmd := exec.Command(py, "-m", "usmbridge.build", "-o", dir, "../examples/saxpy")
		cmd.Env = append(os.Environ(), append(env, "PYTHONPATH="+filepath.Join(testutil.ModuleRoot(), "python"))...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("with %q: python -m usmbridge.build: %v\n%s", env, err, out)
		}
		cmd = exec.Command(py, "-c", "import numpy as np, saxpy; y = np.zeros(2, 'f4'); saxpy.saxpy(2.0, np.ones(2, 'f4'), y); assert y.tolist() == [2.0, 2.0]")
		cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("with %q: the module built does not run: %v\n%s", env, err, out)
		}
	}
}
