package gonum

import (
	"strconv"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// Dense returns the 2-d array x as a *mat.Dense over its elements: no
// copy. x must be host-readable and writable, non-empty, with unit column
// stride and a row stride of at least its column count (usm.ErrBuffer
// otherwise, saying what would serve); an array of other than 2
// dimensions is a usm.ErrValue error. The matrix is valid until x is
// closed.
func Dense(x *usm.NDArray[float64]) (*mat.Dense, error) {
	g, err := general("gonum.Dense", x)
	if err != nil {
		return nil, err
	}
	var d mat.Dense
	d.SetRawMatrix(blas64.General{Rows: g.rows, Cols: g.cols, Stride: g.stride, Data: g.data})
	return &d, nil
}

// VecDense returns the 1-d array x as a *mat.VecDense over its elements:
// no copy. x must be host-readable and writable, non-empty, with a
// positive stride (usm.ErrBuffer otherwise); an array of other than 1
// dimension is a usm.ErrValue error. The vector is valid until x is
// closed.
func VecDense(x *usm.NDArray[float64]) (*mat.VecDense, error) {
	v, err := vector("gonum.VecDense", x)
	if err != nil {
		return nil, err
	}
	var d mat.VecDense
	d.SetRawVector(blas64.Vector{N: v.n, Inc: v.inc, Data: v.data})
	return &d, nil
}

// General returns the 2-d float32 array x as a blas32.General over its
// elements, as Dense does for float64 (gonum's mat has no float32
// matrices; blas32 computes on this one).
func General(x *usm.NDArray[float32]) (blas32.General, error) {
	g, err := general("gonum.General", x)
	if err != nil {
		return blas32.General{}, err
	}
	return blas32.General{Rows: g.rows, Cols: g.cols, Stride: g.stride, Data: g.data}, nil
}

// Vector returns the 1-d float32 array x as a blas32.Vector over its
// elements, as VecDense does for float64.
func Vector(x *usm.NDArray[float32]) (blas32.Vector, error) {
	v, err := vector("gonum.Vector", x)
	if err != nil {
		return blas32.Vector{}, err
	}
	return blas32.Vector{N: v.n, Inc: v.inc, Data: v.data}, nil
}

// FromMatrix returns a new rows×cols array on device d, in memory of the
// given kind, holding a copy of m's elements. Close it when done.
func FromMatrix(d usm.Device, kind usm.Kind, m mat.Matrix) (*usm.NDArray[float64], error) {
	r, c := m.Dims()
	x, err := usm.Empty[float64](d, kind, int64(r), int64(c))
	if err != nil {
		return nil, err
	}
	v := make([]float64, r*c)
	for i := range r {
		for j := range c {
			v[i*c+j] = m.At(i, j)
		}
	}
	if err := x.CopyFrom(v); err != nil {
		_ = x.Close()
		return nil, err
	}
	return x, nil
}

// FromGeneral returns a new Rows×Cols float32 array on device d, in
// memory of the given kind, holding a copy of g's elements (g's layout
// is checked as blas32 would: Stride at least Cols, Data long enough).
// Close it when done.
func FromGeneral(d usm.Device, kind usm.Kind, g blas32.General) (*usm.NDArray[float32], error) {
	const op = "gonum.FromGeneral"
	if g.Rows < 0 || g.Cols < 0 || (g.Rows > 0 && g.Cols > 0 && (g.Stride < g.Cols || len(g.Data) < (g.Rows-1)*g.Stride+g.Cols)) {
		return nil, errkind.New(errkind.Value, op, "a "+strconv.Itoa(g.Rows)+"×"+strconv.Itoa(g.Cols)+" matrix of stride "+strconv.Itoa(g.Stride)+" in "+strconv.Itoa(len(g.Data))+" elements")
	}
	x, err := usm.Empty[float32](d, kind, int64(g.Rows), int64(g.Cols))
	if err != nil {
		return nil, err
	}
	v := make([]float32, g.Rows*g.Cols)
	for i := range g.Rows {
		copy(v[i*g.Cols:(i+1)*g.Cols], g.Data[i*g.Stride:])
	}
	if err := x.CopyFrom(v); err != nil {
		_ = x.Close()
		return nil, err
	}
	return x, nil
}

// matrix is the layout of a 2-d array as BLAS's general storage.
type matrix[T float32 | float64] struct {
	rows, cols, stride int
	data               []T
}

func general[T float32 | float64](op string, x *usm.NDArray[T]) (matrix[T], error) {
	shape := x.Shape()
	if len(shape) != 2 {
		return matrix[T]{}, errkind.New(errkind.Value, op, "the array has "+strconv.Itoa(len(shape))+" dimensions, a matrix 2 (Reshape it)")
	}
	if shape[0] == 0 || shape[1] == 0 {
		return matrix[T]{}, errkind.New(errkind.Value, op, "the array is empty ("+strconv.FormatInt(shape[0], 10)+"×"+strconv.FormatInt(shape[1], 10)+"); gonum's matrices have no zero dimension")
	}
	data, strides, err := x.Raw()
	if err != nil {
		return matrix[T]{}, err
	}
	rows, cols := int(shape[0]), int(shape[1])
	rs, cs := int(strides[0]), int(strides[1])
	if rows == 1 {
		rs = cols // never followed
	}
	if cols == 1 {
		cs = 1
	}
	switch {
	case cs == 1 && rs >= cols:
	case rs == 1 && cs >= rows:
		return matrix[T]{}, errkind.New(errkind.Buffer, op, "the array is column-major (strides "+strconv.Itoa(rs)+", "+strconv.Itoa(cs)+"); take the matrix of its Transpose, and the transpose of that (mat.Dense.T)")
	default:
		return matrix[T]{}, errkind.New(errkind.Buffer, op, "strides "+strconv.Itoa(rs)+", "+strconv.Itoa(cs)+" are not rows of unit column stride at least "+strconv.Itoa(cols)+" apart; copy the array (CopyTo)")
	}
	return matrix[T]{rows: rows, cols: cols, stride: rs, data: data[:(rows-1)*rs+cols]}, nil
}

// vec is the layout of a 1-d array as BLAS's vector storage.
type vec[T float32 | float64] struct {
	n, inc int
	data   []T
}

func vector[T float32 | float64](op string, x *usm.NDArray[T]) (vec[T], error) {
	shape := x.Shape()
	if len(shape) != 1 {
		return vec[T]{}, errkind.New(errkind.Value, op, "the array has "+strconv.Itoa(len(shape))+" dimensions, a vector 1 (Reshape it)")
	}
	if shape[0] == 0 {
		return vec[T]{}, errkind.New(errkind.Value, op, "the array is empty; gonum's vectors have no zero length")
	}
	data, strides, err := x.Raw()
	if err != nil {
		return vec[T]{}, err
	}
	n, inc := int(shape[0]), int(strides[0])
	if n == 1 {
		inc = 1
	}
	if inc < 1 {
		return vec[T]{}, errkind.New(errkind.Buffer, op, "stride "+strconv.Itoa(inc)+" repeats elements; copy the array (CopyTo)")
	}
	return vec[T]{n: n, inc: inc, data: data[:(n-1)*inc+1]}, nil
}
