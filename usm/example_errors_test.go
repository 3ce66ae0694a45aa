package usm_test

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// Every error matches one kind with errors.Is; the structured ones carry
// their details for errors.As; PythonException names the exception the
// kind maps to (docs/go.md, "Errors").
func Example_errors() {
	_, err := usm.Parse(map[string]any{
		"data": []any{0x10000, false}, "shape": []any{2, -3}, "typestr": "<f4", "version": 1, "syclobj": "opencl:gpu",
	})
	var me *usm.MalformedError
	if errors.As(err, &me) {
		fmt.Println("field:", me.Field)
	}
	fmt.Println(errors.Is(err, usm.ErrValue), usm.PythonException(err))

	in := usm.Interface{Shape: []int64{1 << 62, 4}, DType: dtype.Float32} // 2^64 bytes
	_, err = in.Window()
	fmt.Println(errors.Is(err, usm.ErrOverflow), usm.PythonException(err))

	dev, _ := usm.NewRegistry(cpu.Default()).Device("host")
	x, _ := usm.Empty[float32](dev, usm.KindHost, 4)
	_ = x.Close()
	_, err = x.At(0) // a closed array: ErrClosed, of kind ErrValue
	fmt.Println(errors.Is(err, usm.ErrClosed), usm.PythonException(err))
	// Output:
	// field: shape
	// true ValueError
	// true OverflowError
	// true ValueError
}
