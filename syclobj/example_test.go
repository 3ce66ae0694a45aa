package syclobj_test

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

func ExampleParseSelector() {
	sel, err := syclobj.ParseSelector("opencl:cpu,level_zero:gpu:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range sel.Filters() {
		fmt.Println(f)
	}

	_, err = syclobj.ParseSelector("gpu:opencl")
	fmt.Println(err)
	fmt.Println(errors.Is(err, usm.ErrValue))
	// Output:
	// opencl:cpu:*
	// level_zero:gpu:1
	// filter selector "gpu:opencl": backend "opencl" must come first and only once
	// true
}

func ExampleSelector_Resolve() {
	devs := []syclobj.Device{
		{Backend: syclobj.LevelZero, Type: syclobj.GPU, Name: "gpu0"},
		{Backend: syclobj.LevelZero, Type: syclobj.GPU, Name: "gpu1"},
		{Backend: syclobj.OpenCL, Type: syclobj.CPU, Name: "cpu"},
		{Backend: syclobj.OpenCL, Type: syclobj.GPU, Name: "gpu0 (OpenCL)"},
	}
	for _, s := range []string{"gpu:1", "gpu:2", "opencl:*:1", "2", "opencl:cpu,level_zero:gpu", "cuda"} {
		i, err := syclobj.MustParseSelector(s).Resolve(devs)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-26s -> %d %s\n", s, i, devs[i].Name)
	}
	// Output:
	// gpu:1                      -> 1 gpu1
	// gpu:2                      -> 3 gpu0 (OpenCL)
	// opencl:*:1                 -> 3 gpu0 (OpenCL)
	// 2                          -> 2 cpu
	// opencl:cpu,level_zero:gpu  -> 0 gpu0
	// filter selector "cuda": no device matches (devices seen: 0=level_zero:gpu "gpu0", 1=level_zero:gpu "gpu1", 2=opencl:cpu "cpu", 3=opencl:gpu "gpu0 (OpenCL)")
}
