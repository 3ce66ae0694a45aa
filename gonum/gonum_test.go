package gonum_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/gonum"
	"github.com/usmbridge/usmbridge/usm"
)

func host(t *testing.T) usm.Device {
	t.Helper()
	d, err := usm.NewRegistry(new(cpu.Backend)).Device("host")
	require.NoError(t, err)
	return d
}

func ramp[T float32 | float64](t *testing.T, d usm.Device, shape ...int64) *usm.NDArray[T] {
	t.Helper()
	x, err := usm.Empty[T](d, usm.KindShared, shape...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	v := make([]T, n)
	for i := range v {
		v[i] = T(i)
	}
	require.NoError(t, x.CopyFrom(v))
	return x
}

// The matrix is the array's memory: gonum's writes are the array's, and
// row slices and column ranges keep their strides.
func TestDense(t *testing.T) {
	d := host(t)
	x := ramp[float64](t, d, 3, 4)
	m, err := gonum.Dense(x)
	require.NoError(t, err)
	assert.Equal(t, 4, m.RawMatrix().Stride)
	assert.Equal(t, 6.0, m.At(1, 2))
	m.Set(2, 3, -1)
	v, err := x.At(2, 3)
	require.NoError(t, err)
	assert.Equal(t, -1.0, v, "gonum wrote into the array")

	cols, err := x.Slice(1, 1, 3, 1) // x[:, 1:3]
	require.NoError(t, err)
	c, err := gonum.Dense(cols)
	require.NoError(t, err)
	assert.Equal(t, blas64General(3, 2, 4), [3]int{c.RawMatrix().Rows, c.RawMatrix().Cols, c.RawMatrix().Stride})
	assert.Equal(t, 9.0, c.At(2, 0))
	var sum mat.Dense
	sum.Add(c, c)
	assert.Equal(t, 18.0, sum.At(2, 0))

	every, err := x.Slice(0, 0, 3, 2) // rows 0 and 2
	require.NoError(t, err)
	e, err := gonum.Dense(every)
	require.NoError(t, err)
	assert.Equal(t, 8, e.RawMatrix().Stride)
	assert.Equal(t, 9.0, e.At(1, 1))

	row, err := x.Slice(0, 1, 2, 1)
	require.NoError(t, err)
	r, err := gonum.Dense(row)
	require.NoError(t, err)
	assert.Equal(t, []float64{4, 5, 6, 7}, mat.Row(nil, 0, r))
}

func blas64General(r, c, s int) [3]int { return [3]int{r, c, s} }

// What gonum's types cannot hold is refused with the way round it.
func TestRefused(t *testing.T) {
	d := host(t)
	x := ramp[float64](t, d, 3, 4)
	tr, err := x.Transpose()
	require.NoError(t, err)
	_, err = gonum.Dense(tr)
	assert.ErrorIs(t, err, usm.ErrBuffer)
	assert.ErrorContains(t, err, "Transpose")
	// The way round: the matrix of the transpose's transpose, transposed.
	back, err := tr.Transpose()
	require.NoError(t, err)
	m, err := gonum.Dense(back)
	require.NoError(t, err)
	assert.Equal(t, 7.0, m.T().At(3, 1))

	every, err := x.Slice(1, 0, 4, 2) // x[:, ::2]: column stride 2
	require.NoError(t, err)
	_, err = gonum.Dense(every)
	assert.ErrorIs(t, err, usm.ErrBuffer)
	rev, err := x.Slice(0, 0, 3, -1)
	require.NoError(t, err)
	_, err = gonum.Dense(rev)
	assert.ErrorIs(t, err, usm.ErrBuffer)
	flat, err := x.Reshape(-1)
	require.NoError(t, err)
	_, err = gonum.Dense(flat)
	assert.ErrorIs(t, err, usm.ErrValue)
	empty, err := x.Slice(0, 1, 1, 1)
	require.NoError(t, err)
	_, err = gonum.Dense(empty)
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = gonum.VecDense(x)
	assert.ErrorIs(t, err, usm.ErrValue)

	require.NoError(t, x.Close())
	_, err = gonum.Dense(x)
	assert.ErrorIs(t, err, usm.ErrClosed)
}

func TestVecDense(t *testing.T) {
	d := host(t)
	x := ramp[float64](t, d, 3, 4)
	flat, err := x.Reshape(-1)
	require.NoError(t, err)
	v, err := gonum.VecDense(flat)
	require.NoError(t, err)
	assert.Equal(t, 12, v.Len())
	assert.Equal(t, 66.0, mat.Sum(v))
	col, err := x.Slice(1, 2, 3, 1) // x[:, 2:3]
	require.NoError(t, err)
	_, err = col.Reshape(3) // a column is not contiguous: no reshape
	assert.ErrorIs(t, err, usm.ErrValue)
	// A strided 1-d view: every third element of the flat array.
	third, err := flat.Slice(0, 0, 12, 3)
	require.NoError(t, err)
	tv, err := gonum.VecDense(third)
	require.NoError(t, err)
	assert.Equal(t, 3, tv.RawVector().Inc)
	assert.Equal(t, []float64{0, 3, 6, 9}, []float64{tv.AtVec(0), tv.AtVec(1), tv.AtVec(2), tv.AtVec(3)})
	tv.SetVec(1, 30)
	got, err := x.At(0, 3)
	require.NoError(t, err)
	assert.Equal(t, 30.0, got)
}

// float32 arrays are blas32's types, which blas32 computes on in place.
func TestBlas32(t *testing.T) {
	d := host(t)
	a := ramp[float32](t, d, 2, 3)
	b := ramp[float32](t, d, 3, 2)
	c, err := usm.Empty[float32](d, usm.KindShared, 2, 2)
	require.NoError(t, err)
	defer c.Close()
	ga, err := gonum.General(a)
	require.NoError(t, err)
	gb, err := gonum.General(b)
	require.NoError(t, err)
	gc, err := gonum.General(c)
	require.NoError(t, err)
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, ga, gb, 0, gc)
	got, err := c.Elements()
	require.NoError(t, err)
	assert.Equal(t, []float32{10, 13, 28, 40}, got)

	v, err := a.Reshape(-1)
	require.NoError(t, err)
	gv, err := gonum.Vector(v)
	require.NoError(t, err)
	assert.Equal(t, float32(15), blas32.Asum(gv))
}

// Back: a new array holding a copy of a gonum matrix.
func TestFrom(t *testing.T) {
	d := host(t)
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	x, err := gonum.FromMatrix(d, usm.KindShared, m.T())
	require.NoError(t, err)
	defer x.Close()
	assert.Equal(t, []int64{3, 2}, x.Shape())
	got, err := x.Elements()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, got)

	g := blas32.General{Rows: 2, Cols: 2, Stride: 3, Data: []float32{1, 2, 0, 3, 4}}
	y, err := gonum.FromGeneral(d, usm.KindHost, g)
	require.NoError(t, err)
	defer y.Close()
	g32, err := y.Elements()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4}, g32)
	_, err = gonum.FromGeneral(d, usm.KindHost, blas32.General{Rows: 2, Cols: 2, Stride: 1, Data: make([]float32, 4)})
	assert.ErrorIs(t, err, usm.ErrValue)
}
