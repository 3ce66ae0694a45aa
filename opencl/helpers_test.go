package opencl

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/live"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

// childEnv makes the test binary act as a child process for tests that
// need a fresh ICD loader (it reads its environment once per process).
const childEnv = "USMBRIDGE_OPENCL_CHILD"

// TestMain runs the tests (the examples only where an OpenCL platform
// opens, or USMBRIDGE_REQUIRE names one), then closes the shared backend
// and fails the package (exit 99) if any OpenCL object, allocation, DLPack
// export or import made by the tests is still alive.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "platforms" {
		ps, err := platforms()
		fmt.Printf("platforms=%d notavailable=%v err=%v\n", len(ps), errors.Is(err, usm.ErrNotAvailable), err)
		os.Exit(0)
	}
	_, err := sharedBackend()
	testutil.SkipExamples("^Example", err, testutil.PoCL, testutil.IntelOpenCL)
	code := m.Run()
	if shared.b != nil {
		if err := shared.b.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared backend:", err)
			code = max(code, 1)
		}
	}
	leaked, s := live.Leaks(Live()), exportledger.Read()
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
	b    *Backend
	err  error
}

func sharedBackend() (*Backend, error) {
	shared.once.Do(func() { shared.b, shared.err = New() })
	return shared.b, shared.err
}

// runtime is one real OpenCL runtime the tests must run on, recognised by
// its platform name.
type runtime struct {
	name     string // testutil runtime name (USMBRIDGE_REQUIRE)
	platform string // CL_PLATFORM_NAME
	mem      memory
}

var runtimes = []runtime{
	{testutil.PoCL, "Portable Computing Language", svmMemory},
	{testutil.IntelOpenCL, "Intel(R) OpenCL", usmMemory},
}

// rt is a runtime's first CPU device in the shared backend.
type rt struct {
	runtime
	b     *Backend
	local int
	dev   *device
	ctx   *Context
	q     *Queue
}

// find returns the runtime's first CPU device, or skips/fails the test as
// testutil.Runtime decides when the runtime is not there.
func find(t testing.TB, r runtime) rt {
	t.Helper()
	b, err := sharedBackend()
	testutil.Runtime(t, r.name, err)
	var seen []string
	for i := range b.Devices() {
		d := b.devs[i].dev
		seen = append(seen, d.String())
		if d.platform.info.name == r.platform && d.info.typ&clapi.DeviceTypeCPU != 0 {
			ctx, err := b.Context(i)
			require.NoError(t, err)
			q, err := b.Queue(i)
			require.NoError(t, err)
			return rt{runtime: r, b: b, local: i, dev: d, ctx: ctx, q: q.(*Queue)}
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

// Operations only the tests use, to drive the runtime as a SYCL program
// would.

// memFill enqueues a fill of n bytes at dst with a repeated pattern: USM
// with clEnqueueMemFillINTEL, SVM with clEnqueueSVMMemFill (n must be a
// multiple of len(pattern), which must be a power of two up to 128). The
// runtime copies the pattern, so it may be reused at once. Wait waits for
// the fill.
func (q *Queue) memFill(dst uintptr, pattern []byte, n uintptr, svm bool) error {
	const op = "opencl.Queue.memFill"
	if len(pattern) == 0 {
		return errkind.New(errkind.Value, op, "empty pattern")
	}
	if svm {
		l, err := lib()
		if err != nil {
			return err
		}
		if !l.HasSVM() {
			return errkind.New(errkind.NotSupported, "clEnqueueSVMMemFill", "the OpenCL loader has no SVM entry points (OpenCL < 2.0)")
		}
		id, err := q.lock(op)
		if err != nil {
			return err
		}
		defer q.h.RUnlock()
		return l.EnqueueSVMMemFill(id, dst, pattern, n)
	}
	id, f, err := q.usmFn("clEnqueueMemFillINTEL")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	if !f.CanFill() {
		return errkind.New(errkind.NotSupported, "clEnqueueMemFillINTEL", "the queue's platform does not provide it")
	}
	return f.EnqueueMemFill(id, dst, pattern, n)
}

// svmMemcpy copies n bytes with clEnqueueSVMMemcpy (SVM or host memory on
// either side).
func (q *Queue) svmMemcpy(blocking bool, dst, src, n uintptr) error {
	l, err := lib()
	if err != nil {
		return err
	}
	id, err := q.lock("clEnqueueSVMMemcpy")
	if err != nil {
		return err
	}
	defer q.h.RUnlock()
	return l.EnqueueSVMMemcpy(id, blocking, dst, src, n)
}

// hasFineGrainSVM reports whether clSVMAlloc can give d memory the host
// may use directly, with no map/unmap.
func (d *device) hasFineGrainSVM() bool {
	l, err := lib()
	return err == nil && l.HasSVM() && d.info.svm&clapi.SVMFineGrainBuffer != 0
}
