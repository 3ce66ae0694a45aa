package opencl_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/usm"
)

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		s        opencl.Status
		text     string
		kind     error
		notKinds []error
	}{
		{opencl.InvalidValue, "opencl: CL_INVALID_VALUE (-30)", usm.ErrValue, []error{usm.ErrMemory, usm.ErrNotAvailable}},
		{opencl.InvalidBufferSize, "opencl: CL_INVALID_BUFFER_SIZE (-61)", usm.ErrValue, nil},
		{opencl.OutOfHostMemory, "opencl: CL_OUT_OF_HOST_MEMORY (-6)", usm.ErrMemory, []error{usm.ErrValue}},
		{opencl.PlatformNotFoundKHR, "opencl: CL_PLATFORM_NOT_FOUND_KHR (-1001)", usm.ErrNotAvailable, []error{usm.ErrValue}},
		{opencl.InvalidCommandQueue, "opencl: CL_INVALID_COMMAND_QUEUE (-36)", nil, []error{usm.ErrValue, usm.ErrMemory}},
		{opencl.Status(-9999), "opencl: status -9999", nil, []error{usm.ErrValue}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			assert.Equal(t, tc.text, tc.s.Error())
			wrapped := fmt.Errorf("context: %w", &opencl.Error{Op: "clX", Status: tc.s})
			assert.ErrorIs(t, wrapped, tc.s, "a status is comparable through wrapping")
			if tc.kind != nil {
				assert.ErrorIs(t, wrapped, tc.kind)
			}
			for _, k := range tc.notKinds {
				assert.NotErrorIs(t, wrapped, k)
			}
			var s opencl.Status
			assert.True(t, errors.As(wrapped, &s))
			assert.Equal(t, tc.s, s)
		})
	}
}

// A missing loader is "runtime not available" (skipped locally, failure in
// CI), and the error names every library tried.
func TestMissingLoader(t *testing.T) {
	_, err := opencl.OpenLib("libOpenCL-usmbridge-missing.so.1", "libalso-missing.so.7")
	assert.ErrorIs(t, err, usm.ErrNotAvailable)
	assert.ErrorContains(t, err, "libOpenCL-usmbridge-missing.so.1")
	assert.ErrorContains(t, err, "libalso-missing.so.7")
	// A library that loads but is no OpenCL loader lacks the entry points.
	_, err = opencl.OpenLib("libc.so.6")
	assert.ErrorIs(t, err, usm.ErrNotAvailable)
	assert.ErrorContains(t, err, "clGetPlatformIDs")
}
