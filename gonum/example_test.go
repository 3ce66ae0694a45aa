package gonum_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/gonum"
	"github.com/usmbridge/usmbridge/usm"
)

// An array's memory as a gonum matrix: no copy, in either direction.
func ExampleDense() {
	dev, err := usm.NewRegistry(cpu.Default()).Device("host")
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := usm.Empty[float64](dev, usm.KindShared, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close() // the matrix is valid until then
	_ = x.CopyFrom([]float64{1, 2, 3, 4, 5, 6})

	m, err := gonum.Dense(x) // a *mat.Dense over x's elements
	if err != nil {
		fmt.Println(err)
		return
	}
	var p mat.Dense
	p.Mul(m, m.T()) // gonum computes on the array's memory
	fmt.Println(mat.Formatted(&p))
	m.Set(0, 0, 10) // and writes into it
	v, _ := x.At(0, 0)
	fmt.Println(v)

	t, _ := x.Transpose() // column-major: no Dense of it, but of its transpose
	_, err = gonum.Dense(t)
	fmt.Println(usm.PythonException(err))
	// Output:
	// ⎡14  32⎤
	// ⎣32  77⎦
	// 10
	// BufferError
}
