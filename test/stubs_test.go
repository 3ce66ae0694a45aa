package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// TestStubs builds examples/saxpy, examples/linalg, test/extmod
// (modules with classes) and test/hostilemod (as hostilé: names that
// shadow what a stub imports, members named like types; issue 41)
// with `python -m usmbridge.build --stubs` and holds their stubs to mypy
// --strict (pinned in requirements-test.txt): the stubs themselves and the
// users in test/stubs type-check, and each line of the bad_*.py users is
// refused, so a stub that typed everything Any would fail (issue 29,
// item 6).
func TestStubs(t *testing.T) {
	testutil.Imports(t, testutil.ProjectPython(t), testutil.Python, "mypy")
	dir := t.TempDir()
	py := buildModule(t, dir, "--stubs", "../examples/saxpy")
	buildModule(t, dir, "--stubs", "extmod")
	buildModule(t, dir, "--stubs", "../examples/linalg")
	buildModule(t, dir, "--stubs", "--name", "hostilé", "hostilemod")
	stubs, _ := filepath.Glob(filepath.Join(dir, "*.pyi"))
	if len(stubs) != 4 {
		t.Fatalf("the builds wrote stubs %q, want saxpy.pyi, extmod.pyi, linalg.pyi and hostilé.pyi", stubs)
	}
	here, err := filepath.Abs("stubs")
	if err != nil {
		t.Fatal(err)
	}
	mypy := func(files ...string) (string, error) {
		args := append([]string{"-m", "mypy", "--strict", "--no-incremental", "--cache-dir", filepath.Join(dir, "mypy-cache")}, files...)
		cmd := exec.Command(py, args...)
		cmd.Dir = here
		cmd.Env = append(os.Environ(), "MYPYPATH="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := mypy(append([]string{"use_saxpy.py", "use_extmod.py", "use_linalg.py", "use_hostile.py"}, stubs...)...); err != nil {
		t.Fatalf("mypy refused the stubs or their users: %v\n%s", err, out)
	}
	errLine := regexp.MustCompile(`(?m)^(bad_\w+\.py):(\d+): error:`)
	for _, bad := range []string{"bad_saxpy.py", "bad_extmod.py", "bad_linalg.py", "bad_hostile.py"} {
		out, err := mypy(bad)
		if err == nil {
			t.Errorf("mypy accepted %s:\n%s", bad, out)
			continue
		}
		src, _ := os.ReadFile(filepath.Join(here, bad))
		want := map[string]bool{}
		for i, line := range strings.Split(string(src), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "import") {
				want[bad+":"+strconv.Itoa(i+1)] = true
			}
		}
		got := map[string]bool{}
		for _, m := range errLine.FindAllStringSubmatch(out, -1) {
			got[m[1]+":"+m[2]] = true
		}
		for line := range want {
			if !got[line] {
				t.Errorf("mypy did not refuse %s:\n%s", line, out)
			}
		}
	}
}
