package opencl_test

import (
	"fmt"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/usm"
)

// The native OpenCL backend where a runtime is installed, with the host
// backend beside it in one registry (docs/go.md, "Backends").
func Example() {
	ocl, err := opencl.New() // every platform the ICD loader lists
	if err != nil {
		fmt.Println(err) // without a runtime: errors.Is(err, usm.ErrNotAvailable)
		return
	}
	defer ocl.Close()
	reg := usm.NewRegistry(ocl, cpu.Default()) // "opencl:cpu:0" now names ocl's device 0

	alloc, err := ocl.Alloc(0, usm.KindShared, 4*4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer alloc.Free() // before Close: defers run last first
	arr, _ := reg.NewArray(alloc, dtype.Float32, []int64{4})
	_ = usm.CopyFromSlice(arr, []float32{1, 2, 3, 4})
	xs, _ := usm.View[float32](arr) // shared USM: the host reads it in place
	fmt.Println(arr.Memory.Kind, arr.DLDevice.Type, xs)
	// Output: shared kDLOneAPI [1 2 3 4]
}

// A kernel from Go: OpenCL C built for the queue's context and device
// (once: the next BuildProgram of the same source finds it), launched on
// the array's queue over a range rounded up to work-groups of 4, with a
// scalar, the array and its length, which the kernel's guard compares
// the work-items past the end with (docs/go.md, "Kernels").
func Example_kernel() {
	ocl, err := opencl.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ocl.Close()
	dev, err := usm.NewRegistry(ocl).Device("opencl") // the first OpenCL device
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := usm.Empty[float32](dev, usm.KindShared, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close() // before ocl.Close: defers run last first
	_ = x.CopyFrom([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})

	prog, err := usm.BuildProgram(x.Queue(), usm.ProgramSource{OpenCLC: `
		kernel void scale(float a, global float *x, ulong n) {
			size_t i = get_global_id(0);
			if (i >= n) return; // the work-items the rounding added
			x[i] *= a;
		}`})
	if err != nil {
		fmt.Println(err) // a *usm.BuildError carries the compiler's log
		return
	}
	k, _ := prog.Kernel("scale")
	r := usm.NDRange(10).InGroupsOf(4) // 12 work-items in 3 groups of 4
	ev, err := k.Launch(x.Queue(), r, nil, usm.Scalar(float32(10)), x.Arg(), usm.Scalar(uint64(10)))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = ev.Close() // x's accesses wait on its queue (ev.Wait waits for this launch alone)
	xs, _ := x.Elements()
	fmt.Println(k.NumArgs(), r.Global[0], xs)
	// Output: 3 12 [0 10 20 30 40 50 60 70 80 90]
}
