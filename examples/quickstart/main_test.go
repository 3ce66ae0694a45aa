package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// README's tour for Go (`go run ./examples/quickstart`): the quickstart runs, verifies its data and
// leaks nothing, on OpenCL where a runtime is installed and on the host
// backend where none is.
func TestQuickstart(t *testing.T) {
	exe := testutil.BuildExample(t)
	out := testutil.RunExample(t, exe)
	if testutil.Required(testutil.PoCL) || testutil.Required(testutil.IntelOpenCL) {
		assert.Contains(t, out, "1. backend: opencl — OpenCL device ")
		assert.Contains(t, out, "shared USM of \"opencl:cpu:")
		assert.Contains(t, out, "bytes of shared USM at")
	}
	assert.Contains(t, out, "data verified")
	assert.Contains(t, out, "same pointer: true")
	assert.Contains(t, out, "6. released: live exports 0, live imports 0, C blocks 0")

	// With no OpenCL platform (an empty vendor directory) the host
	// backend serves it.
	out = testutil.RunExample(t, exe, "OCL_ICD_VENDORS="+t.TempDir(), "OCL_ICD_FILENAMES=")
	assert.Contains(t, out, "1. backend: host — no OpenCL runtime")
	assert.Contains(t, out, "bytes of host memory (not USM)")
	assert.Contains(t, out, "3. no __sycl_usm_array_interface__ (__sycl_usm_array_interface__: the array is not USM (it lives on ")
	assert.NotContains(t, out, "host:host:0", "no dict a SYCL consumer could not read")
	assert.Contains(t, out, "data verified")
	assert.Contains(t, out, "6. released: live exports 0, live imports 0, C blocks 0")
}
