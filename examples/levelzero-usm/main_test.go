package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// The example runs on the fake driver the levelzero tests use, through the
// real loader, and says what is missing when there is no driver.
func TestLevelZeroUSM(t *testing.T) {
	_, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, "libze_loader.so.1")
	testutil.Runtime(t, testutil.LevelZero, err)
	fake, err := testutil.BuildFakeLevelZero(t.TempDir())
	if err != nil && strings.Contains(err.Error(), "compiler") {
		testutil.Runtime(t, testutil.CCompiler, err)
	}
	testutil.Runtime(t, testutil.LevelZero, err)
	exe := testutil.BuildExample(t)
	quiet := []string{"ZE_ENABLE_VALIDATION_LAYER=", "ZE_ENABLE_LOADER_INTERCEPT=", "ZE_ENABLE_TRACING_LAYER="}

	out := testutil.RunExample(t, exe, append(quiet, "ZE_ENABLE_ALT_DRIVERS="+fake, "FAKEZE_DEVICES=1")...)
	for _, want := range []string{
		`1. Level Zero devices: [level_zero:gpu "usmbridge fake GPU 0"]`,
		"2. 64 bytes of shared USM; the driver says base+8 is shared USM on device 0, in an allocation of 64 bytes at offset 8",
		"3. __sycl_usm_array_interface__: shape [8], typestr ", "f8, syclobj level_zero:gpu:0",
		"4. DLPack 1.", "tensor on (kDLOneAPI, 0), shape [8], dtype float64, same memory: true",
		"5. IPC: 64-byte handle opened, same data: true",
		"6. borrowed the native context and immediate command list: waited, and the context classifies the array as shared USM",
	} {
		assert.Contains(t, out, want)
	}

	out = testutil.RunExample(t, exe, append(quiet, "ZE_ENABLE_ALT_DRIVERS=/nonexistent/usmbridge/libze_nothing.so")...)
	assert.Contains(t, out, "No Level Zero driver is available")
	assert.Contains(t, out, "ZE_RESULT_ERROR_UNINITIALIZED")
}
