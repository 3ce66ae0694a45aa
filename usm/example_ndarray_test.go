package usm_test

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/usm"
)

// An array that owns its memory: allocated on a device, read and written
// from Go, viewed without copies, and given back by one Close.
func ExampleNDArray() {
	reg := usm.NewRegistry(cpu.Default()) // and opencl.New(), levelzero.New(), ... where installed
	dev, err := reg.Device("host")        // a filter selector names a device
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := usm.Empty[float32](dev, usm.KindShared, 3, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close() // idempotent: the memory goes back once

	_ = x.CopyFrom([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	xs, _ := x.Elements() // a []float32 over the memory: no copy
	xs[0] = -1

	col, _ := x.Slice(1, 1, 2, 1) // x[:, 1:2], a view of the same memory
	t, _ := x.Transpose()         // x.T
	rev, _ := x.Slice(0, 0, 3, -1)
	flat, _ := x.Reshape(-1)
	_ = col.Set(100, 2, 0) // x[2, 1] = 100
	v, _ := t.At(1, 2)     // x.T[1, 2] is x[2, 1]
	fmt.Println(x.Shape(), col.Shape(), t.Strides(), v)
	out := make([]float32, 12)
	_ = rev.CopyTo(out) // any layout, in C order
	fmt.Println(out)
	_ = flat.CopyTo(out)
	fmt.Println(out)

	_ = x.Close() // the views close with it
	_, err = col.At(0, 0)
	fmt.Println(errors.Is(err, usm.ErrClosed), usm.PythonException(err))
	// Output:
	// [3 4] [3 1] [1 4] 100
	// [8 100 10 11 4 5 6 7 -1 1 2 3]
	// [-1 1 2 3 4 5 6 7 8 100 10 11]
	// true ValueError
}

// The devices of a registry, and what each is (docs/go.md, "Devices").
func ExampleRegistry_Devices() {
	reg := usm.NewRegistry(cpu.Default())
	for _, d := range reg.Devices() {
		fmt.Printf("%v %s %v %v\n", d, d.Vendor, d.USM, d.OpenCLC || d.SPIRV)
	}
	// Output: host:host:0 "usmbridge host (mmap)" (usmbridge host) usmbridge [host] false
}
