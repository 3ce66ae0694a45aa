package dpctlapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

const symCreateFromSpirv = "DPCTLKernelBundle_CreateFromSpirv"

// A name no dpctl release exports, standing for a release newer than 0.23.
const futureFunc = "DPCTLQueue_FutureCall"

// The generations' sets are sorted (generationOf compares and searches
// them), hold no name twice, and differ as the lists of changes say.
func TestGenerationSets(t *testing.T) {
	for name, s := range map[string][]string{"0.22": exports022, "0.23": exports023, "added": added023, "removed": removed023} {
		assert.True(t, slices.IsSorted(s), name)
		assert.Equal(t, len(s), len(slices.Compact(slices.Clone(s))), name)
	}
	assert.Equal(t, added023, difference(exports023, exports022))
	assert.Equal(t, removed023, difference(exports022, exports023))
	// Every function package dpctl calls is in both.
	for _, n := range slices.Concat(called, []string{"DPCTLContext_GetBackend", symCreateFromSpirv,
		"DPCTLKernelBundle_CreateFromOCLSource", "DPCTLQueue_SubmitRange", "DPCTLQueue_SubmitNDRange",
		"DPCTLQueue_SubmitBarrierForEvents", "DPCTLQueue_AreEq", "DPCTLQueue_IsInOrder"}) {
		assert.Contains(t, exports022, n)
		assert.Contains(t, exports023, n)
	}
}

// A generation is an exact C API: a name of neither generation, or one a
// generation has that the library lacks, makes it unknown, and the reason
// names them against the nearest generation.
func TestGenerationOf(t *testing.T) {
	without := func(s []string, drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(s), func(n string) bool { return slices.Contains(drop, n) })
	}
	with := func(s []string, add ...string) []string {
		s = append(slices.Clone(s), add...)
		slices.Sort(s)
		return s
	}
	for _, c := range []struct {
		name    string
		exports []string
		gen     Generation
		why     []string // substrings of the reason
	}{
		{name: "0.22", exports: exports022, gen: Gen022},
		{name: "0.23", exports: exports023, gen: Gen023},
		{name: "newer than 0.23", exports: with(exports023, futureFunc), why: []string{"exports " + futureFunc + ", which dpctl 0.23 has not"}},
		{name: "newer than 0.22", exports: with(exports022, futureFunc), why: []string{"exports " + futureFunc + ", which dpctl 0.22 has not"}},
		{name: "0.23 lacking one both have", exports: without(exports023, "DPCTLQueue_Memset"), why: []string{"lacks DPCTLQueue_Memset of dpctl 0.23"}},
		{name: "0.22 lacking one both have", exports: without(exports022, "DPCTLQueue_Memset"), why: []string{"lacks DPCTLQueue_Memset of dpctl 0.22"}},
		{
			name:    "between the two",
			exports: with(exports022, "DPCTLQueue_CopyData", "DPCTLQueue_CopyDataWithEvents"),
			why:     []string{"lacks DPCTLBuildOptionList_Append", "of dpctl 0.23", "exports DPCTLDevice_GetSubGroupIndependentForwardProgress"},
		},
		{name: "none", exports: nil, why: []string{"lacks DPCTLAcceleratorSelector_Create", "and 192 more of dpctl 0.22"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gen, why := generationOf(c.exports)
			assert.Equal(t, c.gen, gen)
			if c.gen != GenUnknown {
				assert.Empty(t, why)
				return
			}
			for _, w := range c.why {
				assert.Contains(t, why, w)
			}
		})
	}
}

// The dpctl the project's Python has (0.22.1, requirements-dpctl.txt) is
// of generation 0.22: its library's exports are exports022, exactly.
func TestGenerationOfInstalledDpctl(t *testing.T) {
	lib := installedLibrary(t)
	exports, err := capiExports(lib)
	require.NoError(t, err)
	gen, why := generationOf(exports)
	assert.Equal(t, Gen022, gen, "%s: %s", lib, why)
}

// installedLibrary returns the libDPCTLSyclInterface.so of the dpctl the
// project's Python would import, found without importing it.
func installedLibrary(t *testing.T) string {
	t.Helper()
	py := os.Getenv(testutil.PythonEnv)
	if py == "" {
		testutil.Runtime(t, testutil.Dpctl, errkind.New(errkind.NotAvailable, "test", testutil.PythonEnv+" is not set"))
	}
	out, err := exec.Command(py, "-c", "import importlib.util as u; s = u.find_spec('dpctl'); print(s.submodule_search_locations[0] if s else '')").Output()
	require.NoError(t, err)
	dir := strings.TrimSpace(string(out))
	libs, _ := filepath.Glob(filepath.Join(dir, "libDPCTLSyclInterface.so*"))
	if dir == "" || len(libs) == 0 {
		testutil.Runtime(t, testutil.Dpctl, errkind.New(errkind.NotAvailable, "test", py+" has no dpctl"))
	}
	return libs[0]
}

// fakeLibrary builds a libDPCTLSyclInterface exporting exports: stubs,
// but for CreateFromSpirv with the signature of dpctl generation gen (22
// or 23; dpctl/testdata/fakesyclinterface/createfromspirv.c), and opens it.
func fakeLibrary(t *testing.T, exports []string, gen string) (*ffi.Lib, *API) {
	t.Helper()
	stubs := slices.DeleteFunc(slices.Clone(exports), func(n string) bool { return n == symCreateFromSpirv })
	src := filepath.Join(testutil.ModuleRoot(), "dpctl", "testdata", "fakesyclinterface", "createfromspirv.c")
	path := testutil.BuildFakeLibrary(t, stubs, []string{src}, "-std=c11", "-Wall", "-Wextra", "-Werror", "-DFAKE_GEN="+gen)
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, path)
	require.NoError(t, err)
	a, err := Load(lib)
	require.NoError(t, err)
	require.True(t, a.Kernels().Present())
	return lib, a
}

// fakeCall returns what the fake's CreateFromSpirv received: how many
// calls, how many parameters it declares, and the last call's arguments.
func fakeCall(t *testing.T, lib *ffi.Lib) (calls, params int, args [7]uintptr) {
	t.Helper()
	fn := func(name string) ffi.Fn {
		f, err := lib.Lookup(name)
		require.NoError(t, err)
		return f
	}
	calls, params = int(int32(fn("fake_spirv_calls").Call0())), int(int32(fn("fake_spirv_params").Call0()))
	args = *(*[7]uintptr)(cmem.Ptr(fn("fake_spirv_args").Call0()))
	return calls, params, args
}

// Each generation's library gets CreateFromSpirv with its own signature:
// 0.23's seven arguments in order, no specialization constants (0 and
// NULL), and 0.22's five; the bundle it returns is the result.
func TestBundleFromSpirvSignature(t *testing.T) {
	il := []byte{0x03, 0x02, 0x23, 0x07, 1, 2, 3, 4}
	opts := []byte("-cl-fast-relaxed-math\x00")
	const ctx, dev = uintptr(0xc0c0), uintptr(0xd0d0)
	for _, c := range []struct {
		name, gen string
		exports   []string
		want      Generation
		params    int
	}{
		{name: "0.23", gen: "23", exports: exports023, want: Gen023, params: 7},
		{name: "0.22", gen: "22", exports: exports022, want: Gen022, params: 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib, a := fakeLibrary(t, c.exports, c.gen)
			gen, why := a.Generation()
			require.Equal(t, c.want, gen, why)
			kb, err := a.Kernels().BundleFromSpirv(ctx, dev, il, opts)
			require.NoError(t, err)
			bundle, err := lib.Lookup("fake_bundle")
			require.NoError(t, err)
			assert.Equal(t, uintptr(bundle), kb)
			calls, params, args := fakeCall(t, lib)
			assert.Equal(t, 1, calls)
			assert.Equal(t, c.params, params)
			want := []uintptr{ctx, dev, uintptr(unsafe.Pointer(&il[0])), uintptr(len(il)), uintptr(unsafe.Pointer(&opts[0])), 0, 0}
			assert.Equal(t, want[:c.params], args[:c.params])
		})
	}
}

// A library of an unknown generation, newer than 0.23 or lacking a
// function both generations have, is not called: the error says which
// library, why, and that SPIR-V is not built through it.
func TestBundleFromSpirvUnknownGeneration(t *testing.T) {
	for _, c := range []struct {
		name    string
		exports []string
		why     string
	}{
		{name: "newer", exports: append(slices.Clone(exports023), futureFunc), why: "exports " + futureFunc + ", which dpctl 0.23 has not"},
		{
			name:    "lacking",
			exports: slices.DeleteFunc(slices.Clone(exports023), func(n string) bool { return n == "DPCTLQueue_Memset" }),
			why:     "lacks DPCTLQueue_Memset of dpctl 0.23",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib, a := fakeLibrary(t, c.exports, "23")
			gen, why := a.Generation()
			require.Equal(t, GenUnknown, gen)
			assert.Contains(t, why, c.why)
			kb, err := a.Kernels().BundleFromSpirv(1, 2, []byte{1}, []byte{0})
			assert.Zero(t, kb)
			require.ErrorIs(t, err, errkind.NotSupported)
			msg := err.Error()
			for _, w := range []string{symCreateFromSpirv, a.Path(), c.why, "matches no dpctl C API usmbridge knows", "builds no SPIR-V through it"} {
				assert.Contains(t, msg, w)
			}
			calls, _, _ := fakeCall(t, lib)
			assert.Zero(t, calls, "CreateFromSpirv of an unknown generation was called")
		})
	}
}

// A library whose file cannot be read is of no known generation.
func TestGenerationUnreadable(t *testing.T) {
	gen, why := detectGeneration(filepath.Join(t.TempDir(), "absent.so"))
	assert.Equal(t, GenUnknown, gen)
	assert.Contains(t, why, "its exports cannot be read")
}
