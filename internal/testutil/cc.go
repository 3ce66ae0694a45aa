package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// CC returns the C compiler `go env CC` names (else $CC, else cc), split
// into words, for tests that build C fixtures. The error matches
// errkind.NotAvailable when no such compiler is installed; pass it to
// Runtime with CCompiler.
func CC() ([]string, error) {
	cc := ""
	if b, err := exec.Command("go", "env", "CC").Output(); err == nil {
		cc = strings.TrimSpace(string(b))
	}
	if cc == "" {
		cc = os.Getenv("CC")
	}
	if cc == "" {
		cc = "cc"
	}
	words := strings.Fields(cc)
	if _, err := exec.LookPath(words[0]); err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "testutil.CC", "no C compiler ("+cc+") to build test fixtures", err)
	}
	return words, nil
}

// BuildStubLibrary compiles a shared library that exports exactly funcs
// (functions that return 0) and vars (zeroed 1 KiB objects), for tests
// of what a symbol table requires, and returns its path. It skips or
// fails tb as Runtime does when there is no C compiler.
func BuildStubLibrary(tb testing.TB, funcs, vars []string) string {
	tb.Helper()
	return buildLibrary(tb, funcs, vars, nil)
}

// BuildFakeLibrary is BuildStubLibrary with the C files srcs compiled
// in (with cflags, e.g. -DNAME=VALUE): a fake of a native library whose
// stubs satisfy a symbol table while the functions under test, in srcs,
// check and record what they receive.
func BuildFakeLibrary(tb testing.TB, funcs []string, srcs []string, cflags ...string) string {
	tb.Helper()
	return buildLibrary(tb, funcs, nil, append(cflags, srcs...))
}

func buildLibrary(tb testing.TB, funcs, vars, extra []string) string {
	tb.Helper()
	cc, err := CC()
	Runtime(tb, CCompiler, err)
	dir := tb.TempDir()
	var src strings.Builder
	for _, f := range funcs {
		fmt.Fprintf(&src, "long %s(void) { return 0; }\n", f)
	}
	for _, v := range vars {
		fmt.Fprintf(&src, "char %s[1024];\n", v)
	}
	c := filepath.Join(dir, "stub.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, "libstub.so")
	args := append(cc[1:], "-fPIC", "-shared", "-o", out, c)
	args = append(args, extra...)
	if b, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		tb.Fatalf("building a stub library: %s %s: %v\n%s", cc[0], strings.Join(args, " "), err, b)
	}
	return out
}
