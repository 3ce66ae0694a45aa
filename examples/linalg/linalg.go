// Package linalg is a Python extension module written in Go that uses what
// a module author reaches for beyond saxpy (docs/extensions.md, "A module
// with a class"):
//
//   - axpby(alpha, x, beta, y, *, out=None) returns alpha*x + beta*y: five
//     parameters; one Python name over float32 and float64 arrays; NumPy's
//     out= convention (written into out and returned as given); otherwise a
//     new array where x is (its device, its queue, its kind of USM), which
//     dpnp combines with its own arrays without a copy;
//   - Moments, a class: Moments(n) keeps running sums of the rows it is
//     given (update(x) with a float32 or float64 row of n values, on the
//     host or on a SYCL device), and returns their mean (mean()) where the
//     last row was; count is a property.
//
// Build it with
//
//	python -m usmbridge.build examples/linalg -o .
package linalg

import (
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// Module defines the module.
func Module(m *pyext.Module) error {
	m.Doc("linalg in Go: axpby over float32 and float64 arrays of any memory, and running row moments.")
	params := []pyext.Param{pyext.P("alpha"), pyext.P("x", pyext.NDim(1)), pyext.P("beta"), pyext.P("y", pyext.NDim(1)),
		pyext.P("out", pyext.NDim(1), pyext.Writable(), pyext.Optional(), pyext.KeywordOnly())}
	doc := "alpha*x + beta*y, into out when given (and out returned), else a new array where x is."
	pyext.Func(m, "axpby", doc, axpby[float32], params)
	pyext.Func(m, "axpby", doc, axpby[float64], params)

	mo := pyext.NewClass[Moments](m, "Moments", "Running sums of rows of n values, and their mean.")
	pyext.Init1(mo, newMoments, pyext.P("n"))
	pyext.Method1(mo, "update", "Add the row x (n float32 or float64 values).", (*Moments).update, pyext.P("x", pyext.NDim(1)))
	pyext.Method0R(mo, "mean", "The mean of the rows so far, as a float64 array where the last row was.", (*Moments).mean)
	pyext.Property(mo, "count", "How many rows were added.", func(s *Moments) (int64, error) { return s.count, nil })
	return nil
}

// axpby computes alpha*x + beta*y element by element, on any memory: the
// rows are read and written through usm.CopyToSlice and CopyFromSlice,
// which wait on the arrays' queues.
func axpby[T float32 | float64](alpha float64, x pyext.Array[T], beta float64, y pyext.Array[T], out pyext.Array[T]) (pyext.Result, error) {
	n := x.Len()
	if y.Len() != n || (!out.IsNone() && out.Len() != n) {
		return pyext.Result{}, pyext.ValueError("x, y and out differ in length")
	}
	xs, ys := make([]T, n), make([]T, n)
	if err := usm.CopyToSlice(xs, x.USM()); err != nil {
		return pyext.Result{}, err
	}
	if err := usm.CopyToSlice(ys, y.USM()); err != nil {
		return pyext.Result{}, err
	}
	for i := range ys {
		ys[i] = T(alpha)*xs[i] + T(beta)*ys[i]
	}
	if !out.IsNone() {
		return out.Given(), usm.CopyFromSlice(out.USM(), ys)
	}
	r, err := pyext.EmptyLike[T](x)
	if err != nil {
		return pyext.Result{}, err
	}
	if err := usm.CopyFromSlice(r, ys); err != nil {
		r.Owner.Release()
		return pyext.Result{}, err
	}
	return pyext.NewArray(r), nil
}

// Moments is the state a Moments object holds: the sums of the rows, how
// many, and where the last row was (its mean is made there).
type Moments struct {
	sums  []float64
	count int64
	where pyext.Device
}

func newMoments(n int) (*Moments, error) {
	if n <= 0 {
		return nil, pyext.ArgValueError("n", "must be positive, got %d", n)
	}
	return &Moments{sums: make([]float64, n), where: pyext.Host}, nil
}

// update adds the row x, of either float type.
func (s *Moments) update(x pyext.AnyArray) error {
	if x.Len() != len(s.sums) {
		return pyext.ArgValueError("x", "must have %d values, got %d", len(s.sums), x.Len())
	}
	row := make([]float64, len(s.sums))
	if f, ok := pyext.As[float32](x); ok {
		r32 := make([]float32, len(row))
		if err := usm.CopyToSlice(r32, f.USM()); err != nil {
			return err
		}
		for i, v := range r32 {
			row[i] = float64(v)
		}
	} else if d, ok := pyext.As[float64](x); ok {
		if err := usm.CopyToSlice(row, d.USM()); err != nil {
			return err
		}
	} else {
		return pyext.ArgTypeError("x", "must be an array of float32 or float64, got %s", x.DType())
	}
	for i, v := range row {
		s.sums[i] += v
	}
	s.count++
	s.where = x.Device()
	return nil
}

// mean returns the mean row where the last row was.
func (s *Moments) mean() (*usm.Array, error) {
	if s.count == 0 {
		return nil, pyext.ValueError("no rows yet")
	}
	m := make([]float64, len(s.sums))
	for i, v := range s.sums {
		m[i] = v / float64(s.count)
	}
	a, err := pyext.Empty[float64](s.where, int64(len(m)))
	if err != nil {
		return nil, err
	}
	if err := usm.CopyFromSlice(a, m); err != nil {
		a.Owner.Release()
		return nil, err
	}
	return a, nil
}
