package typestr_test

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

func ExampleParse() {
	for _, s := range []string{"<f4", "f8", "=i2", "|b1", "c16"} {
		t, err := typestr.Parse(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-4s kind %c, %2d bytes -> %s\n", s, t.Kind, t.Size, t)
	}
	// Output:
	// <f4  kind f,  4 bytes -> |f4
	// f8   kind f,  8 bytes -> |f8
	// =i2  kind i,  2 bytes -> |i2
	// |b1  kind b,  1 bytes -> |b1
	// c16  kind c, 16 bytes -> |c16
}

func ExampleParse_malformed() {
	_, err := typestr.Parse("<f3")
	fmt.Println(err)
	fmt.Println(errors.Is(err, usm.ErrValue))
	// Output:
	// typestr "<f3": item size 3 is not supported for kind 'f'
	// true
}
