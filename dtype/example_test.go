package dtype_test

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

func ExampleFromDataType() {
	for _, dt := range []dtype.DataType{
		{Code: 2, Bits: 32, Lanes: 1},  // kDLFloat
		{Code: 4, Bits: 16, Lanes: 1},  // kDLBfloat, what jax exports for bfloat16
		{Code: 10, Bits: 8, Lanes: 1},  // kDLFloat8_e4m3fn
		{Code: 17, Bits: 4, Lanes: 2},  // kDLFloat4_e2m1fn, two per byte
		{Code: 2, Bits: 32, Lanes: 4},  // a vector of four float32
		{Code: 6, Bits: 8, Lanes: 1},   // kDLBool
		{Code: 1, Bits: 8, Lanes: 1},   // kDLUInt: uint8, never bool
		{Code: 5, Bits: 128, Lanes: 1}, // kDLComplex: bits of the pair
	} {
		t, err := dtype.FromDataType(dt)
		if err != nil {
			fmt.Println(err, errors.Is(err, usm.ErrBuffer))
			continue
		}
		fmt.Println(t, t.Size())
	}
	// Output:
	// float32 4
	// bfloat16 2
	// float8_e4m3fn 1
	// DLPack dtype (code 17, bits 4, lanes 2) is not supported: kDLFloat4_e2m1fn is a sub-byte type; strides and offsets count whole bytes true
	// DLPack dtype (code 2, bits 32, lanes 4) is not supported: lanes 4: vector types are not supported true
	// bool 1
	// uint8 1
	// complex128 16
}

func ExampleType_Typestr() {
	for _, t := range []dtype.Type{dtype.Float32, dtype.Bool, dtype.Complex64, dtype.Bfloat16} {
		ts, err := t.Typestr()
		if err != nil {
			fmt.Println(err, errors.Is(err, usm.ErrBuffer))
			continue
		}
		fmt.Println(t, ts)
	}
	// Output:
	// float32 |f4
	// bool |b1
	// complex64 |c8
	// DLPack dtype bfloat16 (code 4, 16 bits) has no __sycl_usm_array_interface__ typestr true
}

func ExampleFromTypestr() {
	t, _ := dtype.FromTypestr(typestr.MustParse(">f8")) // on a little-endian host
	fmt.Println(t, t.IsNative(), t.Native() == dtype.Float64)
	_, err := t.DataType()
	fmt.Println(err)
	// Output:
	// float64, byte-swapped false true
	// DLPack only supports native byte order; the element type is ">f8" (float64, byte-swapped)
}
