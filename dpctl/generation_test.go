package dpctl_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/dpctl/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// What dpctl/testdata/fakesyclinterface's C defines; the rest of a fake
// library's exports are stubs.
var fakeDefined = []string{
	"DPCTLKernelBundle_CreateFromSpirv", "DPCTLDeviceMgr_GetDevices", "DPCTLDeviceVector_Size",
	"DPCTLDeviceVector_GetAt", "DPCTLDeviceMgr_GetCachedContext", "DPCTLQueue_CreateForDevice",
	"DPCTLQueue_GetContext", "DPCTLQueue_GetDevice", "DPCTLContext_GetBackend",
}

// fakeDpctl builds a libDPCTLSyclInterface.so that exports exports, with
// one device and CreateFromSpirv of generation gen ("22" or "23"), loads
// it as dpctl's Python package would, and returns the directory to Open
// and the library.
func fakeDpctl(t *testing.T, exports []string, gen string) (string, *ffi.Lib) {
	t.Helper()
	src := filepath.Join(testutil.ModuleRoot(), "dpctl", "testdata", "fakesyclinterface")
	stubs := slices.DeleteFunc(slices.Clone(exports), func(n string) bool { return slices.Contains(fakeDefined, n) })
	path := testutil.BuildFakeLibrary(t, stubs,
		[]string{filepath.Join(src, "createfromspirv.c"), filepath.Join(src, "device.c")}, "-std=c11", "-Wall", "-Wextra", "-Werror", "-DFAKE_GEN="+gen)
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, path)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(path, filepath.Join(dir, "libDPCTLSyclInterface.so")))
	return dir, lib
}

func fakeFn(t *testing.T, lib *ffi.Lib, name string) ffi.Fn {
	t.Helper()
	f, err := lib.Lookup(name)
	require.NoError(t, err)
	return f
}

// The backend builds SPIR-V through a library of either generation it
// knows, calling CreateFromSpirv with that generation's arguments (0.23:
// no specialization constants, 0 and NULL), and refuses a library of an
// unknown one before calling it, with an error saying why: Open, Queue
// and BuildProgram as a program calls them, on a fake library
// (dpctl/testdata/fakesyclinterface).
func TestBuildProgramByGeneration(t *testing.T) {
	spv := testutil.SPIRV(t)
	newer := append(dpctlapi.Gen023.Exports(), "DPCTLQueue_FutureCall")
	for _, c := range []struct {
		name, gen string
		exports   []string
		params    int // 0: refused
	}{
		{name: "0.23", gen: "23", exports: dpctlapi.Gen023.Exports(), params: 7},
		{name: "0.22", gen: "22", exports: dpctlapi.Gen022.Exports(), params: 5},
		{name: "newer than 0.23", gen: "23", exports: newer},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, lib := fakeDpctl(t, c.exports, c.gen)
			b, err := dpctl.Open(dir)
			require.NoError(t, err)
			q, err := b.Queue(0)
			require.NoError(t, err)
			p, err := usm.BuildProgram(q, usm.ProgramSource{SPIRV: spv})
			calls := int(int32(fakeFn(t, lib, "fake_spirv_calls").Call0()))
			if c.params == 0 {
				require.ErrorIs(t, err, usm.ErrNotSupported)
				assert.Nil(t, p)
				for _, w := range []string{"DPCTLKernelBundle_CreateFromSpirv", "exports DPCTLQueue_FutureCall, which dpctl 0.23 has not", "builds no SPIR-V through it"} {
					assert.Contains(t, err.Error(), w)
				}
				assert.Zero(t, calls)
				return
			}
			require.NoError(t, err)
			defer p.Close()
			require.Equal(t, 1, calls)
			require.Equal(t, c.params, int(int32(fakeFn(t, lib, "fake_spirv_params").Call0())))
			args := *(*[7]uintptr)(cmem.Ptr(fakeFn(t, lib, "fake_spirv_args").Call0()))
			assert.Equal(t, uintptr(fakeFn(t, lib, "fake_context")), args[0], "Ctx")
			assert.Equal(t, uintptr(fakeFn(t, lib, "fake_device")), args[1], "Dev")
			assert.Equal(t, spv, cmem.Bytes(args[2], args[3]), "IL, Length")
			assert.Equal(t, byte(0), *(*byte)(cmem.Ptr(args[4])), "CompileOpts: empty")
			if c.params == 7 {
				assert.Equal(t, [2]uintptr{0, 0}, [2]uintptr{args[5], args[6]}, "NumSpecConsts, SpecConsts")
			}
		})
	}
}
