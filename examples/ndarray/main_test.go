package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// The program docs/go.md leads to: a device picked by its Device value,
// arrays that own their memory, a kernel over a range rounded up to
// work-groups, gonum reading the result in place and dpnp taking it
// without a copy. It needs Intel's OpenCL runtime and Python with dpnp
// (the project's .venv); without them it says which is missing.
func TestNDArray(t *testing.T) {
	exe := testutil.BuildExample(t)
	out := testutil.RunExample(t, exe)
	if strings.Contains(out, "a runtime is missing") {
		for _, rt := range []string{testutil.Python, testutil.Dpctl, testutil.IntelOpenCL} {
			testutil.Runtime(t, rt, errkind.New(errkind.NotAvailable, "ndarray", out))
		}
	}
	for _, want := range []string{
		`(Intel(R) OpenCL): vendor "Intel(R) Corporation", USM [host device shared], SVM false, OpenCL C true, SPIR-V true`,
		`   using opencl:cpu:`,
		"2. x [1000] and y [10 100] of shared USM on opencl:cpu:",
		"3. saxpy y = 2x + y over 1024 items in 16 work-groups of 64",
		"4. gonum: sum of y 1000000, y[9, 99] 1999; y[:, 98] - y[:, 99] = -2, from y's memory: true",
		"5. dpnp: dpnp_array (10, 100) on ", ", same memory: True, sum 1000000",
		"   Go reads dpnp's write: y[0, 0] = -1",
		"6. closed: y's view refuses (ValueError, usm.ErrClosed: true)",
	} {
		assert.Contains(t, out, want)
	}
	if testutil.Required(testutil.PoCL) {
		// Both runtimes listed, told apart by their Device values.
		assert.Regexp(t, `\(Portable Computing Language\): vendor "[^"]+", USM \[host device shared\], SVM true, OpenCL C true, SPIR-V false`, out)
	}
}
