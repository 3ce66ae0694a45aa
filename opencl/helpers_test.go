package opencl_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/live"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/usm"
)

// childEnv makes the test binary act as a child process for tests that
// need a fresh ICD loader (it reads its environment once per process).
const childEnv = "USMBRIDGE_OPENCL_CHILD"

// TestMain runs the tests, then closes the shared backend and fails the
// package (exit 99) if any OpenCL object, allocation, DLPack export or
// import made by the tests is still alive.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "platforms" {
		ps, err := opencl.Platforms()
		fmt.Printf("platforms=%d notavailable=%v err=%v\n", len(ps), errors.Is(err, usm.ErrNotAvailable), err)
		os.Exit(0)
	}
	code := m.Run()
	if shared.b != nil {
		if err := shared.b.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared backend:", err)
			code = max(code, 1)
		}
	}
	leaked, s := live.Leaks(opencl.Live()), dlpack.ReadStats()
	if code == 0 && (len(leaked) != 0 || s.LiveExports != 0 || s.LiveImports != 0) {
		fmt.Fprintf(os.Stderr, "leak: OpenCL objects %v, DLPack %+v\n", leaked, s)
		code = 99
	}
	os.Exit(code)
}

// The shared backend: one per process, like a real program, closed by
// TestMain.
var shared struct {
	once sync.Once
	b    *opencl.Backend
	err  error
}

func sharedBackend() (*opencl.Backend, error) {
	shared.once.Do(func() { shared.b, shared.err = opencl.New() })
	return shared.b, shared.err
}

// runtime is one real OpenCL runtime the tests must run on, recognised by
// its platform name.
type runtime struct {
	name     string // testutil runtime name (USMBRIDGE_REQUIRE)
	platform string // CL_PLATFORM_NAME
	mem      opencl.Memory
}

var runtimes = []runtime{
	{testutil.PoCL, "Portable Computing Language", opencl.FineGrainSVM},
	{testutil.IntelOpenCL, "Intel(R) OpenCL", opencl.USM},
}

// rt is a runtime's first CPU device in the shared backend.
type rt struct {
	runtime
	b     *opencl.Backend
	local int
	dev   opencl.Device
	ctx   *opencl.Context
	q     *opencl.Queue
}

// find returns the runtime's first CPU device, or skips/fails the test as
// testutil.Runtime decides when the runtime is not there.
func find(t testing.TB, r runtime) rt {
	t.Helper()
	b, err := sharedBackend()
	testutil.Runtime(t, r.name, err)
	var seen []string
	for i := range b.Devices() {
		d, err := b.Device(i)
		require.NoError(t, err)
		seen = append(seen, d.String())
		if d.Platform().Name() == r.platform && d.Type()&opencl.TypeCPU != 0 {
			ctx, err := b.Context(i)
			require.NoError(t, err)
			q, err := b.CommandQueue(i)
			require.NoError(t, err)
			return rt{runtime: r, b: b, local: i, dev: d, ctx: ctx, q: q}
		}
	}
	testutil.Runtime(t, r.name, errkind.New(errkind.NotAvailable, "opencl test",
		"no CPU device of platform "+r.platform+" (devices: "+strings.Join(seen, "; ")+"); run scripts/setup-20-opencl.sh and export its OCL_ICD_VENDORS"))
	panic("unreachable")
}

// each runs fn as a subtest per runtime.
func each(t *testing.T, fn func(t *testing.T, r rt)) {
	for _, r := range runtimes {
		t.Run(r.name, func(t *testing.T) { fn(t, find(t, r)) })
	}
}
