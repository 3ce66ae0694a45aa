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
