package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
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
	b, err := SPIRVOrErr()
	Runtime(tb, SPIRVTools, err)
	return b
}

// SPIRVOrErr is SPIRV for callers without a testing.TB (a fuzz target's
// seeds): the module, or why it cannot be made.
func SPIRVOrErr() ([]byte, error) {
	spirv.once.Do(func() {
		spirv.b, spirv.err = compileSPIRV(filepath.Join(ModuleRoot(), "internal", "testutil", "testdata", "kernels.cl"))
	})
	return spirv.b, spirv.err
}

// CompileSPIRV compiles the OpenCL C src to SPIR-V with scripts/spirv.sh,
// as SPIRV does testdata/kernels.cl; without the tools it skips or fails
// tb as SPIRV does.
func CompileSPIRV(tb testing.TB, src string) []byte {
	tb.Helper()
	in := filepath.Join(tb.TempDir(), "src.cl")
	err := os.WriteFile(in, []byte(src), 0o600)
	var b []byte
	if err == nil {
		b, err = compileSPIRV(in)
	}
	Runtime(tb, SPIRVTools, err)
	return b
}

func compileSPIRV(in string) ([]byte, error) {
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
	cmd := exec.Command("bash", filepath.Join(ModuleRoot(), "scripts", "spirv.sh"), in, out)
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

// BuildKernel builds src for q's context and device (usm.BuildProgram)
// and returns the program with its kernel of that name; either failing
// fails tb.
func BuildKernel(tb testing.TB, q usm.Queue, src usm.ProgramSource, name string) (usm.Program, *usm.Kernel) {
	tb.Helper()
	p, err := usm.BuildProgram(q, src)
	if err != nil {
		tb.Fatalf("building the program: %v", err)
	}
	k, err := p.Kernel(name)
	if err != nil {
		tb.Fatalf("kernel %q: %v", name, err)
	}
	return p, k
}

// SharedFloats allocates n float32 of shared memory on device dev of a,
// freed when tb ends, and returns its address and the memory as a slice,
// zeroed.
func SharedFloats(tb testing.TB, a usm.Allocator, dev, n int) (uintptr, []float32) {
	tb.Helper()
	m, err := a.Alloc(dev, usm.KindShared, uintptr(n)*4)
	if err != nil {
		tb.Fatalf("allocating %d float32: %v", n, err)
	}
	tb.Cleanup(func() {
		if err := m.Free(); err != nil {
			tb.Errorf("freeing %d float32: %v", n, err)
		}
	})
	s := unsafe.Slice((*float32)(cmem.Ptr(m.Pointer())), n)
	clear(s)
	return m.Pointer(), s
}

// LaunchWait launches k on q over r with args, waits for the launch and
// closes its event: one launch, as the launch benchmarks time it and the
// allocation tests count it.
func LaunchWait(k *usm.Kernel, q usm.Queue, r usm.Range, args ...usm.Arg) error {
	ev, err := k.Launch(q, r, nil, args...)
	if err != nil {
		return err
	}
	if err := ev.Wait(); err != nil {
		return err
	}
	return ev.Close()
}

// BenchLaunch is the "go" half of every backend's BenchmarkLaunchEmpty:
// k, the empty kernel, launched on q over one work-item through
// usm.Kernel, waited for and its event closed, per iteration. The other
// half is the same launch written in C against the runtime
// (testdata/launchpeer.c), each backend's own.
func BenchLaunch(b *testing.B, k *usm.Kernel, q usm.Queue) {
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := LaunchWait(k, q, usm.NDRange(1)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// LaunchAllocs returns the allocations of one LaunchWait, averaged over
// 50, after a first launch that grows the kernel's memory and the event
// tables to it. A failed launch fails tb.
func LaunchAllocs(tb testing.TB, k *usm.Kernel, q usm.Queue, r usm.Range, args ...usm.Arg) float64 {
	tb.Helper()
	launch := func() {
		if err := LaunchWait(k, q, r, args...); err != nil {
			tb.Fatal(err)
		}
	}
	launch()
	return testing.AllocsPerRun(50, launch)
}
