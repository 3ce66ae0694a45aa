package ext_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// TestMPI runs python/tests/mpi/check_mpi.py under `mpiexec -n 2` and `-n 4` (MPICH's
// Hydra from the mpich wheel, scripts/setup-50-mpi.sh): Send/Recv, Bcast,
// Allreduce and Isend/Irecv of usmbridge arrays over NumPy memory, shared
// and device USM and dpnp arrays on opencl:cpu, with zero copy, read-only
// and strided buffers checked on every rank. mpi4py hands each non-CPU
// array to MPI through __dlpack__(stream=-1, copy=False), which is what
// this test needs from usmbridge.
func TestMPI(t *testing.T) {
	mpiexec := os.Getenv("USMBRIDGE_MPIEXEC")
	if mpiexec == "" {
		testutil.Runtime(t, testutil.MPI, errkind.New(errkind.NotAvailable, "ext", "USMBRIDGE_MPIEXEC is not set (scripts/setup-50-mpi.sh prints it)"))
	}
	if _, err := os.Stat(mpiexec); err != nil {
		testutil.Runtime(t, testutil.MPI, errkind.Wrap(errkind.NotAvailable, "ext", "no mpiexec", err))
	}
	testutil.Imports(t, testutil.ProjectPython(t), testutil.MPI, "mpi4py.MPI")
	py, lib := buildExtension(t, "mpi4py.MPI")
	pkg, err := filepath.Abs(pythonDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			// The fork launcher starts the ranks here, without ssh, as any
			// user; `python -m mpi4py` aborts every rank when one raises,
			// so a failure cannot leave the others waiting.
			cmd := exec.CommandContext(ctx, mpiexec, "-launcher", "fork", "-n", strconv.Itoa(n),
				py, "-m", "mpi4py", filepath.Join(pkg, "tests", "mpi", "check_mpi.py"))
			cmd.Env = append(os.Environ(), "USMBRIDGE_LIB="+lib, "PYTHONPATH="+pkg)
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			if ctx.Err() != nil {
				t.Fatalf("mpiexec -n %d did not finish in time", n)
			}
			if err != nil {
				t.Fatalf("mpiexec -n %d: %v", n, err)
			}
			for r := range n {
				re := regexp.MustCompile(fmt.Sprintf(`rank %d/%d: (\d+) checks passed`, r, n))
				m := re.FindSubmatch(out)
				if m == nil {
					t.Fatalf("rank %d did not report", r)
				}
				if c, _ := strconv.Atoi(string(m[1])); c < 30 {
					t.Errorf("rank %d ran only %d checks", r, c)
				}
			}
		})
	}
}
