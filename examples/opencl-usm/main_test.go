package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

func TestOpenCLUSM(t *testing.T) {
	exe := testutil.BuildExample(t)
	out := testutil.RunExample(t, exe)
	if strings.Contains(out, "no OpenCL runtime here") {
		testutil.Runtime(t, testutil.PoCL, errkind.New(errkind.NotAvailable, "opencl-usm", out))
	}
	for _, want := range []string{
		"1. device opencl:cpu:",
		"2. 128 bytes of shared USM, filled with 42",
		"3. __sycl_usm_array_interface__: shape [4 8], typestr ", "i4, syclobj opencl:cpu:",
		"4. exported and imported: device (kDLOneAPI, ", ", USM kind shared, backend opencl, zero copy true",
		"5. data check: all 32 elements are 42: ok",
		"6. borrowed the native queue (waited: ok) and context; the context classifies the array as ",
	} {
		assert.Contains(t, out, want)
	}

	// Without a runtime it says so, and exits 0.
	out = testutil.RunExample(t, exe, "OCL_ICD_VENDORS="+t.TempDir(), "OCL_ICD_FILENAMES=")
	assert.Contains(t, out, "opencl-usm: no OpenCL runtime here, nothing to show:")
	assert.Contains(t, out, "CL_PLATFORM_NOT_FOUND_KHR")
}
