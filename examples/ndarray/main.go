// Command ndarray is a Go program of the kind docs/go.md leads with: it
// picks a device by what it is, allocates arrays that own their memory,
// computes saxpy on them with an OpenCL C kernel, reads the result in
// place as a gonum matrix, and hands it to dpnp without a copy, with one
// Close per array.
//
//	OCL_ICD_VENDORS=$PWD/.cache/opencl-vendors \
//	USMBRIDGE_PYTHON=$PWD/.venv/bin/python go run ./examples/ndarray
//
// It is a module of its own (go.mod: the checkout and its gonum module
// through replace), as a program that uses the gonum package is.
package main

import (
	"errors"
	"fmt"
	"os"

	"gonum.org/v1/gonum/mat"

	"github.com/usmbridge/usmbridge/gonum"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

func main() {
	if err := run(); errors.Is(err, usm.ErrNotAvailable) {
		fmt.Println("ndarray: a runtime is missing, nothing to show:", err)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "ndarray:", err)
		os.Exit(1)
	}
}

// saxpy guards the work-items past n: the range is rounded up to whole
// work-groups.
const saxpy = `
kernel void saxpy(double a, global const double *x, global double *y, ulong n) {
	size_t i = get_global_id(0);
	if (i >= n) return;
	y[i] += a * x[i];
}`

func run() error {
	// One process holds all of it: the interpreter, dpctl's SYCL runtime
	// and the opencl backend, which share the one OpenCL ICD loader of the
	// process, whichever of them loaded it first.
	py, err := pybridge.Embed("")
	if err != nil {
		return err
	}
	if _, err := py.Dpctl(); err != nil {
		return err
	}
	ocl, err := opencl.New()
	if err != nil {
		return err
	}
	defer ocl.Close()
	reg := usm.NewRegistry(ocl)

	// 1. The device: two OpenCL CPU runtimes may be installed (PoCL and
	// Intel's); their Device values tell them apart. dpnp reaches the
	// memory of a device with real USM (not PoCL's SVM).
	var dev usm.Device
	for _, d := range reg.Devices() {
		fmt.Printf("1. %v: vendor %q, USM %v, SVM %v, OpenCL C %v, SPIR-V %v\n", d, d.Vendor, d.USM, d.SVM, d.OpenCLC, d.SPIRV)
		if dev.Name == "" && !d.SVM && d.OpenCLC && len(d.USM) == 3 {
			dev = d
		}
	}
	if dev.Name == "" {
		return fmt.Errorf("no OpenCL device with USM: %w", usm.ErrNotAvailable)
	}
	fmt.Printf("   using %v\n", dev)

	// 2. Arrays that own their memory: one Close each.
	const rows, cols = 10, 100
	x, err := usm.Empty[float64](dev, usm.KindShared, rows*cols)
	if err != nil {
		return err
	}
	defer x.Close()
	y, err := usm.Empty[float64](dev, usm.KindShared, rows, cols)
	if err != nil {
		return err
	}
	defer y.Close()
	xs, err := x.Elements() // shared USM: a []float64 over the memory
	if err != nil {
		return err
	}
	for i := range xs {
		xs[i] = float64(i)
	}
	ys := make([]float64, rows*cols)
	for i := range ys {
		ys[i] = 1
	}
	if err := y.CopyFrom(ys); err != nil {
		return err
	}
	fmt.Printf("2. x %v and y %v of %s USM on %s\n", x.Shape(), y.Shape(), usm.KindShared, dev.Selector)

	// 3. The kernel, on the arrays' queue, over a range rounded up to
	// work-groups of 64: the kernel skips the tail.
	prog, err := usm.BuildProgram(y.Queue(), usm.ProgramSource{OpenCLC: saxpy})
	if err != nil {
		return err
	}
	k, err := prog.Kernel("saxpy")
	if err != nil {
		return err
	}
	flat, err := y.Reshape(-1) // a view: the same memory
	if err != nil {
		return err
	}
	r := usm.NDRange(rows * cols).InGroupsOf(64)
	ev, err := k.Launch(y.Queue(), r, nil, usm.Scalar(2.0), x.Arg(), flat.Arg(), usm.Scalar(uint64(rows*cols)))
	if err != nil {
		return err
	}
	if err := ev.Close(); err != nil { // y's reads wait on its queue
		return err
	}
	fmt.Printf("3. saxpy y = 2x + y over %d items in %d work-groups of %d\n", r.Global[0], r.Global[0]/r.Local[0], r.Local[0])

	// 4. gonum reads the result in place, and a column range is a view
	// it takes as is (its rows 100 elements apart).
	m, err := gonum.Dense(y)
	if err != nil {
		return err
	}
	right, err := y.Slice(1, 98, 100, 1) // y[:, 98:100]
	if err != nil {
		return err
	}
	mr, err := gonum.Dense(right)
	if err != nil {
		return err
	}
	var col mat.VecDense
	col.MulVec(mr, mat.NewVecDense(2, []float64{1, -1})) // y[:, 98] - y[:, 99]
	fmt.Printf("4. gonum: sum of y %.0f, y[9, 99] %.0f; y[:, 98] - y[:, 99] = %v, from y's memory: %v\n",
		mat.Sum(m), m.At(9, 99), mat.Sum(&col)/rows, &mr.RawMatrix().Data[0] == &m.RawMatrix().Data[98])

	// 5. dpnp takes y without a copy; what it writes, Go reads.
	a, err := y.Array()
	if err != nil {
		return err
	}
	err = py.Do(func(gil *pybridge.GIL) error {
		o, err := gil.ArrayObject(a) // a dpnp.tensor.usm_ndarray over y's memory
		if err != nil {
			return err
		}
		defer gil.DecRef(o)
		if err := gil.SetMain("y", o); err != nil {
			return err
		}
		if err := gil.SetMain("ptr", int64(a.Data)); err != nil {
			return err
		}
		if err := gil.Exec("import dpnp\n" +
			"d = dpnp.asarray(y)\n" +
			"same = d.get_array().__sycl_usm_array_interface__['data'][0] == ptr\n" +
			"total = float(dpnp.sum(d))\n" +
			"d[0, 0] = -1\n" +
			"d.sycl_queue.wait()"); err != nil {
			return err
		}
		s, err := gil.Eval("f'{type(d).__name__} {d.shape} on {d.sycl_device.name}, same memory: {same}, sum {total:.0f}'")
		if err != nil {
			return err
		}
		defer gil.DecRef(s)
		str, err := gil.String(s)
		fmt.Println("5. dpnp:", str)
		if err != nil {
			return err
		}
		return gil.Exec("del y, d")
	})
	if err != nil {
		return err
	}
	v, err := y.At(0, 0)
	if err != nil {
		return err
	}
	fmt.Printf("   Go reads dpnp's write: y[0, 0] = %v\n", v)

	// 6. One Close gives each array back; a closed array refuses its use.
	if err := y.Close(); err != nil {
		return err
	}
	_, err = flat.At(0)
	fmt.Printf("6. closed: y's view refuses (%v, usm.ErrClosed: %v)\n", usm.PythonException(err), errors.Is(err, usm.ErrClosed))
	return prog.Close()
}
