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
// (once: the next BuildProgram of the same source finds it), launched
// over the array's elements on the queue, after nothing, with a scalar
// and a USM pointer (docs/go.md, "Kernels").
func Example_kernel() {
	ocl, err := opencl.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ocl.Close()
	alloc, err := ocl.Alloc(0, usm.KindShared, 8*4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer alloc.Free()
	arr, _ := usm.NewRegistry(ocl).NewArray(alloc, dtype.Float32, []int64{8})
	_ = usm.CopyFromSlice(arr, []float32{0, 1, 2, 3, 4, 5, 6, 7})

	q, _ := ocl.Queue(0)
	prog, err := usm.BuildProgram(q, usm.ProgramSource{OpenCLC: `
		kernel void scale(float a, global float *x) {
			x[get_global_id(0)] *= a;
		}`})
	if err != nil {
		fmt.Println(err) // a *usm.BuildError carries the compiler's log
		return
	}
	k, _ := prog.Kernel("scale")
	ev, err := k.Launch(q, usm.NDRange(8), nil, usm.Scalar(float32(10)), usm.Pointer(arr.Data))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = ev.Wait() // or pass ev to the next launch's after: the device orders them
	_ = ev.Close()
	xs, _ := usm.View[float32](arr)
	fmt.Println(k.NumArgs(), xs)
	// Output: 2 [0 10 20 30 40 50 60 70]
}
