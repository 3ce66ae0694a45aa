package main

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/pybridge"
)

// TestMain runs the examples (example_test.go) only where they can run,
// or where USMBRIDGE_REQUIRE makes a missing runtime a failure: all of
// them need Python with numpy, Example_dpctl dpctl as well. Once the SYCL
// runtime is loaded the process ends with exit_group directly: under
// -race, os.Exit would run the static destructors of Intel's runtimes
// while their threads are alive (pybridge's TestMain says more).
func TestMain(m *testing.M) {
	py, err := embedWithNumpy()
	testutil.SkipExamples("^Example", err, testutil.Python)
	if err == nil {
		_, err = py.Dpctl()
	}
	if err == nil {
		err = py.Do(func(g *pybridge.GIL) error {
			if err := g.Exec("import dpnp, dpctl\ndpctl.SyclDevice('opencl:cpu')"); err != nil {
				return errkind.Wrap(errkind.NotAvailable, "python-interop", "dpnp / an opencl:cpu device", err)
			}
			return nil
		})
	}
	dpctlLoaded := err == nil
	testutil.SkipExamples("^Example_dpctl$", err, testutil.Dpctl)
	code := m.Run()
	if dpctlLoaded {
		os.Stdout.Sync()
		syscall.Exit(code)
	}
	os.Exit(code)
}

// embedWithNumpy embeds $USMBRIDGE_PYTHON and imports numpy in it.
func embedWithNumpy() (*pybridge.Python, error) {
	if os.Getenv("USMBRIDGE_PYTHON") == "" {
		return nil, errkind.New(errkind.NotAvailable, "python-interop", "USMBRIDGE_PYTHON is not set (scripts/setup-40-python.sh prints it)")
	}
	py, err := pybridge.Embed("")
	if err != nil {
		return nil, err
	}
	err = py.Do(func(g *pybridge.GIL) error {
		if err := g.Exec("import numpy"); err != nil {
			return errkind.Wrap(errkind.NotAvailable, "python-interop", "numpy", err)
		}
		return nil
	})
	return py, err
}

func TestPythonInterop(t *testing.T) {
	if os.Getenv("USMBRIDGE_PYTHON") == "" {
		testutil.Runtime(t, testutil.Dpctl, errkind.New(errkind.NotAvailable, "python-interop", "USMBRIDGE_PYTHON is not set (scripts/setup-40-python.sh prints it)"))
	}
	out := testutil.RunExample(t, testutil.BuildExample(t))
	for _, want := range []string{
		"1. embedded Python 3.",
		"2. dpctl 0.22",
		"3. made x = dpt.arange(6).reshape(2, 3) on opencl:cpu",
		"shape [2 3], dtype float32, device USM, DLPack device (kDLOneAPI, ",
		"5. exported to a \"dltensor_versioned\" capsule on (kDLCPU, 0) (a host copy of device USM)",
		"6. numpy.from_dlpack: array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)",
	} {
		assert.Contains(t, out, want)
	}
}
