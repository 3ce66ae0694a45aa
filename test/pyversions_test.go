package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// supportedPythons is the CPython support matrix README.md states ("What
// runs where"; TestDocsSupportMatrix holds the two together): on each,
// `pip install .` builds the package and its whole pytest suite passes
// with numpy and with dpctl/dpnp.
// scripts/setup-45-pyversions.sh makes the venvs from pyenv's builds.
var supportedPythons = []string{"3.10", "3.11", "3.12", "3.13"}

// optionalPeers are the modules whose tests may skip in a venv of the
// matrix: DLPack peers with no wheels for every version (jax has none for
// 3.10), which the project's .venv runs (TestPytest, TestWheel). A skip
// for any other reason, a missing dpctl or dpnp above all, fails.
var optionalPeers = []string{"jax", "tvm_ffi"}

// TestPythonVersions installs the package with `pip install` of a clean
// copy of the source tree into each CPython of the support matrix and runs
// its pytest suite there with that interpreter, one version after the
// other. Each version's venv of scripts/setup-45-pyversions.sh (numpy,
// pytest, dpctl, dpnp, Intel's runtimes) is left as it is: the package
// goes into a new venv of the same interpreter that sees the setup venv's
// packages through a .pth file, and the tests find Intel's CPU device
// through that venv's own runtime (<venv>/opencl-vendors).
func TestPythonVersions(t *testing.T) {
	if raceEnabled {
		// Everything it checks runs in other processes (pip, go build,
		// pytest), which the race detector does not see; CI runs it in the
		// CGO_ENABLED=0 pass (scripts/test.sh).
		t.Skip("runs without -race only: it tests other processes")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		testutil.Runtime(t, testutil.CCompiler, errkind.Wrap(errkind.NotAvailable, "pyversions", "no C compiler for -buildmode=c-shared", err))
	}
	list := os.Getenv("USMBRIDGE_PYVERSIONS")
	if list == "" {
		testutil.Runtime(t, testutil.PyVersions, errkind.New(errkind.NotAvailable, "pyversions",
			"USMBRIDGE_PYVERSIONS is not set (scripts/setup-45-pyversions.sh prints it)"))
	}
	venvs := map[string]string{} // "3.12" -> the setup venv
	for _, venv := range filepath.SplitList(list) {
		out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
		if err != nil {
			t.Fatalf("USMBRIDGE_PYVERSIONS names %s, whose python does not run: %v", venv, err)
		}
		venvs[strings.TrimSpace(string(out))] = venv
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, minor := range supportedPythons {
		t.Run(minor, func(t *testing.T) {
			venv, ok := venvs[minor]
			if !ok {
				testutil.Runtime(t, testutil.PyVersions, errkind.New(errkind.NotAvailable, "pyversions",
					"no venv of CPython "+minor+" in USMBRIDGE_PYVERSIONS (scripts/setup-45-pyversions.sh could not make it)"))
			}
			testPythonVersion(t, root, venv)
		})
	}
}

func testPythonVersion(t *testing.T, root, setupVenv string) {
	start := time.Now()
	tmp := t.TempDir()
	spy := filepath.Join(setupVenv, "bin", "python")
	base := strings.TrimSpace(runIn(t, tmp, packageEnv(), spy, "-c",
		"import os, sys; print(os.path.join(sys.base_prefix, 'bin', 'python%d.%d' % sys.version_info[:2]))"))
	venv := filepath.Join(tmp, "venv")
	vpy := filepath.Join(venv, "bin", "python")
	runIn(t, tmp, packageEnv(), base, "-m", "venv", venv)
	// The setup venv's packages come after the new venv's own, so
	// usmbridge is the one pip installs here (wheelSmoke checks it).
	shared := strings.TrimSpace(runIn(t, tmp, packageEnv(), spy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
	own := strings.TrimSpace(runIn(t, tmp, packageEnv(), vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
	if err := os.WriteFile(filepath.Join(own, "zz-setup-venv.pth"), []byte(shared+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	src := sourceCopy(t, root)
	runIn(t, tmp, packageEnv("CGO_ENABLED=0"), vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check", src)
	built := time.Since(start)
	runIn(t, tmp, packageEnv(), vpy, "-c", wheelSmoke, venv)

	suite := filepath.Join(tmp, "suite", "tests")
	if err := os.CopyFS(suite, os.DirFS(filepath.Join(root, "python", "tests"))); err != nil {
		t.Fatal(err)
	}
	env := packageEnv("OCL_ICD_VENDORS=" + filepath.Join(setupVenv, "opencl-vendors"))
	out := runIn(t, filepath.Dir(suite), env, vpy, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests")
	if bad := skipsExcept(out, optionalPeers); len(bad) > 0 {
		t.Fatalf("pytest skipped tests that must run on every supported CPython:\n%s\n\n%s", strings.Join(bad, "\n"), out)
	}
	t.Logf("%s: installed in %.0fs; %s (%.0fs in all)", base, built.Seconds(), pytestSummary(out), time.Since(start).Seconds())
}

var (
	skipLine   = regexp.MustCompile(`(?m)^SKIPPED \[\d+\] \S+: (.*)$`)
	importSkip = regexp.MustCompile(`^could not import '([\w.]+)'`)
	summary    = regexp.MustCompile(`(?m)^=*\s*(\d+ passed.*?)\s*=*$`)
)

// skipsExcept returns the skip lines of pytest -rs output whose reason is
// not a failed import of one of modules (or of a submodule of one).
func skipsExcept(out string, modules []string) []string {
	var bad []string
	for _, m := range skipLine.FindAllStringSubmatch(out, -1) {
		imp := importSkip.FindStringSubmatch(m[1])
		if imp == nil || !slices.Contains(modules, strings.Split(imp[1], ".")[0]) {
			bad = append(bad, m[0])
		}
	}
	return bad
}

// pytestSummary is pytest's closing "N passed, M skipped in Xs", or "" .
func pytestSummary(out string) string {
	if m := summary.FindAllStringSubmatch(out, -1); m != nil {
		return m[len(m)-1][1]
	}
	return ""
}

// sourceCopy copies the source tree as git sees it (tracked files and
// untracked ones .gitignore does not exclude; regular files only, so
// neither a .venv link nor a local build comes along) into a new
// directory and returns it: `pip install <dir>` builds inside the tree it
// is given (build/, *.egg-info), so each install gets a tree of its own.
func sourceCopy(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	dst := filepath.Join(t.TempDir(), "src")
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		from := filepath.Join(root, name)
		st, err := os.Lstat(from)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// The skip rule of TestPythonVersions and TestSdist on pytest -rs output:
// a missing optional peer passes, anything else is reported.
func TestSkipsExcept(t *testing.T) {
	out := `....s
=========================== short test summary info ============================
SKIPPED [1] tests/test_jax.py:19: could not import 'jax': No module named 'jax'
SKIPPED [1] tests/test_exchange.py:16: could not import 'tvm_ffi': No module named 'tvm_ffi'
SKIPPED [4] tests/conformance/test_numpy_dlpack.py:102: could not import 'dpnp.tensor': No module named 'dpnp'
SKIPPED [1] tests/test_main.py:99: intel-opencl-rt (Intel's CPU OpenCL runtime from PyPI) is not installed
======================== 5 passed, 7 skipped in 1.00s =========================
`
	got := skipsExcept(out, optionalPeers)
	want := []string{
		"SKIPPED [4] tests/conformance/test_numpy_dlpack.py:102: could not import 'dpnp.tensor': No module named 'dpnp'",
		"SKIPPED [1] tests/test_main.py:99: intel-opencl-rt (Intel's CPU OpenCL runtime from PyPI) is not installed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("skipsExcept(optional peers) = %q, want %q", got, want)
	}
	if got := skipsExcept(out, append([]string{"dpnp"}, optionalPeers...)); len(got) != 1 {
		t.Errorf("with dpnp optional: %q, want only the intel-opencl-rt skip", got)
	}
	if got := pytestSummary(out); got != "5 passed, 7 skipped in 1.00s" {
		t.Errorf("pytestSummary = %q", got)
	}
}
