package levelzero

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/live"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
)

// How the tests are arranged
//
// zeInit is sticky: the loader decides once per process which drivers and
// layers it uses. Each loader configuration therefore runs in its own
// process. The process `go test` starts is the plain configuration:
// TestMain builds the fake driver (testdata/fakedriver) with `go env CC`
// and points ZE_ENABLE_ALT_DRIVERS at it before anything calls zeInit.
// TestLoaderConfigurations then re-executes this test binary with other
// environments: through the validation layer, with loader intercept
// (handle wrapping) and with no driver at all. A child knows its role
// from childEnv and, like the parent, ends with a leak check.

const (
	childEnv   = "USMBRIDGE_LZ_CHILD"    // configuration name in a child process
	devicesEnv = "FAKEZE_DEVICES"        // devices the fake driver reports (1..4)
	altEnv     = "ZE_ENABLE_ALT_DRIVERS" // the loader's driver list override
)

// Set by TestMain.
var (
	fakePath  string // the built fake driver, "" if it could not be built
	fakeErr   error  // why it could not be built
	needsFake bool   // this process is expected to run with the fake driver
)

func TestMain(m *testing.M) {
	code := run(m)
	os.Exit(code)
}

func run(m *testing.M) int {
	switch cfg := os.Getenv(childEnv); cfg {
	case "":
		dir, err := os.MkdirTemp("", "usmbridge-levelzero-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		fakePath, fakeErr = testutil.BuildFakeLevelZero(dir)
		needsFake = true
		if fakeErr == nil {
			// The plain configuration: only the fake, no layers, two
			// devices so selectors past the first one are exercised.
			os.Setenv(altEnv, fakePath)
			os.Setenv(devicesEnv, "2")
			for _, v := range []string{"ZE_ENABLE_VALIDATION_LAYER", "ZE_ENABLE_LOADER_INTERCEPT", "ZE_ENABLE_TRACING_LAYER"} {
				os.Unsetenv(v)
			}
		}
	case "nodriver", "nodriver-missing":
	default:
		fakePath, needsFake = os.Getenv(altEnv), true
	}
	code := m.Run()
	if code == 0 {
		if err := leakCheck(); err != nil {
			fmt.Fprintln(os.Stderr, "levelzero: LEAK CHECK FAILED:", err)
			return 99
		}
	}
	return code
}

// loaderErr reports whether the loader can be opened at all.
func loaderErr() error {
	if _, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, zeapi.Loader); err != nil {
		return errkind.Wrap(errkind.NotAvailable, "levelzero test", "no Level Zero loader (apt install libze1)", err)
	}
	return nil
}

// needDriver skips (or, under USMBRIDGE_REQUIRE, fails) when the loader or
// the compiler is missing, and fails when the fake driver was built but
// Level Zero did not come up with it.
func needDriver(t testing.TB) {
	t.Helper()
	if !needsFake {
		t.Skip("this process runs a no-driver configuration")
	}
	testutil.Runtime(t, testutil.LevelZero, loaderErr())
	if fakeErr != nil {
		if errors.Is(fakeErr, errkind.NotAvailable) && strings.Contains(fakeErr.Error(), "compiler") {
			testutil.Runtime(t, testutil.CCompiler, fakeErr)
		}
		testutil.Runtime(t, testutil.LevelZero, fakeErr)
	}
	if err := initialise(); err != nil {
		t.Fatalf("Level Zero did not initialise with the fake driver %s: %v", fakePath, err)
	}
}

// newBackend returns a backend that is closed when the test ends.
func newBackend(t testing.TB) *Backend {
	t.Helper()
	needDriver(t)
	b, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Backend.Close: %v", err)
		}
	})
	return b
}

// fakeStats is what the fake's zexFakeGetStats extension reports.
type fakeStats struct {
	Allocs, Contexts, Queues, Lists, Pools, Events, IPC, Modules, Kernels uint64
	LoaderVersion, ArmedFailures, Launches, ModuleCreates                 uint64
}

func (s fakeStats) objects() fakeStats {
	s.LoaderVersion, s.ArmedFailures, s.Launches, s.ModuleCreates = 0, 0, 0, 0
	return s
}

// The fake's extensions, typed: ze_result_t zexFakeGetStats(stats *),
// ze_result_t zexFakeFailNext(const char *name, ze_result_t code).
func fakeGetStats(fn ffi.Fn, s *fakeStats) Status {
	return Status(uint32(fn.Call(uintptr(unsafe.Pointer(s)))))
}

func fakeFailNext(fn ffi.Fn, name *byte, code Status) Status {
	return Status(uint32(fn.Call(uintptr(unsafe.Pointer(name)), uintptr(code))))
}

func readFake() (fakeStats, error) {
	fn, err := drivers[0].extensionFunction("zexFakeGetStats")
	if err != nil {
		return fakeStats{}, err
	}
	s := new(fakeStats)
	if r := fakeGetStats(fn, s); r != zeapi.Success {
		return fakeStats{}, &Error{Op: "zexFakeGetStats", Status: r}
	}
	return *s, nil
}

func mustFake(t testing.TB) fakeStats {
	t.Helper()
	s, err := readFake()
	if err != nil {
		t.Fatalf("reading the fake driver's stats: %v", err)
	}
	return s
}

// failNext makes the next call of the named entry point fail with r.
func failNext(t testing.TB, name string, r Status) {
	t.Helper()
	fn, err := drivers[0].extensionFunction("zexFakeFailNext")
	if err != nil {
		t.Fatal(err)
	}
	cname := append([]byte(name), 0)
	if s := fakeFailNext(fn, &cname[0], r); s != zeapi.Success {
		t.Fatal(&Error{Op: "zexFakeFailNext", Status: s})
	}
}

// leakCheck fails the process when objects outlive the tests: first this
// package's own counters, then the driver's view of the same objects.
func leakCheck() error {
	var leaks []string
	if l := live.Leaks(Live()); len(l) > 0 {
		leaks = append(leaks, fmt.Sprintf("live objects %v", l))
	}
	if api != nil && len(drivers) > 0 {
		s, err := readFake()
		if err != nil {
			return fmt.Errorf("cannot read the fake driver's stats: %w", err)
		}
		if o := s.objects(); o != (fakeStats{}) {
			leaks = append(leaks, fmt.Sprintf("driver still holds %+v", o))
		}
		if s.ArmedFailures != 0 {
			leaks = append(leaks, fmt.Sprintf("%d injected failures never triggered", s.ArmedFailures))
		}
	}
	if len(leaks) > 0 {
		return errors.New(strings.Join(leaks, ", "))
	}
	return nil
}
