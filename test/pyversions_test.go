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
// with numpy, and with dpctl/dpnp where they ship wheels (withoutDpctl).
// scripts/setup-45-pyversions.sh makes the venvs of 3.10 to 3.13 from
// pyenv's builds, scripts/setup-46-sid.sh those of sidPythons.
var supportedPythons = []string{"3.10", "3.11", "3.12", "3.13", "3.14", "3.15"}

// sidPythons are the versions of the matrix that neither the host's Debian
// nor pyenv provides: scripts/setup-46-sid.sh makes their venvs in a
// minimal Debian sid root (USMBRIDGE_SID_ROOT, venvs listed in
// USMBRIDGE_SID_PYVERSIONS as paths inside it), and every command of
// theirs runs there through scripts/sid-run.sh, which shows the root this
// checkout, the temporary directory and the Go toolchain at their own
// paths. A missing one is the runtime testutil.SidPythons.
var sidPythons = []string{"3.14", "3.15"}

// withoutDpctl are the versions of the matrix that dpctl 0.22.1 and dpnp
// 0.20.0 (requirements-dpctl.txt) have no wheels for, so that their venvs
// have numpy but no dpctl stack (scripts/setup-46-sid.sh's dpctl_minors
// says the same). There the suite is a skip-free NumPy run: a test may
// skip only because it, or its module, could not import dpctl or dpnp
// (pytest.importorskip, reason "could not import 'dpctl...'") or an
// optional peer; every other test runs and must pass, and a skip for any
// other reason (a missing numpy, intel-opencl-rt, a device) fails. Some
// host-memory tests live in modules that import dpctl at the top
// (test_streams.py's NumPy stream rule) and so skip there too; 3.14 runs
// them with the same NumPy. Once dpctl ships wheels for a version, it
// leaves this list: the test fails while dpctl imports in a venv this
// list says has none.
var withoutDpctl = []string{"3.15"}

// optionalPeers are the modules whose tests may skip in a venv of the
// matrix: DLPack peers with no wheels for every version (jax has none for
// 3.10), which the project's .venv runs (TestPytest, TestWheel). A skip
// for any other reason, a missing dpctl or dpnp above all, fails, except
// for dpctl and dpnp on the versions of withoutDpctl (allowedSkips).
var optionalPeers = []string{"jax", "tvm_ffi"}

// allowedSkips are the modules whose failed import may skip tests on
// CPython minor.
func allowedSkips(minor string) []string {
	if slices.Contains(withoutDpctl, minor) {
		return append([]string{"dpctl", "dpnp"}, optionalPeers...)
	}
	return optionalPeers
}

// runner runs the programs of a venv: directly (nil), or with a prefix
// such as scripts/sid-run.sh, which runs them in the Debian sid root.
type runner []string

func (r runner) command(name string, args ...string) *exec.Cmd {
	if len(r) == 0 {
		return exec.Command(name, args...)
	}
	return exec.Command(r[0], append(append(r[1:len(r):len(r)], name), args...)...)
}

// run is runIn through r.
func (r runner) run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := r.command(name, args...)
	return runIn(t, dir, env, cmd.Path, cmd.Args[1:]...)
}

// TestPythonVersions installs the package with `pip install` of a clean
// copy of the source tree into each CPython of the support matrix and runs
// its pytest suite there with that interpreter, one version after the
// other. Each version's setup venv (numpy, pytest, and where they have
// wheels dpctl, dpnp and Intel's runtimes) is left as it is: the package
// goes into a new venv of the same interpreter that sees the setup venv's
// packages through a .pth file, and the tests find Intel's CPU device
// through that venv's own runtime (<venv>/opencl-vendors). The versions
// of sidPythons run in the Debian sid root, the same way.
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
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	type setup struct {
		venv string
		r    runner
	}
	venvs := map[string]setup{} // "3.12" -> the setup venv
	add := func(list string, r runner) {
		for _, venv := range filepath.SplitList(list) {
			out, err := r.command(filepath.Join(venv, "bin", "python"), "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
			if err != nil {
				t.Fatalf("%s names %s, whose python does not run: %v", strings.Join(r, " "), venv, err)
			}
			venvs[strings.TrimSpace(string(out))] = setup{venv, r}
		}
	}
	add(os.Getenv("USMBRIDGE_PYVERSIONS"), nil)
	if os.Getenv("USMBRIDGE_SID_ROOT") != "" {
		add(os.Getenv("USMBRIDGE_SID_PYVERSIONS"), runner{filepath.Join(root, "scripts", "sid-run.sh")})
	}
	for _, minor := range supportedPythons {
		t.Run(minor, func(t *testing.T) {
			s, ok := venvs[minor]
			if !ok {
				if slices.Contains(sidPythons, minor) {
					testutil.Runtime(t, testutil.SidPythons, errkind.New(errkind.NotAvailable, "pyversions",
						"no venv of CPython "+minor+" in USMBRIDGE_SID_PYVERSIONS, or no USMBRIDGE_SID_ROOT (scripts/setup-46-sid.sh could not make it)"))
				}
				testutil.Runtime(t, testutil.PyVersions, errkind.New(errkind.NotAvailable, "pyversions",
					"no venv of CPython "+minor+" in USMBRIDGE_PYVERSIONS (scripts/setup-45-pyversions.sh could not make it)"))
			}
			testPythonVersion(t, root, minor, s.venv, s.r)
		})
	}
}

func testPythonVersion(t *testing.T, root, minor, setupVenv string, r runner) {
	start := time.Now()
	tmp := t.TempDir()
	spy := filepath.Join(setupVenv, "bin", "python")
	if slices.Contains(withoutDpctl, minor) {
		// The NumPy run's skips are allowed because dpctl cannot be
		// installed here; once it is, they are not.
		if err := r.command(spy, "-c", "import dpctl").Run(); err == nil {
			t.Fatalf("dpctl imports in %s: take CPython %s out of withoutDpctl, so that its dpctl tests must run", setupVenv, minor)
		}
	}
	base := strings.TrimSpace(r.run(t, tmp, packageEnv(), spy, "-c",
		"import os, sys; print(os.path.join(sys.base_prefix, 'bin', 'python%d.%d' % sys.version_info[:2]))"))
	venv := filepath.Join(tmp, "venv")
	vpy := filepath.Join(venv, "bin", "python")
	r.run(t, tmp, packageEnv(), base, "-m", "venv", venv)
	// The setup venv's packages come after the new venv's own, so
	// usmbridge is the one pip installs here (wheelSmoke checks it).
	shared := strings.TrimSpace(r.run(t, tmp, packageEnv(), spy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
	own := strings.TrimSpace(r.run(t, tmp, packageEnv(), vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
	if err := os.WriteFile(filepath.Join(own, "zz-setup-venv.pth"), []byte(shared+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	src := sourceCopy(t, root)
	r.run(t, tmp, packageEnv("CGO_ENABLED=0"), vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check", src)
	built := time.Since(start)
	r.run(t, tmp, packageEnv(), vpy, "-c", wheelSmoke, venv)

	suite := filepath.Join(tmp, "suite", "tests")
	if err := os.CopyFS(suite, os.DirFS(filepath.Join(root, "python", "tests"))); err != nil {
		t.Fatal(err)
	}
	env := packageEnv("OCL_ICD_VENDORS=" + filepath.Join(setupVenv, "opencl-vendors"))
	out := r.run(t, filepath.Dir(suite), env, vpy, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests")
	if bad := skipsExcept(out, allowedSkips(minor)); len(bad) > 0 {
		t.Fatalf("pytest skipped tests that must run on CPython %s:\n%s\n\n%s", minor, strings.Join(bad, "\n"), out)
	}
	if skipped := skipsExcept(out, optionalPeers); len(skipped) > 0 {
		t.Logf("without dpctl and dpnp (withoutDpctl), these skipped:\n%s", strings.Join(skipped, "\n"))
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
	// A version without dpctl wheels may skip its dpctl and dpnp tests,
	// and nothing else; the others may not.
	for _, minor := range supportedPythons {
		want := 2 // the dpnp and intel-opencl-rt skips
		if slices.Contains(withoutDpctl, minor) {
			want = 1 // the intel-opencl-rt skip
		}
		if got := skipsExcept(out, allowedSkips(minor)); len(got) != want {
			t.Errorf("skipsExcept(allowedSkips(%s)) = %q, want %d skips", minor, got, want)
		}
	}
	if got := skipsExcept("SKIPPED [1] tests/test_array.py:9: could not import 'numpy': No module named 'numpy'\n", allowedSkips("3.15")); len(got) != 1 {
		t.Errorf("a NumPy run allowed a skip for a missing numpy: %q", got)
	}
	if got := pytestSummary(out); got != "5 passed, 7 skipped in 1.00s" {
		t.Errorf("pytestSummary = %q", got)
	}
}
