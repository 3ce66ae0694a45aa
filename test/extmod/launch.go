package extmod

import (
	"sync/atomic"
	"time"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// Launches that return before their kernel ends (test_launch.py, and the
// launch steps of test_lifecycle.py). The kernel is held back by a gate:
// an int in shared USM that it spins on until a goroutine of the test
// opens it (open_gate), so "the kernel has not run yet" is a fact the
// test makes, not a race it hopes to win. The gate lies on a queue of its
// own, so that reading it (dpnp's __sycl_usm_array_interface__ waits on
// its queue) never waits for the kernel behind it. A kernel whose gate
// stays shut for gateSpins tries writes -1 instead of v and ends, so a
// call that waited when it should not have shows as wrong values, not as
// a hang.

const gatedSource = `
kernel void gated_fill(volatile global const int *gate, global double *y, long sy, long n, double v, long spins)
{
    long k = 0;
    while (*gate == 0 && k < spins)
        k++;
    double w = *gate != 0 ? v : -1.0;
    for (long i = 0; i < n; i++)
        y[i * sy] = w;
}`

// gateSpins bounds a kernel's wait for its gate: seconds on a CPU device.
const gateSpins = int64(1) << 32

var gatedProgram = usm.ProgramSource{OpenCLC: gatedSource}

func defineLaunch(m *pyext.Module) {
	params := []pyext.Param{pyext.P("gate", pyext.NDim(1)), pyext.P("y", pyext.NDim(1), pyext.Writable()), pyext.P("v")}
	pyext.Func3(m, "gated_fill", "y[:] = v by a kernel behind gate, returning once it is submitted (NoWait).",
		gatedFill, params[0], params[1], params[2], pyext.NoWait())
	pyext.Func3(m, "gated_fill_waited", "gated_fill, without NoWait: the call waits for the kernel.",
		gatedFill, params[0], params[1], params[2])
	pyext.Func3R(m, "gated_fill_same", "gated_fill, returning an Array over y's memory.",
		func(gate pyext.Array[int32], y pyext.Array[float64], v float64) (pyext.Array[float64], error) {
			return y, gatedFill(gate, y, v)
		}, params[0], params[1], params[2], pyext.NoWait())
	pyext.Func3R(m, "gated_fill_keep", "gated_fill, keeping y (before the launch when v < 0, after it otherwise); the kept view's id.",
		gatedFillKeep, params[0], params[1], params[2], pyext.NoWait())
	pyext.Func3R(m, "gated_new", "A new float64 array where like is, of like's shape, filled with v by a kernel behind gate (NoWait).",
		gatedNew, params[0], pyext.P("like", pyext.NDim(1)), params[2], pyext.NoWait())
	pyext.Func(m, "gated_pair", "Two new arrays like like, filled with v and -v by kernels behind gate, as a tuple (NoWait).",
		func(gate pyext.Array[int32], like pyext.Array[float64], v float64) (*usm.Array, *usm.Array, error) {
			a, err := gatedNew(gate, like, v)
			if err != nil {
				return nil, nil, err
			}
			b, err := gatedNew(gate, like, -v)
			if err != nil {
				a.Owner.Release()
				return nil, nil, err
			}
			return a, b, nil
		}, []pyext.Param{params[0], pyext.P("like", pyext.NDim(1)), params[2]}, pyext.NoWait())
	pyext.Func2(m, "open_gate", "Open gate from a goroutine after ms milliseconds, without the GIL.", openGate,
		pyext.P("gate", pyext.NDim(1)), pyext.P("ms", pyext.Default(0)))
	pyext.Func1R(m, "kept_read", "The float64 view kept under id, copied out by Go (its pending work waited for first), "+
		"with the GIL released.", keptRead, pyext.P("id"), pyext.ReleaseGIL())
	pyext.Func1R(m, "copy_out", "x (float64, any memory and layout) copied out by usm.CopyToSlice, with the GIL released.",
		func(x pyext.Array[float64]) ([]float64, error) {
			out := make([]float64, x.Len())
			return out, usm.CopyToSlice(out, x.USM())
		}, pyext.P("x"), pyext.ReleaseGIL())
	pyext.Func1R(m, "kept_view", "The float64 view kept under id (host-accessible, C-contiguous) read through usm.View, "+
		"which waits for its pending work first, with the GIL released.", keptView, pyext.P("id"), pyext.ReleaseGIL())
	pyext.Func0R(m, "launch_holds", "How many calls still hold their arguments for work not done.",
		func() (int64, error) { return pyext.Live()["launch_holds"], nil })
	pyext.Func0(m, "settle_launches", "Wait, with the GIL released, until no call holds its arguments for its work.",
		settleLaunches, pyext.ReleaseGIL())
}

// launchGated submits gated_fill over y (element 0, stride sy, n
// elements) to y's queue, behind gate.
func launchGated(gate, y *usm.Array, sy int64, n int, v float64) (usm.Event, error) {
	p, err := usm.BuildProgram(y.Queue, gatedProgram)
	if err != nil {
		return usm.Event{}, err
	}
	k, err := p.Kernel("gated_fill")
	if err != nil {
		return usm.Event{}, err
	}
	return k.Launch(y.Queue, usm.NDRange(1), nil, usm.Pointer(gate.ElementPointer()), usm.Pointer(y.ElementPointer()),
		usm.Scalar(sy), usm.Scalar(n), usm.Scalar(v), usm.Scalar(gateSpins))
}

func gatedFill(gate pyext.Array[int32], y pyext.Array[float64], v float64) error {
	ev, err := launchGated(gate.USM(), y.USM(), y.Strides()[0], y.Len(), v)
	if err != nil {
		return err
	}
	defer ev.Close()
	return y.WrittenBy(ev)
}

func gatedFillKeep(gate pyext.Array[int32], y pyext.Array[float64], v float64) (int64, error) {
	var k *usm.Array
	var err error
	if v < 0 { // kept before the work is recorded: it sees it all the same
		if k, err = y.Keep(); err != nil {
			return 0, err
		}
	}
	if err := gatedFill(gate, y, v); err != nil {
		if k != nil {
			k.Owner.Release()
		}
		return 0, err
	}
	if k == nil {
		if k, err = y.Keep(); err != nil {
			return 0, err
		}
	}
	return store(k), nil
}

func gatedNew(gate pyext.Array[int32], like pyext.Array[float64], v float64) (*usm.Array, error) {
	r, err := pyext.EmptyLike[float64](like)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, s := range r.Shape {
		n *= int(s)
	}
	ev, err := launchGated(gate.USM(), r, 1, n, v)
	if err == nil {
		err = r.WrittenBy(ev)
		_ = ev.Close()
	}
	if err != nil {
		r.Owner.Release()
		return nil, err
	}
	return r, nil
}

// openGate stores 1 in the gate's first element from a goroutine, after
// ms milliseconds; the goroutine holds the gate's memory until then.
func openGate(gate pyext.Array[int32], ms int) error {
	g, err := gate.Keep()
	if err != nil {
		return err
	}
	if !g.Memory.Kind.HostAccessible() {
		g.Owner.Release()
		return pyext.ValueError("the gate must be host-accessible USM, got %v", g.Memory.Kind)
	}
	go func() {
		time.Sleep(time.Duration(ms) * time.Millisecond)
		// A store by the host, not a copy through a queue: the device's
		// workers may all be spinning on gates.
		atomic.StoreInt32((*int32)(cmem.Ptr(g.ElementPointer())), 1)
		g.Owner.Release()
	}()
	return nil
}

// keptRead copies the view kept under id out through usm.CopyToSlice,
// which waits for the view's pending work (and its queue) first.
func keptRead(id int64) ([]float64, error) {
	keeperMu.Lock()
	k, ok := keeper[id]
	keeperMu.Unlock()
	if !ok {
		return nil, pyext.ValueError("no kept view %d", id)
	}
	n := 1
	for _, s := range k.Shape {
		n *= int(s)
	}
	out := make([]float64, n)
	return out, usm.CopyToSlice(out, k)
}

// keptView reads the view kept under id through usm.View, a slice over
// its memory, and copies the slice out.
func keptView(id int64) ([]float64, error) {
	keeperMu.Lock()
	k, ok := keeper[id]
	keeperMu.Unlock()
	if !ok {
		return nil, pyext.ValueError("no kept view %d", id)
	}
	v, err := usm.View[float64](k)
	if err != nil {
		return nil, err
	}
	return append([]float64(nil), v...), nil
}

func settleLaunches() error {
	for pyext.Live()["launch_holds"] != 0 {
		time.Sleep(time.Millisecond)
	}
	return nil
}
