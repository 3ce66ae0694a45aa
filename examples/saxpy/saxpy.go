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
	m.Doc("saxpy in Go: y += a*x on host and SYCL USM arrays, without copies where the host can read them.")
	pyext.Func3(m, "saxpy", "y += a*x, in place (x and y: 1-D float32 arrays of one length).", saxpy,
		pyext.P("a"), pyext.P("x", pyext.NDim(1)), pyext.P("y", pyext.NDim(1), pyext.Writable()))
	pyext.Func2R(m, "ramp", "0, 1, ..., n-1 as a float32 array on device (\"cpu\", a SYCL filter string, "+
		"a dpctl.SyclDevice or SyclQueue).", ramp, pyext.P("n"), pyext.P("device", pyext.Default("cpu")))
	return nil
}

// saxpy computes y += a*x. Memory the host can read (NumPy's, USM shared
// or host, contiguous) is worked on in place; anything else (device USM,
// strided arrays) is copied to Go slices and back, with the arrays' queues
// waited on first.
func saxpy(a float32, x, y pyext.Array[float32]) error {
	if x.Len() != y.Len() {
		return pyext.ValueError("x and y differ in length: %d and %d", x.Len(), y.Len())
	}
	if xs, ys := x.Slice(), y.Slice(); xs != nil && ys != nil {
		for i := range ys {
			ys[i] += a * xs[i]
		}
		return nil
	}
	xs, ys := make([]float32, x.Len()), make([]float32, y.Len())
	if err := usm.CopyToSlice(xs, x.USM()); err != nil {
		return err
	}
	if err := usm.CopyToSlice(ys, y.USM()); err != nil {
		return err
	}
	for i := range ys {
		ys[i] += a * xs[i]
	}
	return usm.CopyFromSlice(y.USM(), ys)
}

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
