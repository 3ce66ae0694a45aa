package opencl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// saxpyTail guards the work-items past n, which a range rounded up to
// whole work-groups has.
const saxpyTail = `
kernel void saxpy(float a, global const float *x, global float *y, ulong n) {
	size_t i = get_global_id(0);
	if (i >= n) return;
	y[i] += a * x[i];
}`

// NDArrays on each runtime's device, of every kind it allocates, as a
// kernel's arguments over a range rounded up to work-groups of 64: the
// tail is skipped, the elements past it (a view's) untouched, and a
// closed array is refused before anything is submitted.
func TestKernelNDArrays(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		reg := usm.NewRegistry(r.b)
		sel, err := reg.SelectorFor(r.b, r.local)
		require.NoError(t, err)
		d, err := reg.Device(sel.String())
		require.NoError(t, err)
		prog, k := testutil.BuildKernel(t, r.q, usm.ProgramSource{OpenCLC: saxpyTail}, "saxpy")
		defer prog.Close()
		for _, kind := range d.USM {
			t.Run(kind.String(), func(t *testing.T) {
				const n = 1000
				x, err := usm.Empty[float32](d, kind, n)
				require.NoError(t, err)
				defer x.Close()
				y, err := usm.Empty[float32](d, kind, n+24)
				require.NoError(t, err)
				defer y.Close()
				xs, ys := make([]float32, n), make([]float32, n+24)
				for i := range xs {
					xs[i] = float32(i)
				}
				for i := range ys {
					ys[i] = 1
				}
				require.NoError(t, x.CopyFrom(xs))
				require.NoError(t, y.CopyFrom(ys))
				head, err := y.Slice(0, 0, n, 1)
				require.NoError(t, err)
				rng := usm.NDRange(n).InGroupsOf(64)
				require.Equal(t, 1024, rng.Global[0])
				require.Same(t, r.q, x.Queue())
				ev, err := k.Launch(x.Queue(), rng, nil, usm.Scalar(float32(2)), x.Arg(), head.Arg(), usm.Scalar(uint64(n)))
				require.NoError(t, err)
				require.NoError(t, ev.Close()) // y's accesses wait on its queue
				require.NoError(t, y.CopyTo(ys))
				for i, v := range ys {
					want := float32(1)
					if i < n {
						want = 1 + 2*float32(i)
					}
					if v != want {
						t.Fatalf("y[%d] = %v, want %v", i, v, want)
					}
				}
				require.NoError(t, x.Close())
				_, err = k.Launch(y.Queue(), rng, nil, usm.Scalar(float32(2)), x.Arg(), head.Arg(), usm.Scalar(uint64(n)))
				assert.ErrorIs(t, err, usm.ErrClosed)
			})
		}
	})
}
