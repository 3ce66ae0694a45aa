package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

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
