package usm_test

import (
	"fmt"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

func ExampleParse() {
	// A 2×2 uint8 view with a negative column stride, as dpctl's
	// test_suai_non_contig_2D describes it.
	in, err := usm.Parse(map[string]any{
		"data":    []any{0x10000, true},
		"shape":   []any{2, 2},
		"strides": []any{10, -2},
		"offset":  9,
		"typestr": "|u1",
		"version": 1,
		"syclobj": "level_zero:gpu:0",
	})
	if err != nil {
		panic(err)
	}
	w, err := in.Window()
	if err != nil {
		panic(err)
	}
	fmt.Println("shape:", in.Shape)
	fmt.Println("dtype:", in.DType)
	fmt.Println("read-only:", in.ReadOnly)
	fmt.Println("window:", w, w.Len(), "bytes")

	_, err = usm.Parse(map[string]any{"offset": 1.5, "version": 2})
	fmt.Println(usm.PythonException(err))
	// Output:
	// shape: [2 2]
	// dtype: uint8
	// read-only: true
	// window: [7, 20) 13 bytes
	// TypeError
}

func ExampleParseJSON() {
	in, err := usm.ParseJSON([]byte(`{"data": [4096, false], "shape": [3, 4], "strides": null,
		"typestr": "<f8", "version": 1, "syclobj": "host"}`))
	if err != nil {
		panic(err)
	}
	m, err := in.Map()
	if err != nil {
		panic(err)
	}
	fmt.Println(m["typestr"], m["shape"], m["strides"], m["offset"])
	// Output: |f8 [3 4] <nil> 0
}

func ExampleInterface_Window() {
	// dpctl's test_suai_non_contig_1D: every other byte of 19, from byte 8.
	in := usm.Interface{Shape: []int64{10}, Strides: []int64{2}, Offset: 8, DType: dtype.Uint8}
	w, _ := in.Window()
	fmt.Println(w, w.Len())

	// A reversed float32 vector reaches below its element 0.
	in = usm.Interface{Shape: []int64{4}, Strides: []int64{-1}, DType: dtype.Float32}
	w, _ = in.Window()
	fmt.Println(w)

	// Empty arrays touch nothing.
	in = usm.Interface{Shape: []int64{0, 5}, Offset: 3, DType: dtype.Float32}
	w, _ = in.Window()
	fmt.Println(w, w.Empty())

	in = usm.Interface{Shape: []int64{1 << 62, 4}, DType: dtype.Float32}
	_, err := in.Window()
	fmt.Println(usm.PythonException(err))
	// Output:
	// [8, 27) 19
	// [-12, 4)
	// [12, 12) true
	// OverflowError
}
