package test

import (
	"archive/zip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// wheelSmoke runs in the fresh venv, from a directory without the package
// source: usmbridge must come from that venv's site-packages, its extension
// module must sit there under Python's own EXT_SUFFIX name, and a numpy
// array must go through usmbridge and back without a copy.
const wheelSmoke = `
import os, sys, sysconfig
import numpy as np
import usmbridge, usmbridge._ext

venv = os.path.realpath(sys.argv[1])
where = os.path.realpath(os.path.dirname(usmbridge.__file__))
assert where.startswith(venv + os.sep), "usmbridge imported from %s, not from the venv %s" % (where, venv)
ext = os.path.join(where, "_ext" + sysconfig.get_config_var("EXT_SUFFIX"))
assert os.path.isfile(ext), "no extension module %s" % ext
assert usmbridge._ext.Array is usmbridge.Array

x = np.arange(12, dtype="f4").reshape(3, 4)[:, ::2]
a = usmbridge.from_dlpack(x)
assert a.shape == (3, 2) and a.dtype == "|f4" and a.data == x.ctypes.data, (a.shape, a.dtype)
y = np.from_dlpack(a)
assert np.shares_memory(x, y) and (y == x).all()
print("usmbridge from", where)
`

// TestWheel builds the Python package as a user would (python -m build:
// an sdist, then a wheel from it), installs the wheel into a new venv and
// imports it there with no PYTHONPATH and no USMBRIDGE_LIB; then it runs the
// package's pytest suite against that installed wheel. The build runs with
// CGO_ENABLED=0 in its environment, as `go test` in the default mode may
// export it: the build must turn cgo on by itself.
func TestWheel(t *testing.T) {
	py, root := packagingPython(t)
	tmp := t.TempDir()
	dist := filepath.Join(tmp, "dist")
	runIn(t, root, packageEnv("CGO_ENABLED=0"), py, "-m", "build", "--outdir", dist, root)
	wheels, _ := filepath.Glob(filepath.Join(dist, "*.whl"))
	if len(wheels) != 1 {
		t.Fatalf("python -m build made wheels %q, want one", wheels)
	}
	extSuffix := strings.TrimSpace(runIn(t, root, packageEnv(), py, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"))
	checkWheel(t, wheels[0], extSuffix)
	// The manylinux tag the wheel earns depends on the glibc it was built
	// against, so it is reported, not asserted.
	t.Log(runIn(t, tmp, packageEnv(), py, "-m", "auditwheel", "show", wheels[0]))

	venv := filepath.Join(tmp, "venv")
	vpy := filepath.Join(venv, "bin", "python")
	runIn(t, tmp, packageEnv(), py, "-m", "venv", venv)
	// numpy comes from PyPI (or pip's cache) at the version the project pins.
	runIn(t, tmp, packageEnv(), vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check",
		"-c", filepath.Join(root, "requirements-test.txt"), wheels[0])
	t.Log(runIn(t, tmp, packageEnv(), vpy, "-c", wheelSmoke, venv))

	t.Run("user module", func(t *testing.T) { userModule(t, root, tmp, dist, vpy) })

	t.Run("pytest", func(t *testing.T) {
		testutil.Imports(t, py, testutil.Dpctl, "pytest", "dpctl", "dpnp.tensor")
		// dpctl, dpnp and pytest are large: the venv sees the project's
		// through a .pth file, appended after its own site-packages, so
		// usmbridge still comes from the wheel (wheelSmoke checks it again).
		shared := strings.TrimSpace(runIn(t, tmp, packageEnv(), py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
		own := strings.TrimSpace(runIn(t, tmp, packageEnv(), vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
		if err := os.WriteFile(filepath.Join(own, "zz-project-venv.pth"), []byte(shared+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		runIn(t, tmp, packageEnv(), vpy, "-c", wheelSmoke, venv)
		// A copy of the tests, away from the package source their conftest
		// would put on sys.path.
		suite := filepath.Join(tmp, "suite", "tests")
		if err := os.CopyFS(suite, os.DirFS(filepath.Join(root, "python", "tests"))); err != nil {
			t.Fatal(err)
		}
		out := runIn(t, filepath.Dir(suite), packageEnv(), vpy, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests")
		t.Log(out)
		testutil.AllRan(t, out)
	})
}

// userModule builds a Go extension module as a user does, with the
// installed wheel and nothing of this checkout: examples/saxpy copied into
// a module of its own in a temporary directory (its go.mod requires
// github.com/usmbridge/usmbridge at a version no proxy has), built by
// `python -m usmbridge.build` with the Go module proxy off and an empty
// module cache, so everything of usmbridge's must come from the wheel; then
// the same package in a project of its own, built by `pip install .` with
// the setuptools hook, both ways docs/extensions.md says (no build
// isolation; an isolated build that finds the wheel with --find-links);
// and the package's Go test of its definition, through a replace to the
// Go source the wheel carries.
func userModule(t *testing.T, root, tmp, dist, vpy string) {
	mod := filepath.Join(tmp, "user", "saxpymod")
	if err := os.CopyFS(filepath.Join(mod, "saxpy"), os.DirFS(filepath.Join(root, "examples", "saxpy"))); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"saxpy_test.go", "test_saxpy.py"} {
		os.Remove(filepath.Join(mod, "saxpy", f))
	}
	gomod := "module example.com/saxpymod\n\ngo 1.25\n\nrequire github.com/usmbridge/usmbridge v0.9.0\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	offline := packageEnv("GOPROXY=off", "GOMODCACHE="+filepath.Join(tmp, "empty-modcache"), "GOSUMDB=off")
	out := filepath.Join(tmp, "user", "out")
	built := strings.TrimSpace(runIn(t, filepath.Join(tmp, "user"), offline, vpy, "-m", "usmbridge.build", mod+"/saxpy", "-o", out))
	if filepath.Dir(built) != out || !strings.HasPrefix(filepath.Base(built), "saxpy.") {
		t.Fatalf("usmbridge.build wrote %q", built)
	}
	smoke := `
import numpy as np, saxpy
x = np.ones(8, "f4"); y = np.arange(8, dtype="f4")
saxpy.saxpy(2.0, x, y)
assert y.tolist() == [2 + i for i in range(8)], y
assert np.asarray(saxpy.ramp(4)).tolist() == [0, 1, 2, 3]
print("saxpy works")
`
	t.Log(runIn(t, filepath.Join(tmp, "user"), packageEnv("PYTHONPATH="+out), vpy, "-c", smoke))

	// The setuptools hook, in a project of the user's.
	proj := filepath.Join(tmp, "user", "project")
	if err := os.CopyFS(filepath.Join(proj, "go", "saxpy"), os.DirFS(filepath.Join(mod, "saxpy"))); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		// The setup.py docs/extensions.md shows ("With pip"), as it shows it.
		"setup.py":       docBlockRunBy(t, "docs/extensions.md", "wheel_test.go"),
		"pyproject.toml": "[build-system]\nrequires = [\"setuptools>=70\", \"usmbridge\"]\nbuild-backend = \"setuptools.build_meta\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// No build isolation: the build environment is the venv, whose
	// usmbridge is the wheel, with the setuptools pyproject.toml pins (the
	// venv's own may predate bdist_wheel in setuptools).
	runIn(t, proj, packageEnv(), vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check", "setuptools==84.2.1")
	runIn(t, proj, offline, vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-build-isolation", ".")
	t.Log(runIn(t, tmp, packageEnv(), vpy, "-c", smoke))
	// The hook wrote the module's stub beside it, into the install.
	runIn(t, tmp, packageEnv(), vpy, "-c", "import os, saxpy; assert os.path.isfile(os.path.join(os.path.dirname(saxpy.__file__), 'saxpy.pyi'))")

	// An isolated build, which finds usmbridge in the wheel's directory
	// (and setuptools and numpy on the index).
	runIn(t, proj, offline, vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall",
		"--no-deps", "--find-links", dist, ".")
	t.Log(runIn(t, tmp, packageEnv(), vpy, "-c", smoke))

	// go test of the definition, offline, against the Go source the
	// installed package carries.
	test := "package saxpy_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/saxpymod/saxpy\"\n\t\"github.com/usmbridge/usmbridge/pyext\"\n)\n\n" +
		"func TestModuleDefinition(t *testing.T) {\n\tif err := pyext.Check(\"saxpy\", saxpy.Module); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(mod, "saxpy", "saxpy_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(runIn(t, tmp, packageEnv(), vpy, "-c", "import os, usmbridge; print(os.path.dirname(usmbridge.__file__))")), "_gosrc")
	runIn(t, mod, offline, "go", "mod", "edit", "-replace", "github.com/usmbridge/usmbridge="+filepath.Join(src, "usmbridge"),
		"-replace", "github.com/ebitengine/purego="+filepath.Join(src, "purego"),
		"-replace", "golang.org/x/text="+filepath.Join(src, "text"))
	t.Log(runIn(t, mod, append(offline, "CGO_ENABLED=0", "GOFLAGS=-mod=mod"), "go", "test", "-count=1", "./saxpy"))
}

// TestWheelManylinux228 builds the wheel as a release would,
// USMBRIDGE_GLIBC=2.28 python -m build --wheel (zig cc against glibc 2.28;
// the build backend fetches ziglang), and holds it to the tag it carries:
// auditwheel must find it consistent with a manylinux tag no newer than
// manylinux_2_28, the dpctl/oneAPI wheels' tag. Then it installs it into a
// new venv and runs the smoke test there.
func TestWheelManylinux228(t *testing.T) {
	py, root := packagingPython(t)
	tmp := t.TempDir()
	dist := filepath.Join(tmp, "dist")
	runIn(t, root, packageEnv("USMBRIDGE_GLIBC=2.28"), py, "-m", "build", "--wheel", "--outdir", dist, root)
	wheels, _ := filepath.Glob(filepath.Join(dist, "*-manylinux_2_28_*.whl"))
	if len(wheels) != 1 {
		all, _ := filepath.Glob(filepath.Join(dist, "*"))
		t.Fatalf("USMBRIDGE_GLIBC=2.28 made %q, want one manylinux_2_28 wheel", all)
	}
	extSuffix := strings.TrimSpace(runIn(t, root, packageEnv(), py, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"))
	checkWheel(t, wheels[0], extSuffix)
	show := runIn(t, tmp, packageEnv(), py, "-m", "auditwheel", "show", wheels[0])
	t.Log(show)
	m := regexp.MustCompile(`consistent\s+with the following platform tag:\s+"manylinux_2_(\d+)_`).FindStringSubmatch(show)
	if m == nil {
		t.Fatalf("auditwheel names no manylinux tag for %s", filepath.Base(wheels[0]))
	}
	if minor, _ := strconv.Atoi(m[1]); minor > 28 {
		t.Fatalf("the wheel is tagged manylinux_2_28 but needs glibc 2.%d", minor)
	}
	venv := filepath.Join(tmp, "venv")
	vpy := filepath.Join(venv, "bin", "python")
	runIn(t, tmp, packageEnv(), py, "-m", "venv", venv)
	runIn(t, tmp, packageEnv(), vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check",
		"-c", filepath.Join(root, "requirements-test.txt"), wheels[0])
	t.Log(runIn(t, tmp, packageEnv(), vpy, "-c", wheelSmoke, venv))
}

// TestWheelBuildNamesWhatIsMissing: without Go or a C compiler the build
// stops with a message that says what to install.
func TestWheelBuildNamesWhatIsMissing(t *testing.T) {
	py, root := packagingPython(t)
	// A PATH with Python's directory but not Go's.
	pyDir := filepath.Dir(py)
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"no go", []string{"PATH=" + pyDir + ":/nonexistent", "GO="}, "no `go` command was found"},
		{"no C compiler", []string{"CC=/nonexistent/cc"}, "cgo needs a C compiler"},
		{"bad USMBRIDGE_GLIBC", []string{"USMBRIDGE_GLIBC=latest"}, "expected a glibc version such as 2.28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(py, "-m", "build", "--wheel", "--outdir", t.TempDir(), root)
			cmd.Dir = root
			cmd.Env = packageEnv(tc.env...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the build succeeded with %q:\n%s", tc.env, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("the build failed without saying %q:\n%s", tc.want, out)
			}
		})
	}
}

// packagingPython returns the project's Python, which must have `build`
// (requirements-test.txt), and the repository root; it skips (or fails
// under USMBRIDGE_REQUIRE) when they or a C compiler are missing.
func packagingPython(t *testing.T) (py, root string) {
	t.Helper()
	py = testutil.ModulePython(t)
	testutil.Imports(t, py, testutil.Python, "build", "auditwheel", "venv")
	return py, testutil.ModuleRoot()
}

// checkWheel asserts that the wheel is platform-specific and holds the
// package, its py.typed marker and the extension module under extSuffix,
// and not the C header go build writes beside its output.
func checkWheel(t *testing.T, wheel, extSuffix string) {
	t.Helper()
	if strings.HasSuffix(wheel, "-none-any.whl") {
		t.Errorf("%s is a pure-Python wheel; the extension module makes it platform-specific", filepath.Base(wheel))
	}
	z, err := zip.OpenReader(wheel)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	have := map[string]bool{}
	for _, f := range z.File {
		have[f.Name] = true
		if strings.HasSuffix(f.Name, ".h") && !strings.Contains(f.Name, "/_gosrc/") {
			t.Errorf("the wheel holds the C header %s (go build writes one beside its output)", f.Name)
		}
		if strings.HasSuffix(f.Name, ".dist-info/WHEEL") {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "Root-Is-Purelib: false") {
				t.Errorf("%s says the wheel is pure:\n%s", f.Name, b)
			}
		}
	}
	for _, name := range []string{"usmbridge/__init__.py", "usmbridge/py.typed", "usmbridge/_ext" + extSuffix} {
		if !have[name] {
			t.Errorf("the wheel has no %s", name)
		}
	}
	st, _ := os.Stat(wheel)
	t.Logf("%s: %d bytes", filepath.Base(wheel), st.Size())
}

// packageEnv is the environment without anything that would find the
// package other than through its installation, plus extra.
func packageEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "USMBRIDGE_LIB", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV":
		default:
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// runIn runs name with args in dir and env and returns its output; a
// failure fails t with that output.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
