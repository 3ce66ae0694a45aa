package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// ModuleRoot returns the directory holding usmbridge's go.mod, for tests
// that need a file of another package.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0) // .../internal/testutil/fakeze.go
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// BuildFakeLevelZero compiles levelzero/testdata/fakedriver, the Level
// Zero driver usmbridge's tests run on, into dir with CC against the
// installed headers, and returns the library's path for
// ZE_ENABLE_ALT_DRIVERS. The error matches errkind.NotAvailable when the
// headers (libze-dev) or a compiler are missing.
func BuildFakeLevelZero(dir string) (string, error) {
	if _, err := os.Stat("/usr/include/level_zero/ze_ddi.h"); err != nil {
		return "", errkind.Wrap(errkind.NotAvailable, "testutil.BuildFakeLevelZero", "Level Zero headers missing (apt install libze-dev)", err)
	}
	cc, err := CC()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "libfakeze.so")
	src := filepath.Join(ModuleRoot(), "levelzero", "testdata", "fakedriver", "fakeze.c")
	args := append(cc[1:], "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-fvisibility=hidden",
		"-o", out, src, "-lpthread")
	if b, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the fake driver: %s %s: %v\n%s", cc[0], strings.Join(args, " "), err, b)
	}
	return out, nil
}

// BuildExample builds the example program in the current directory (a
// test of package main runs there) and returns the executable's path.
func BuildExample(tb testing.TB) string {
	tb.Helper()
	exe := filepath.Join(tb.TempDir(), "example")
	// The test binary runs where it was built: its GOROOT is the toolchain's.
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", exe, ".") //nolint:staticcheck // SA1019, see above
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building the example: %v\n%s", err, out)
	}
	return exe
}

// RunExample runs an example built by BuildExample with env added to the
// test's environment (a later setting of a variable wins). It fails the
// test if the program exits with a non-zero status, and returns what the
// program printed.
func RunExample(tb testing.TB, exe string, env ...string) string {
	tb.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("the example failed: %v\n%s", err, out)
	}
	return string(out)
}
