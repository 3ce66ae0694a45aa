// Package saxpy is a Python extension module written in Go: saxpy(a, x, y)
// computes y += a*x in place on any float32 arrays Python passes (NumPy,
// dpnp, dpctl, jax, tvm-ffi, usmbridge), and ramp(n, device="cpu") returns
// 0, 1, …, n-1 as a new float32 array on the device the caller names.
// Build it with
//
//	python -m usmbridge.build examples/saxpy -o .
//
// and use it from Python as `import saxpy` (docs/extensions.md walks
// through it).
package saxpy

import (
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// Module defines the module: what `python -m usmbridge.build` looks for.
func Module(m *pyext.Module) error {
	m.Doc("saxpy in Go: y += a*x on host and SYCL USM arrays, in place: a Go loop where the host reads them, " +
		"an OpenCL C kernel on the arrays' own queue where it does not.")
	pyext.Func3(m, "saxpy", "y += a*x, in place (x and y: 1-D float32 arrays of one length); "+
		"on the device it returns once the kernel is submitted.", saxpy,
		pyext.P("a"), pyext.P("x", pyext.NDim(1)), pyext.P("y", pyext.NDim(1), pyext.Writable()), pyext.NoWait())
	pyext.Func2R(m, "path", "How saxpy computes on x and y: \"host\" (a Go loop over their memory), "+
		"\"kernel\" or \"strided kernel\" (OpenCL C on their queue, for contiguous or strided arrays) "+
		"or \"copy\" (through Go slices).", path, pyext.P("x"), pyext.P("y"))
	pyext.Func2R(m, "ramp", "0, 1, ..., n-1 as a float32 array on device (\"cpu\", a SYCL filter string, "+
		"a dpctl.SyclDevice or SyclQueue).", ramp, pyext.P("n"), pyext.P("device", pyext.Default("cpu")))
	return nil
}

// kernels is saxpy in OpenCL C, twice: over contiguous arrays, the loop
// a user writes, whose neighbouring work-items touch neighbouring
// elements, which the runtime's compiler turns into vector loads and
// stores; and over strided views, where x and y point at element 0 and
// step sx and sy elements (negative for reversed views), which it cannot
// (each work-item's address depends on a stride known only at run time).
// One program holds both: it is built once per context and device, and
// each call picks the kernel that fits its arrays.
const kernels = `
kernel void saxpy(float a, global const float *x, global float *y)
{
    size_t i = get_global_id(0);
    y[i] += a * x[i];
}

kernel void saxpy_strided(float a, global const float *x, long sx, global float *y, long sy)
{
    long i = get_global_id(0);
    y[i * sy] += a * x[i * sx];
}`

var program = usm.ProgramSource{OpenCLC: kernels}

// saxpy computes y += a*x. Memory the host can read (NumPy's, USM shared
// or host, contiguous) is worked on in place by a Go loop; USM the host
// does not read that way (device USM, strided views) by the kernel on
// y's queue, with no copy; anything else (a NumPy array beside device
// USM, say) is copied to Go slices and back, with the arrays' queues
// waited on first.
func saxpy(a float32, x, y pyext.Array[float32]) error {
	if xs, ys := x.Slice(), y.Slice(); xs != nil && ys != nil { // the host loop
		if len(xs) != len(ys) {
			return pyext.ValueError("x and y differ in length: %d and %d", len(xs), len(ys))
		}
		for i := range ys {
			ys[i] += a * xs[i]
		}
		return nil
	}
	xu, yu := x.USM(), y.USM()
	n := y.Len()
	if x.Len() != n {
		return pyext.ValueError("x and y differ in length: %d and %d", x.Len(), n)
	}
	if how(xu, yu, false) == "kernel" {
		ev, err := launch(a, n, xu, x.Strides()[0], yu, y.Strides()[0])
		if err != nil {
			return err
		}
		defer ev.Close()
		return y.WrittenBy(ev) // y's readers wait for it: the call returns (NoWait)
	}
	xs, ys := make([]float32, n), make([]float32, n)
	if err := usm.CopyToSlice(xs, xu); err != nil {
		return err
	}
	if err := usm.CopyToSlice(ys, yu); err != nil {
		return err
	}
	for i := range ys {
		ys[i] += a * xs[i]
	}
	return usm.CopyFromSlice(yu, ys)
}

// how picks the way: the host loop where both slices exist, the kernel
// where both arrays are USM of one device of one backend whose queue
// builds programs, copies otherwise.
func how(x, y *usm.Array, slices bool) string {
	switch {
	case slices:
		return "host"
	case x.Memory.Kind != usm.KindUnknown && y.Memory.Kind != usm.KindUnknown &&
		x.Backend == y.Backend && x.Device == y.Device && y.Queue != nil:
		if _, err := usm.BuildProgram(y.Queue, program); err == nil {
			return "kernel"
		}
	}
	return "copy"
}

func path(x, y pyext.Array[float32]) (string, error) {
	h := how(x.USM(), y.USM(), x.Slice() != nil && y.Slice() != nil)
	if xs, ys := x.Strides(), y.Strides(); h == "kernel" && len(xs) == 1 && len(ys) == 1 && strided(y.Len(), xs[0], ys[0]) {
		h = "strided kernel"
	}
	return h, nil
}

// launch submits the kernel to y's queue, after x's queue's work, and
// returns its event: unit strides (or one element, whose stride nothing
// reads) take the contiguous kernel. The caller records the event on y
// (WrittenBy): the arguments are the caller's only for the call, and
// dpnp's queues run out of order, where only the event orders later
// work, so the call hands it to dpnp's bookkeeping and holds x and y
// until the kernel is done.
func launch(a float32, n int, x *usm.Array, sx int64, y *usm.Array, sy int64) (usm.Event, error) {
	if n == 0 {
		return usm.Event{}, nil
	}
	p, err := usm.BuildProgram(y.Queue, program) // built once, then looked up
	if err != nil {
		return usm.Event{}, err
	}
	name, args := "saxpy", []usm.Arg{usm.Scalar(a), usm.Pointer(elem0(x)), usm.Pointer(elem0(y))}
	if strided(n, sx, sy) {
		name, args = "saxpy_strided", []usm.Arg{usm.Scalar(a), usm.Pointer(elem0(x)), usm.Scalar(sx), usm.Pointer(elem0(y)), usm.Scalar(sy)}
	}
	k, err := p.Kernel(name)
	if err != nil {
		return usm.Event{}, err
	}
	if x.Queue != y.Queue { // y's queue orders the work already submitted to it
		if err := usm.Order(x.Queue, y.Queue); err != nil {
			return usm.Event{}, err
		}
	}
	return k.Launch(y.Queue, usm.NDRange(n), nil, args...)
}

// strided reports whether n elements at strides sx and sy need the
// strided kernel.
func strided(n int, sx, sy int64) bool { return n > 1 && (sx != 1 || sy != 1) }

// elem0 is the address of an array's element 0.
func elem0(a *usm.Array) uintptr { return a.Data + uintptr(a.Offset)*uintptr(a.DType.Size()) }

// ramp returns 0, 1, ..., n-1 on device: host memory for "cpu", else
// device USM in dpctl's context for the device (which dpnp takes without a
// copy). Python owns the array it gets.
func ramp(n int, device pyext.Device) (*usm.Array, error) {
	if n < 0 {
		return nil, pyext.ValueError("n must not be negative, got %d", n)
	}
	arr, err := pyext.Empty[float32](device, int64(n))
	if err != nil {
		return nil, err
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	if err := usm.CopyFromSlice(arr, v); err != nil {
		arr.Owner.Release()
		return nil, err
	}
	return arr, nil
}
