package usm_test

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

func ExampleView() {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, _ := host.AllocHost(2 * 3 * 4)
	defer alloc.Free()
	arr, _ := reg.NewArray(alloc, dtype.Float32, []int64{2, 3})

	xs, err := usm.View[float32](arr) // aliases the array's memory
	if err != nil {
		panic(err)
	}
	for i := range xs {
		xs[i] = float32(i) / 2
	}
	fmt.Println(xs)

	_, err = usm.View[float64](arr)
	fmt.Println(errors.Is(err, usm.ErrType), err)
	// Output:
	// [0 0.5 1 1.5 2 2.5]
	// true usm.View: Go type float64 is float64, the array's dtype is float32
}

func ExampleValues() {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, _ := host.AllocHost(6 * 2)
	defer alloc.Free()
	arr, _ := reg.NewArray(alloc, dtype.Int16, []int64{2, 3})
	_ = usm.CopyFromSlice(arr, []int16{1, 2, 3, 4, 5, 6})

	// The transpose, read-only: a strided view View refuses.
	t := *arr
	t.Shape, t.Strides, t.ReadOnly = []int64{3, 2}, []int64{1, 3}, true
	_, err := usm.View[int16](&t)
	fmt.Println(err)

	vals, _ := usm.Values[int16](&t)
	var inC []int16
	for v := range vals {
		inC = append(inC, v)
	}
	fmt.Println(inC)
	v, _ := usm.At[int16](&t, 2, 0)
	fmt.Println(v)
	// Output:
	// usm.View: the array is read-only; read it with usm.Values, usm.At or usm.CopyToSlice
	// [1 4 2 5 3 6]
	// 3
}

func ExampleCopyToSlice() {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, _ := host.AllocHost(5 * 8)
	defer alloc.Free()
	arr, _ := reg.NewArray(alloc, dtype.Float64, []int64{5})
	_ = usm.CopyFromSlice(arr, []float64{1, 2, 3, 4, 5})

	// Every other element, backwards: x[::-2].
	rev := *arr
	rev.Shape, rev.Strides, rev.Offset = []int64{3}, []int64{-2}, 4
	dst := make([]float64, 3)
	if err := usm.CopyToSlice(dst, &rev); err != nil {
		panic(err)
	}
	fmt.Println(dst)

	// Writing goes only to the selected elements.
	_ = usm.CopyFromSlice(&rev, []float64{-5, -3, -1})
	all := make([]float64, 5)
	_ = usm.CopyToSlice(all, arr)
	fmt.Println(all)
	// Output:
	// [5 3 1]
	// [-1 2 -3 4 -5]
}
