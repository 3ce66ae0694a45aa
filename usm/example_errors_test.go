package usm_test

import (
	"errors"
	"fmt"

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

	_, err = usm.ByteWindow([]int64{1 << 62, 4}, nil, 0, 4) // 2^64 bytes
	fmt.Println(errors.Is(err, usm.ErrOverflow), usm.PythonException(err))
	// Output:
	// field: shape
	// true ValueError
	// true OverflowError
}
