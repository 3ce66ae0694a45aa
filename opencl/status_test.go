package opencl

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		s        Status
		text     string
		kind     error
		notKinds []error
	}{
		{clapi.InvalidValue, "opencl: CL_INVALID_VALUE (-30)", usm.ErrValue, []error{usm.ErrMemory, usm.ErrNotAvailable}},
		{InvalidBufferSize, "opencl: CL_INVALID_BUFFER_SIZE (-61)", usm.ErrValue, nil},
		{OutOfHostMemory, "opencl: CL_OUT_OF_HOST_MEMORY (-6)", usm.ErrMemory, []error{usm.ErrValue}},
		{PlatformNotFoundKHR, "opencl: CL_PLATFORM_NOT_FOUND_KHR (-1001)", usm.ErrNotAvailable, []error{usm.ErrValue}},
		{clapi.InvalidCommandQueue, "opencl: CL_INVALID_COMMAND_QUEUE (-36)", nil, []error{usm.ErrValue, usm.ErrMemory}},
		{Status(-9999), "opencl: status -9999", nil, []error{usm.ErrValue}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			assert.Equal(t, tc.text, tc.s.Error())
			wrapped := fmt.Errorf("context: %w", &Error{Op: "clX", Status: tc.s})
			assert.ErrorIs(t, wrapped, tc.s, "a status is comparable through wrapping")
			if tc.kind != nil {
				assert.ErrorIs(t, wrapped, tc.kind)
			}
			for _, k := range tc.notKinds {
				assert.NotErrorIs(t, wrapped, k)
			}
			var s Status
			assert.True(t, errors.As(wrapped, &s))
			assert.Equal(t, tc.s, s)
		})
	}
}

// A missing loader is "runtime not available" (skipped locally, failure in
// CI), and the error names every library tried.
func TestMissingLoader(t *testing.T) {
	_, err := openLib("libOpenCL-usmbridge-missing.so.1", "libalso-missing.so.7")
	assert.ErrorIs(t, err, usm.ErrNotAvailable)
	assert.ErrorContains(t, err, "libOpenCL-usmbridge-missing.so.1")
	assert.ErrorContains(t, err, "libalso-missing.so.7")
	// A library that loads but is no OpenCL loader lacks the entry points.
	_, err = openLib("libc.so.6")
	assert.ErrorIs(t, err, usm.ErrNotAvailable)
	var ms *ffi.MissingSymbolsError
	require.True(t, errors.As(err, &ms), "%v", err)
	assert.Contains(t, ms.Symbols, "clGetPlatformIDs")
	assert.Contains(t, ms.Symbols, "clFinish", "every missing entry point is named, not just the first")
	assert.NotContains(t, ms.Symbols, "clSVMAlloc", "optional entry points are not required")
}
