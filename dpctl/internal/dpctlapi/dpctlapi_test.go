package dpctlapi

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// called is what package dpctl calls of dpctl's C library, written out here
// independently of Load's table. Device selectors and
// DPCTLDeviceMgr_GetPositionInDevices are not in it: nothing calls them.
var called = []string{
	"DPCTLQueue_Create", "DPCTLQueue_CreateForDevice", "DPCTLQueue_Copy", "DPCTLQueue_Delete",
	"DPCTLQueue_GetContext", "DPCTLQueue_GetDevice", "DPCTLQueue_SubmitBarrier", "DPCTLQueue_Memcpy",
	"DPCTLEvent_Wait", "DPCTLEvent_Delete", "DPCTLUSM_GetPointerType", "DPCTLUSM_GetPointerDevice",
	"DPCTLmalloc_shared", "DPCTLmalloc_device", "DPCTLmalloc_host", "DPCTLfree_with_queue",
	"DPCTLContext_AreEq", "DPCTLContext_Delete", "DPCTLContext_GetDevices", "DPCTLDevice_HasAspect",
	"DPCTLDevice_Delete", "DPCTLDevice_GetParentDevice", "DPCTLDevice_GetPlatform", "DPCTLDevice_AreEq",
	"DPCTLDevice_GetBackend", "DPCTLDevice_GetDeviceType", "DPCTLDevice_GetName", "DPCTLCString_Delete",
	"DPCTLPlatform_GetDefaultContext", "DPCTLPlatform_Delete", "DPCTLDeviceMgr_GetDevices",
	"DPCTLDeviceMgr_GetCachedContext", "DPCTLDeviceVector_Size", "DPCTLDeviceVector_GetAt",
	"DPCTLDeviceVector_Delete",
}

// The route to native contexts, used only for allocation extents.
var native = []string{"DPCTLContext_GetBackend", symContextGetNative}

// A dpctl library lacking functions nobody calls still loads; one lacking
// the optional native route loads without it; the missing required ones
// are named all at once.
func TestLoadRequiresOnlyWhatIsCalled(t *testing.T) {
	for _, c := range []struct {
		name    string
		funcs   []string
		native  bool
		missing []string // nil: loads
	}{
		{name: "called and native", funcs: slices.Concat(called, native), native: true},
		{name: "called only", funcs: called},
		{name: "half the native route", funcs: slices.Concat(called, native[:1])},
		{
			name: "two required missing",
			funcs: slices.DeleteFunc(slices.Clone(called), func(n string) bool {
				return n == "DPCTLQueue_Memcpy" || n == "DPCTLDeviceVector_Delete"
			}),
			missing: []string{"DPCTLQueue_Memcpy", "DPCTLDeviceVector_Delete"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := testutil.BuildStubLibrary(t, c.funcs, nil)
			lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, path)
			require.NoError(t, err)
			a, err := Load(lib)
			if c.missing == nil {
				require.NoError(t, err)
				assert.Equal(t, path, a.Path())
				assert.Equal(t, c.native, a.Native().Present())
				return
			}
			var ms *ffi.MissingSymbolsError
			require.True(t, errors.As(err, &ms), "%v", err)
			assert.Equal(t, c.missing, ms.Symbols)
			assert.ErrorIs(t, err, errkind.NotAvailable)
		})
	}
}

// Open takes only a library that is loaded already (dpctl's instance).
func TestOpenOnlyLoaded(t *testing.T) {
	path := testutil.BuildStubLibrary(t, called, nil)
	_, err := Open(path)
	var le *ffi.LibraryError
	require.True(t, errors.As(err, &le), "%v", err)
	_, err = ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, path)
	require.NoError(t, err)
	a, err := Open(path)
	require.NoError(t, err)
	assert.False(t, a.Native().Present())
}
