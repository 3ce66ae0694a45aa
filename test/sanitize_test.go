package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// sanitizerReport is what AddressSanitizer, UndefinedBehaviorSanitizer and
// the C half's GIL check (UBX_ABORT_WITHOUT_GIL) print when they find
// something, and what pyapi's errcheck build prints for a C API call
// without the GIL or with an exception pending.
var sanitizerReport = regexp.MustCompile(`ERROR: AddressSanitizer|runtime error:|called without the GIL|usmbridge_errcheck:`)

// TestSanitized builds usmbridge._ext and extmod with AddressSanitizer on
// both halves (Go with -asan, the C half with -fsanitize=address) and
// UndefinedBehaviorSanitizer on the C half, with the C half aborting on a
// Python call without the GIL and pyapi checking every call's thread state
// (the usmbridge_errcheck tag), and runs the Python suite and extmod's
// tests (the lifecycle state machine, the soundness cases) under them.
// Instrumenting C alone misses a read of freed memory by Go; this is what
// a use-after-free or a heap overflow of a kept view fails
// (RATIONALE.md, "One owner per reference").
func TestSanitized(t *testing.T) {
	if raceEnabled {
		t.Skip("runs without -race only: it tests other processes") // and -asan and -race do not mix
	}
	py := testutil.ProjectPython(t)
	cc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Runtime(t, testutil.CCompiler, errkind.Wrap(errkind.NotAvailable, "sanitize", "no gcc for the sanitizer runtimes", err))
	}
	out, err := exec.Command(cc, "-print-file-name=libasan.so").Output()
	asan := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(asan) {
		testutil.Runtime(t, testutil.CCompiler, errkind.New(errkind.NotAvailable, "sanitize", "gcc has no libasan.so"))
	}
	if err := exec.Command(py, "-c", "import dpctl, dpnp.tensor, hypothesis").Run(); err != nil {
		testutil.Runtime(t, testutil.Dpctl, errkind.Wrap(errkind.NotAvailable, "sanitize", "dpctl/dpnp/hypothesis not importable", err))
	}
	dir := t.TempDir()
	pkg, _ := filepath.Abs("../python")
	build := func(args ...string) {
		cmd := exec.Command(py, append([]string{"-m", "usmbridge.build", "-o", dir, "--no-strip"}, args...)...)
		cmd.Dir = pkg
		cmd.Env = append(os.Environ(), "PYTHONPATH="+pkg, "CC=gcc", "GOFLAGS=-asan -tags=usmbridge_errcheck",
			"CGO_CFLAGS=-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -DUBX_ABORT_WITHOUT_GIL",
			"CGO_LDFLAGS=-fsanitize=address,undefined")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sanitized build %v: %v\n%s", args, err, b)
		}
	}
	build("--name", "usmbridge._ext", "../python/ext")
	build("../test/extmod")
	lib, err := filepath.Glob(filepath.Join(dir, "_ext.*.so"))
	if err != nil || len(lib) != 1 {
		t.Fatalf("no sanitized usmbridge._ext in %s: %v", dir, lib)
	}
	env := append(os.Environ(), "LD_PRELOAD="+asan, "USMBRIDGE_LIB="+lib[0],
		// CPython keeps objects alive at exit on purpose (leaks are the
		// leak tests' business); Go installs its own SIGSEGV handler.
		"ASAN_OPTIONS=detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:abort_on_error=1",
		"UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1",
		"USMBRIDGE_LIFECYCLE_EXAMPLES=25")
	run := func(name, wd string, extraEnv []string, args ...string) {
		cmd := exec.Command(py, append([]string{"-m", "pytest", "-q", "-p", "no:cacheprovider"}, args...)...)
		cmd.Dir = wd
		cmd.Env = append(append([]string(nil), env...), extraEnv...)
		b, err := cmd.CombinedOutput()
		t.Logf("%s:\n%s", name, tail(string(b), 40))
		if m := sanitizerReport.FindString(string(b)); m != "" {
			t.Errorf("%s: the sanitizers reported %q (full output above)", name, m)
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The Python suite, but for what cannot run with libasan preloaded
	// (RATIONALE.md, "Sanitizers on both halves"): jaxlib exits silently,
	// and the fork cases expect a child to die by a signal the preload
	// turns into exit 1; Intel's OpenCL runtime named by OCL_ICD_FILENAMES
	// alone finds no device in a child with the preload; and dpnp's own
	// kernels (dpnp.ones(4) + y) compute garbage under it, so the tests
	// that combine results with dpnp arithmetic run in the plain runs only.
	// (By name with -k: --deselect takes node ids relative to pytest's
	// rootdir, which is not the directory it runs in, and deselected
	// nothing.)
	run("python suite", pkg, nil, "tests", "--ignore=tests/test_jax.py", "--ignore=tests/test_fork.py",
		"-k", "not test_hidden_runtime_gets_the_line_that_brings_it and not test_from_dlpack_binds_to_the_queue_named")
	run("extmod", filepath.Join(pkg, "..", "test"), []string{"PYTHONPATH=" + dir}, "extmod",
		"-k", "not test_results_on_the_callers_queue and not test_a_queue_as_the_device")
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
