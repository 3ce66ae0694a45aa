package test

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSdist builds the source distribution from a clean copy of the tree
// (python -m build --sdist) and holds it to MANIFEST.in's promises: no
// manifest warning in the build's output, no Go test files, no testdata.
// Then it installs the package from the sdist into a new venv, which builds
// the extension module from the sdist's files alone: a Go, C or header file
// the build needs that MANIFEST.in leaves out fails the install. There the
// package's pytest suite runs with the package's own dependencies (numpy,
// no dpctl), as a plain `pip install usmbridge` leaves it: the SYCL tests
// must skip, everything else must pass.
func TestSdist(t *testing.T) {
	if raceEnabled {
		t.Skip("runs without -race only: it tests other processes")
	}
	py, root := packagingPython(t)
	tmp := t.TempDir()
	dist := filepath.Join(tmp, "dist")
	log := runIn(t, root, packageEnv(), py, "-m", "build", "--sdist", "--outdir", dist, sourceCopy(t, root))
	if w := regexp.MustCompile(`(?m)^warning: .*$`).FindAllString(log, -1); w != nil {
		t.Errorf("building the sdist warned (MANIFEST.in):\n%s", strings.Join(w, "\n"))
	}
	sdists, _ := filepath.Glob(filepath.Join(dist, "*.tar.gz"))
	if len(sdists) != 1 {
		t.Fatalf("python -m build --sdist made %q, want one .tar.gz", sdists)
	}
	names := sdistNames(t, sdists[0])
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || slices.Contains(strings.Split(name, "/"), "testdata") {
			t.Errorf("the sdist ships %s, which only tests need", name)
		}
	}
	for _, want := range []string{"go.mod", "go.sum", "setup.py", "pyproject.toml"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, "/"+want) && strings.Count(n, "/") == 1 }) {
			t.Errorf("the sdist has no %s at its top", want)
		}
	}
	st, _ := os.Stat(sdists[0])
	t.Logf("%s: %d files, %d bytes", filepath.Base(sdists[0]), len(names), st.Size())

	venv := filepath.Join(tmp, "venv")
	vpy := filepath.Join(venv, "bin", "python")
	runIn(t, tmp, packageEnv(), py, "-m", "venv", venv)
	runIn(t, tmp, packageEnv("CGO_ENABLED=0"), vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check",
		"-c", filepath.Join(root, "requirements-test.txt"), "-c", filepath.Join(root, "requirements-dpctl.txt"),
		sdists[0], "pytest", "hypothesis")
	t.Log(runIn(t, tmp, packageEnv(), vpy, "-c", wheelSmoke, venv))
	if exec.Command(vpy, "-c", "import dpctl").Run() == nil {
		t.Fatal("dpctl imports in the new venv, which has only the package's own dependencies")
	}

	suite := filepath.Join(tmp, "suite", "tests")
	if err := os.CopyFS(suite, os.DirFS(filepath.Join(root, "python", "tests"))); err != nil {
		t.Fatal(err)
	}
	out := runIn(t, filepath.Dir(suite), packageEnv(), vpy, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests")
	if bad := skipsExcept(out, append([]string{"dpctl", "dpnp"}, optionalPeers...)); len(bad) > 0 {
		t.Errorf("pytest skipped tests for a reason other than a missing dpctl, dpnp or optional peer:\n%s", strings.Join(bad, "\n"))
	}
	if !strings.Contains(out, "could not import 'dpctl'") {
		t.Errorf("no test skipped for want of dpctl in a venv without it:\n%s", out)
	}
	t.Logf("numpy only: %s", pytestSummary(out))
}

// sdistNames lists the files of a .tar.gz.
func sdistNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := tar.NewReader(z)
	var names []string
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			names = append(names, h.Name)
		}
	}
}
