package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// KernelSource returns testdata/kernels.cl: the OpenCL C kernels the
// kernel tests and benchmarks of every backend run (saxpy with strides,
// iota2d, fill, scale_add, empty). It is read from the checkout (the
// sdist leaves testdata out, and nothing but tests reads it).
var KernelSource = sync.OnceValue(func() string {
	b, err := os.ReadFile(filepath.Join(ModuleRoot(), "internal", "testutil", "testdata", "kernels.cl"))
	if err != nil {
		panic("testutil.KernelSource: " + err.Error())
	}
	return string(b)
})

var spirv struct {
	once sync.Once
	b    []byte
	err  error
}

// SPIRV returns KernelSource compiled to SPIR-V by scripts/spirv.sh, once
// per process. Without the tools (scripts/setup-25-spirv.sh installs
// them) it skips or fails tb as Runtime does for SPIRVTools.
func SPIRV(tb testing.TB) []byte {
	tb.Helper()
	spirv.once.Do(func() { spirv.b, spirv.err = buildSPIRV() })
	Runtime(tb, SPIRVTools, spirv.err)
	return spirv.b
}

func buildSPIRV() ([]byte, error) {
	root := ModuleRoot()
	for _, tool := range []string{envOr("CLANG", "clang-15"), envOr("LLVM_SPIRV", "llvm-spirv-15")} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, errkind.Wrap(errkind.NotAvailable, "testutil.SPIRV", tool+" is not installed (scripts/setup-25-spirv.sh)", err)
		}
	}
	dir, err := os.MkdirTemp("", "usmbridge-spirv-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "kernels.spv")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "spirv.sh"), filepath.Join(root, "internal", "testutil", "testdata", "kernels.cl"), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, errkind.Wrap(errkind.Value, "testutil.SPIRV", "scripts/spirv.sh failed: "+string(b), err)
	}
	return os.ReadFile(out)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// BuildLaunchPeer compiles testdata/launchpeer.c, the runtimes' own
// launches of an empty kernel called from C (the peers of the launch
// benchmarks), into tb's temporary directory, and returns the shared
// library's path. Without a C compiler it skips or fails tb as Runtime
// does.
func BuildLaunchPeer(tb testing.TB) string {
	tb.Helper()
	cc, err := CC()
	Runtime(tb, CCompiler, err)
	out := filepath.Join(tb.TempDir(), "liblaunchpeer.so")
	args := append(cc[1:], "-std=c11", "-O2", "-Wall", "-Werror", "-fPIC", "-shared", "-o", out,
		filepath.Join(ModuleRoot(), "internal", "testutil", "testdata", "launchpeer.c"))
	if b, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		tb.Fatalf("building the launch peer: %v\n%s", err, b)
	}
	return out
}
