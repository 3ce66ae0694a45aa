// Package rolling is a Python extension module written in Go whose class
// keeps device state, as a real library's would (docs/extensions.md,
// "Classes, start to end"):
//
//   - Window(size, *, device="cpu"): the last size float32 samples, in a
//     ring buffer allocated on device (device USM of a SYCL device, or host
//     memory) and kept for the object's life; push(x) appends a batch of
//     samples from any array (NumPy, dpnp, ...), with an OpenCL C kernel
//     on the ring's own queue where the ring is device memory, the GIL
//     released meanwhile; stats() returns (mean, variance), a tuple;
//     values() the samples in order, a new array on the window's device;
//     len(w), repr(w), and pickling (its samples, on the host);
//   - Window.of(x, *, device="cpu"), a static method: a window of x's
//     length holding x;
//   - rolling.WindowError, a ValueError of the module's own, which a Go
//     error type raises (a window of no samples, a size below 1);
//   - rolling_mean(x, n, *, out=None) over float32 and float64 arrays: the
//     mean of each n consecutive samples, into out (returned as given) or
//     a new array where x is;
//   - __version__.
//
// Build it with
//
//	python -m usmbridge.build examples/rolling -o . --stubs
package rolling

import (
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// Module defines the module.
func Module(m *pyext.Module) error {
	m.Doc("Rolling statistics in Go, on the host or a SYCL device.")
	m.Const("__version__", "1.0")
	pyext.NewException[*WindowError](m, "WindowError", "A window that cannot do what was asked.", "ValueError")

	w := pyext.NewClass[Window](m, "Window", "The last size float32 samples, kept on a device.")
	pyext.Init2(w, NewWindow, pyext.P("size"), pyext.P("device", pyext.Default("cpu"), pyext.KeywordOnly()))
	pyext.Method(w, "of", "A window of x's length holding x's samples.", Of,
		[]pyext.Param{pyext.P("x", pyext.NDim(1)), pyext.P("device", pyext.Default("cpu"), pyext.KeywordOnly())}, pyext.Static())
	pyext.Method1(w, "push", "Append the samples of x (a 1-D float32 array of any memory).", (*Window).Push,
		pyext.P("x", pyext.NDim(1)), pyext.ReleaseGIL())
	pyext.Method(w, "stats", "(mean, variance) of the samples.", (*Window).Stats, nil)
	pyext.Method0R(w, "values", "The samples, oldest first, as a new array on the window's device.", (*Window).Values)
	pyext.Property(w, "size", "How many samples the window keeps.", func(w *Window) (int, error) { return w.size, nil })
	pyext.Method0R(w, "__len__", "", (*Window).Len)
	pyext.Method0R(w, "__repr__", "", (*Window).String)
	pyext.Method0R(w, "__getstate__", "", func(w *Window) ([]float32, error) { return w.ordered() })
	pyext.Method1(w, "__setstate__", "", (*Window).setState, pyext.P("samples", pyext.NDim(1)))

	params := []pyext.Param{pyext.P("x", pyext.NDim(1)), pyext.P("n"),
		pyext.P("out", pyext.NDim(1), pyext.Writable(), pyext.Optional(), pyext.KeywordOnly())}
	doc := "The mean of each n consecutive samples of x (len(x)-n+1 of them), into out when given, else a new array where x is."
	pyext.Func(m, "rolling_mean", doc, rollingMean[float32], params)
	pyext.Func(m, "rolling_mean", doc, rollingMean[float64], params)
	return nil
}

// WindowError is a window that cannot do what was asked: rolling.WindowError
// in Python.
type WindowError struct{ Reason string }

func (e *WindowError) Error() string { return e.Reason }

// Window is the last size samples, in a ring on a device.
type Window struct {
	mu     sync.Mutex // push releases the GIL: two threads may push at once
	size   int
	device pyext.Device // kept from the constructor: later calls allocate on it
	ring   *usm.Array   // size float32 on device, owned by the Window
	next   int          // where the next sample goes
	count  int          // samples pushed, up to size
}

// NewWindow is Window(size, *, device="cpu").
func NewWindow(size int, device pyext.Device) (*Window, error) {
	if size < 1 {
		return nil, &WindowError{"a window keeps at least 1 sample, got size " + strconv.Itoa(size)}
	}
	ring, err := pyext.Empty[float32](device, int64(size))
	if err != nil {
		return nil, err
	}
	return &Window{size: size, device: device, ring: ring}, nil
}

// Of is Window.of(x, *, device="cpu").
func Of(x pyext.Array[float32], device pyext.Device) (*Window, error) {
	w, err := NewWindow(x.Len(), device)
	if err != nil {
		return nil, err
	}
	if err := w.Push(x); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// Close frees the ring, when the Python object goes.
func (w *Window) Close() error {
	if w.ring != nil {
		w.ring.Owner.Release()
		w.ring = nil
	}
	return nil
}

// kernel writes x's n samples (stride sx) into the ring from position start.
const kernel = `
kernel void push(global float *ring, long size, long start, global const float *x, long sx)
{
    long i = get_global_id(0);
    ring[(start + i) % size] = x[i * sx];
}`

var program = usm.ProgramSource{OpenCLC: kernel}

// Push appends x's samples; of more than size, the last size. It runs
// without the GIL: the ring is the Window's, x the call's.
func (w *Window) Push(x pyext.Array[float32]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, sx := x.Len(), int64(0)
	if n == 0 {
		return nil
	}
	sx = x.Strides()[0]
	xa := x.USM()
	skip := 0
	if n > w.size { // only the last size samples stay
		skip, n = n-w.size, w.size
	}
	if w.ring.Queue != nil && onDevice(xa, w.ring) {
		if xa.Queue != w.ring.Queue { // the ring's queue runs after the work submitted for x
			if err := usm.Order(xa.Queue, w.ring.Queue); err != nil {
				return err
			}
		}
		if err := w.launch(elem(xa, int64(skip)*sx), sx, n); err != nil {
			return err
		}
	} else {
		all := make([]float32, x.Len())
		if err := usm.CopyToSlice(all, xa); err != nil {
			return err
		}
		if err := w.write(all[skip:]); err != nil {
			return err
		}
	}
	w.next = (w.next + n) % w.size
	w.count = min(w.count+n, w.size)
	return nil
}

// onDevice reports whether x is USM the ring's kernel reads: of the ring's
// backend and device.
func onDevice(x, ring *usm.Array) bool {
	return x.Memory.Kind != usm.KindUnknown && x.Backend == ring.Backend && x.Device == ring.Device && x.Queue != nil
}

// launch runs the kernel on the ring's queue, after x's queue's work, and
// waits for it (x is the caller's for the call only).
func (w *Window) launch(x uintptr, sx int64, n int) error {
	q := w.ring.Queue
	p, err := usm.BuildProgram(q, program) // built once per context and device, then looked up
	if err != nil {
		return err
	}
	k, err := p.Kernel("push")
	if err != nil {
		return err
	}
	ev, err := k.Launch(q, usm.NDRange(n), nil, usm.Pointer(elem(w.ring, 0)), usm.Scalar(int64(w.size)),
		usm.Scalar(int64(w.next)), usm.Pointer(x), usm.Scalar(sx))
	if err != nil {
		return err
	}
	err = ev.Wait()
	if cerr := ev.Close(); err == nil {
		err = cerr
	}
	return err
}

// write puts samples (at most size) into the ring from w.next: through a
// staging array and the kernel where the ring is device memory with a
// queue, else through a host copy of the ring.
func (w *Window) write(samples []float32) error {
	if len(samples) == 0 {
		return nil
	}
	if w.ring.Queue != nil && w.ring.Memory.Kind != usm.KindUnknown {
		if _, err := usm.BuildProgram(w.ring.Queue, program); err == nil {
			stage, err := pyext.Empty[float32](w.device, int64(len(samples)))
			if err != nil {
				return err
			}
			defer stage.Owner.Release()
			if err := usm.CopyFromSlice(stage, samples); err != nil {
				return err
			}
			return w.launch(elem(stage, 0), 1, len(samples))
		}
	}
	ring := make([]float32, w.size)
	if err := usm.CopyToSlice(ring, w.ring); err != nil {
		return err
	}
	for i, v := range samples {
		ring[(w.next+i)%w.size] = v
	}
	return usm.CopyFromSlice(w.ring, ring)
}

// ordered is the samples, oldest first.
func (w *Window) ordered() ([]float32, error) {
	ring := make([]float32, w.size)
	if err := usm.CopyToSlice(ring, w.ring); err != nil {
		return nil, err
	}
	out := make([]float32, 0, w.count)
	for i := range w.count {
		out = append(out, ring[(w.next-w.count+i+w.size)%w.size])
	}
	return out, nil
}

// Stats is (mean, variance) of the samples, NumPy's var (ddof 0).
func (w *Window) Stats() (mean, variance float64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.count == 0 {
		return 0, 0, &WindowError{"stats() of a window without samples"}
	}
	vals, err := w.ordered()
	if err != nil {
		return 0, 0, err
	}
	for _, v := range vals {
		mean += float64(v)
	}
	mean /= float64(len(vals))
	for _, v := range vals {
		d := float64(v) - mean
		variance += d * d
	}
	return mean, variance / float64(len(vals)), nil
}

// Values is the samples, oldest first, as a new array on the window's
// device: Python owns it.
func (w *Window) Values() (*usm.Array, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	vals, err := w.ordered()
	if err != nil {
		return nil, err
	}
	a, err := pyext.Empty[float32](w.device, int64(len(vals)))
	if err != nil {
		return nil, err
	}
	if err := usm.CopyFromSlice(a, vals); err != nil {
		a.Owner.Release()
		return nil, err
	}
	return a, nil
}

// Len is how many samples the window holds.
func (w *Window) Len() (int, error) { return w.count, nil }

func (w *Window) String() (string, error) {
	return fmt.Sprintf("Window(size=%d, samples=%d, device=%s)", w.size, w.count, w.device), nil
}

// setState is __setstate__: an unpickled window is a new zero Window,
// which the samples make one of their length, on the host.
func (w *Window) setState(samples pyext.Array[float32]) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	vals := make([]float32, samples.Len())
	if err := usm.CopyToSlice(vals, samples.USM()); err != nil {
		return err
	}
	nw, err := NewWindow(max(len(vals), 1), pyext.Host)
	if err != nil {
		return err
	}
	if err := nw.write(vals); err != nil {
		_ = nw.Close()
		return err
	}
	_ = w.Close()
	w.size, w.device, w.ring = nw.size, nw.device, nw.ring
	w.next, w.count = len(vals)%w.size, len(vals)
	return nil
}

// elem is the address of element i of a 1-D array.
func elem(a *usm.Array, i int64) uintptr {
	return a.Data + uintptr(a.Offset+i*a.EffectiveStrides()[0])*uintptr(a.DType.Size())
}

// rollingMean is the mean of each n consecutive samples of x.
func rollingMean[T float32 | float64](x pyext.Array[T], n int, out pyext.Array[T]) (pyext.Result, error) {
	if n < 1 || n > x.Len() {
		return pyext.Result{}, pyext.ArgValueError("n", "must be in 1..%d (len(x)), got %d", x.Len(), n)
	}
	m := x.Len() - n + 1
	if !out.IsNone() && out.Len() != m {
		return pyext.Result{}, pyext.ArgValueError("out", "must have %d elements, got %d", m, out.Len())
	}
	xs := make([]T, x.Len())
	if err := usm.CopyToSlice(xs, x.USM()); err != nil {
		return pyext.Result{}, err
	}
	means := make([]T, m)
	sum := 0.0
	for i, v := range xs {
		sum += float64(v)
		if i >= n {
			sum -= float64(xs[i-n])
		}
		if i >= n-1 {
			means[i-n+1] = T(sum / float64(n))
		}
	}
	if math.IsNaN(sum) { // a NaN sample: the running sum cannot drop it again
		for i := range means {
			s := 0.0
			for _, v := range xs[i : i+n] {
				s += float64(v)
			}
			means[i] = T(s / float64(n))
		}
	}
	if !out.IsNone() {
		return out.Given(), usm.CopyFromSlice(out.USM(), means)
	}
	r, err := pyext.EmptyLike[T](x, int64(m))
	if err != nil {
		return pyext.Result{}, err
	}
	if err := usm.CopyFromSlice(r, means); err != nil {
		r.Owner.Release()
		return pyext.Result{}, err
	}
	return pyext.NewArray(r), nil
}
