package levelzero

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// loaderConfig is one way of starting the loader, run in a child process.
type loaderConfig struct {
	name string
	env  []string // added to the parent's environment
	run  string   // -test.run pattern
	// mayNotPass lists tests allowed to skip in this configuration.
	maySkip []string
}

func TestLoaderConfigurations(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("runs in the parent process only")
	}
	needDriver(t) // the same prerequisites as the plain configuration
	all := "."
	configs := []loaderConfig{
		{
			// Every driver test again, through the loader's validation
			// layer with its parameter and handle-lifetime checks on.
			name: "validation",
			env: []string{altEnv + "=" + fakePath, devicesEnv + "=2", "ZE_ENABLE_VALIDATION_LAYER=1",
				"ZE_ENABLE_PARAMETER_VALIDATION=1", "ZE_ENABLE_HANDLE_LIFETIME=1"},
			run: all, maySkip: []string{"TestNoDriverChild"},
		},
		{
			// The loader wraps every handle in its own objects, as it does
			// whenever more than one driver is installed.
			name: "intercept",
			env:  []string{altEnv + "=" + fakePath, devicesEnv + "=1", "ZE_ENABLE_LOADER_INTERCEPT=1"},
			run:  all, maySkip: []string{"TestNoDriverChild"},
		},
		{
			// The real no-driver path: nothing tells the loader about the
			// fake, so it finds only what is installed (normally nothing).
			name: "nodriver", run: "^TestNoDriverChild$",
		},
		{
			// A driver list naming a file that does not exist: no driver
			// even on a machine with an Intel GPU.
			name: "nodriver-missing",
			env:  []string{altEnv + "=/nonexistent/usmbridge/libze_nothing.so"},
			run:  "^TestNoDriverChild$",
		},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			env := []string{childEnv + "=" + c.name}
			for _, kv := range os.Environ() {
				// The child's loader settings come from the config only.
				if strings.HasPrefix(kv, "ZE_") || strings.HasPrefix(kv, "FAKEZE_") || strings.HasPrefix(kv, childEnv+"=") {
					continue
				}
				env = append(env, kv)
			}
			env = append(env, c.env...)
			cmd := exec.Command(os.Args[0], "-test.run="+c.run, "-test.skip=^TestLoaderConfigurations$",
				"-test.count=1", "-test.v", "-test.timeout=5m")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			text := string(out)
			if err != nil {
				t.Fatalf("child %q failed (%v):\n%s", c.name, err, text)
			}
			passed := regexp.MustCompile(`(?m)^--- PASS: (\S+)`).FindAllStringSubmatch(text, -1)
			skipped := regexp.MustCompile(`(?m)^--- SKIP: (\S+)`).FindAllStringSubmatch(text, -1)
			for _, s := range skipped {
				ok := false
				for _, m := range c.maySkip {
					ok = ok || s[1] == m
				}
				// A machine with a real driver cannot show the
				// no-driver path without hiding its driver.
				if c.name == "nodriver" && strings.Contains(text, "a Level Zero driver is installed") {
					ok = true
				}
				if !ok {
					t.Errorf("child %q skipped %s:\n%s", c.name, s[1], text)
				}
			}
			if len(passed) == 0 {
				t.Fatalf("child %q ran no test:\n%s", c.name, text)
			}
			t.Logf("child %q: %d top-level tests passed, %d skipped", c.name, len(passed), len(skipped))
			if testing.Verbose() {
				t.Log(text)
			}
		})
	}
}

// TestNoDriverChild is the no-driver path: Init's error is the typed
// "runtime not available" error, names zeInit and the code, and stays the
// same on every call, as the loader's own result does.
func TestNoDriverChild(t *testing.T) {
	cfg := os.Getenv(childEnv)
	if cfg != "nodriver" && cfg != "nodriver-missing" {
		t.Skip("runs in the no-driver child processes of TestLoaderConfigurations")
	}
	requireLoader(t)
	err := initialise()
	if err == nil {
		if cfg == "nodriver" {
			t.Skipf("a Level Zero driver is installed (%d drivers); the no-driver path cannot be shown here", len(drivers))
		}
		t.Fatalf("Init succeeded with %s=%s", altEnv, os.Getenv(altEnv))
	}
	if !errors.Is(err, errkind.NotAvailable) || !errors.Is(err, usm.ErrNotAvailable) {
		t.Fatalf("Init error %v does not match usm.ErrNotAvailable", err)
	}
	var ze *Error
	if !errors.As(err, &ze) || ze.Op != "zeInit" || ze.Status != ErrorUninitialized {
		t.Fatalf("Init error %#v: want *Error{Op: zeInit, Status: ZE_RESULT_ERROR_UNINITIALIZED}", err)
	}
	for _, want := range []string{"zeInit", "ZE_RESULT_ERROR_UNINITIALIZED", "0x78000001"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if err2 := initialise(); err2 != err { //nolint:errorlint // the very same cached value
		t.Errorf("second Init returned %v, want the cached %v", err2, err)
	}
	if _, err := New(); !errors.Is(err, usm.ErrNotAvailable) {
		t.Errorf("New without a driver: %v, want ErrNotAvailable", err)
	}
	if _, err := UnsafeBorrowContext(1); !errors.Is(err, usm.ErrNotAvailable) {
		t.Errorf("UnsafeBorrowContext without a driver: %v, want ErrNotAvailable", err)
	}
	if api != nil || drivers != nil {
		t.Errorf("a failed initialisation left the loader table or drivers behind")
	}
}

func requireLoader(t *testing.T) {
	t.Helper()
	if err := loaderErr(); err != nil {
		// The loader itself is missing: that is the other not-available
		// path; Init must say so with the same error kind.
		if e := initialise(); !errors.Is(e, usm.ErrNotAvailable) {
			t.Fatalf("Init without a loader: %v, want ErrNotAvailable", e)
		}
		testutil.Runtime(t, testutil.LevelZero, err) // skips locally, fails where required
		t.Fatalf("loaderErr is not a not-available error: %v", err)
	}
}
