package extmod

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// The rest of the class and function model (issue 44): the module's own
// exceptions and attributes, a str chosen from a set, optional scalars,
// several results, static and class methods, overloaded constructors and
// static methods, the special methods (test_model.py), and a class
// Python subclasses and pickles.

// modelError is raised as extmod.Error (a ValueError).
type modelError struct{ msg string }

func (e *modelError) Error() string { return e.msg }

// missingKey is raised as extmod.MissingKey, a KeyError.
type missingKey string

func (k missingKey) Error() string { return "no key " + strconv.Quote(string(k)) }

// shapeError is raised as extmod.ShapeError, an extmod.Error.
type shapeError struct{ got, want int }

func (e shapeError) Error() string { return fmt.Sprintf("length %d, want %d", e.got, e.want) }

// Series is a sequence of float64 values held by Go: a class with the
// special methods Python calls, pickling, and overloaded constructors.
type Series struct {
	vals    []float64
	entered int
	open    bool
	tag     int
	stored  *usm.Array // an argument kept past its call (store): released by Close
}

// seriesCloses counts the Series Go closed, and each tag's closes
// (test_class_lifecycle.py's model).
var (
	seriesCloses atomic.Int64
	tagCloses    sync.Map // tag -> *atomic.Int64
)

func (s *Series) Close() error {
	seriesCloses.Add(1)
	n, _ := tagCloses.LoadOrStore(s.tag, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	if s.stored != nil {
		s.stored.Owner.Release()
		s.stored = nil
	}
	return nil
}

// store keeps x in the Series' value past the call, in place of what it
// stored before.
func (s *Series) store(x pyext.Array[float64]) error {
	k, err := x.Keep()
	if err != nil {
		return err
	}
	if s.stored != nil {
		s.stored.Owner.Release()
	}
	s.stored = k
	return nil
}

// storedArray returns the array the Series stores as a new Array: the
// Array takes a reference of its own (Retain), for the Series keeps its.
func (s *Series) storedArray() (pyext.Result, error) {
	if s.stored == nil {
		return pyext.Result{}, nil
	}
	if !s.stored.Owner.Retain() {
		return pyext.Result{}, pyext.ValueError("the stored array's memory is gone")
	}
	a := *s.stored
	return pyext.NewArray(&a), nil
}

func defineModel(m *pyext.Module) {
	m.Const("__version__", "1.0")
	m.Const("MODES", []string{"mean", "max"})
	m.Const("LIMIT", 3)
	m.Const("EPS", float32(0.5))
	pyext.NewException[*modelError](m, "Error", "extmod's own error: a ValueError.", "ValueError")
	pyext.NewException[shapeError](m, "ShapeError", "Arrays whose lengths do not fit.", "Error")
	pyext.NewException[missingKey](m, "MissingKey", "", "KeyError")
	pyext.Func1(m, "raise_error", "Fail as how says: error, shape, wrapped (a ShapeError behind fmt.Errorf), "+
		"kinded (a ShapeError behind pyext.ValueError), index, key.", raiseError, pyext.P("how"))
	pyext.Func2R(m, "reduce", "x reduced as mode says.", reduce,
		pyext.P("x", pyext.NDim(1)), pyext.P("mode", pyext.OneOf("mean", "max"), pyext.Default("mean")))
	pyext.Func1R(m, "twice", "2*x; None for None (a *float64 tells None from 0).", func(x *float64) (*float64, error) {
		if x == nil {
			return nil, nil
		}
		y := 2 * *x
		return &y, nil
	}, pyext.P("x", pyext.Optional()))
	pyext.Func2R(m, "opt_name", "name, or '<none>' for None; n given or not.", func(name *string, n *int) (string, error) {
		s := "<none>"
		if name != nil {
			s = *name
		}
		if n != nil {
			s += "/" + strconv.Itoa(*n)
		}
		return s, nil
	}, pyext.P("name"), pyext.P("n", pyext.Default(7), pyext.KeywordOnly()))
	pyext.Func(m, "minmax", "(min, max) of x.", minmax, []pyext.Param{pyext.P("x", pyext.NDim(1))})
	pyext.Func(m, "split", "x's halves as new Arrays, and x itself as given.", split,
		[]pyext.Param{pyext.P("x", pyext.NDim(1))})
	pyext.Func(m, "split_fails", "A tuple whose last value cannot be returned (a closed Box): the others are let go.",
		splitFails, []pyext.Param{pyext.P("x", pyext.NDim(1))})
	pyext.Func(m, "stats_into", "(sum, count) of x, with x*k into out when given (out as given), else a new Array.",
		statsInto, []pyext.Param{pyext.P("x", pyext.NDim(1)), pyext.P("k"), pyext.P("out", pyext.Optional(), pyext.KeywordOnly(), pyext.Writable())},
		pyext.ReleaseGIL())
	pyext.Func1R(m, "count_up", "0, 1, ..., n-1, one at a time: a Go sequence.", func(n int) (iter.Seq[int], error) {
		return func(yield func(int) bool) {
			for i := range n {
				if !yield(i) {
					return
				}
			}
		}, nil
	}, pyext.P("n"))
	pyext.Func0R(m, "panicky", "A sequence that yields 1 and panics.", func() (iter.Seq[int], error) {
		return func(yield func(int) bool) {
			if yield(1) {
				panic("the sequence's own")
			}
		}, nil
	})
	pyext.Func0R(m, "stopped_seqs", "How many Go sequences ended before their end (the iterator dropped).",
		func() (int64, error) { return stoppedSeqs.Load(), nil })
	pyext.Func0R(m, "series_closes", "How many Series Go closed.", func() (int64, error) { return seriesCloses.Load(), nil })
	pyext.Func1(m, "keep_box", "Keep b's value (for split_fails: delete b, and it is a closed value).",
		func(b *Box) error { closedBox = b; return nil }, pyext.P("b"))
	pyext.Func0R(m, "live_arrays", "How many Arrays have Go state.", func() (int64, error) { return pyext.Live()["arrays"], nil })

	series := pyext.NewClass[Series](m, "Series", "float64 values held by Go: a sequence.")
	pyext.Func1R(m, "series_len", "len(s).", func(s *Series) (int, error) { return len(s.vals), nil }, pyext.P("s"))
	pyext.Init1(series, func(x pyext.Array[float64]) (*Series, error) {
		return seriesOf(x.USM())
	}, pyext.P("x", pyext.NDim(1)))
	pyext.Init1(series, func(x pyext.Array[float32]) (*Series, error) {
		return seriesOf(x.USM())
	}, pyext.P("x", pyext.NDim(1)))
	pyext.Method(series, "ramp", "0, 1, ..., n-1 as a Series: a static method.", func(n int) (*Series, error) {
		s := &Series{vals: make([]float64, n)}
		for i := range s.vals {
			s.vals[i] = float64(i)
		}
		return s, nil
	}, []pyext.Param{pyext.P("n")}, pyext.Static())
	pyext.Method(series, "total", "The sum of x: an overloaded static method.", func(x pyext.Array[float32]) (float64, error) {
		return sum32(x.Slice()), nil
	}, []pyext.Param{pyext.P("x", pyext.NDim(1))}, pyext.Static())
	pyext.Method(series, "total", "", func(x pyext.Array[float64]) (float64, error) {
		t := 0.0
		for _, v := range x.Slice() {
			t += v
		}
		return t, nil
	}, []pyext.Param{pyext.P("x", pyext.NDim(1))}, pyext.Static())
	pyext.Method(series, "kind", "The name of the class it is called on: a class method.", func(cls pybridge.Object) (string, error) {
		var name string
		err := pyext.Python().Do(func(g *pybridge.GIL) error {
			n, err := g.GetAttr(cls, "__name__")
			if err != nil {
				return err
			}
			defer g.DecRef(n)
			name, _ = g.AsString(n)
			return nil
		})
		return name, err
	}, nil, pyext.ClassMethod())
	pyext.Method0R(series, "__len__", "", func(s *Series) (int, error) { return len(s.vals), nil })
	pyext.Method1R(series, "__getitem__", "", func(s *Series, i int) (float64, error) {
		if i < 0 {
			i += len(s.vals)
		}
		if i < 0 || i >= len(s.vals) {
			return 0, pyext.IndexError("Series index out of range")
		}
		return s.vals[i], nil
	}, pyext.P("i"))
	pyext.Method0R(series, "__iter__", "", func(s *Series) (iter.Seq[float64], error) {
		vals := s.vals
		return func(yield func(float64) bool) {
			for i, v := range vals {
				if !yield(v) {
					if i+1 < len(vals) {
						stoppedSeqs.Add(1)
					}
					return
				}
			}
		}, nil
	})
	pyext.Method1R(series, "__contains__", "", func(s *Series, v float64) (bool, error) {
		for _, x := range s.vals {
			if x == v {
				return true, nil
			}
		}
		return false, nil
	}, pyext.P("v"))
	pyext.Method0R(series, "__repr__", "", func(s *Series) (string, error) {
		parts := make([]string, len(s.vals))
		for i, v := range s.vals {
			parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		return "Series([" + strings.Join(parts, ", ") + "])", nil
	})
	pyext.Method1R(series, "__eq__", "", func(s, o *Series) (bool, error) {
		if len(s.vals) != len(o.vals) {
			return false, nil
		}
		for i := range s.vals {
			if s.vals[i] != o.vals[i] {
				return false, nil
			}
		}
		return true, nil
	}, pyext.P("other"))
	pyext.Method0R(series, "__enter__", "", func(s *Series) (*Series, error) {
		s.entered++
		s.open = true
		return s, nil
	})
	pyext.Method(series, "__exit__", "", func(s *Series, typ, val, tb pybridge.Object) (bool, error) {
		s.open = false
		return false, nil
	}, []pyext.Param{pyext.P("exc_type"), pyext.P("exc"), pyext.P("tb")})
	pyext.Property(series, "open", "Inside a with block.", func(s *Series) (bool, error) { return s.open, nil })
	pyext.Property(series, "entered", "How many with blocks entered it.", func(s *Series) (int, error) { return s.entered, nil })
	pyext.Method0R(series, "__getstate__", "", func(s *Series) ([]float64, error) {
		return append([]float64(nil), s.vals...), nil
	})
	pyext.Method1(series, "__setstate__", "", func(s *Series, state pyext.Array[float64]) error {
		vals := make([]float64, state.Len())
		if err := usm.CopyToSlice(vals, state.USM()); err != nil {
			return err
		}
		if len(vals) > 0 && math.IsNaN(vals[0]) {
			return pyext.ValueError("a state that starts with nan")
		}
		s.vals = vals
		return nil
	}, pyext.P("state", pyext.NDim(1)))
	pyext.Method1(series, "hold", "Keep x's memory in the Series' value past the call (Keep).", func(s *Series, x pyext.Array[float64]) error {
		k, err := x.Keep()
		if err != nil {
			return err
		}
		defer k.Owner.Release()
		vals := make([]float64, x.Len())
		if err := usm.CopyToSlice(vals, k); err != nil {
			return err
		}
		s.vals = append(s.vals, vals...)
		return nil
	}, pyext.P("x", pyext.NDim(1)), pyext.ReleaseGIL())
	pyext.Method1(series, "store", "Keep x in the Series' value past the call (Close releases it).", (*Series).store,
		pyext.P("x", pyext.NDim(1)))
	pyext.Method1(series, "store_nogil", "store, releasing the GIL.", (*Series).store, pyext.P("x", pyext.NDim(1)), pyext.ReleaseGIL())
	pyext.Method0R(series, "stored", "The array stored, as a new Array (None for none).", (*Series).storedArray)
	pyext.Method0R(series, "stored_sum", "The sum of the array stored, read now.", func(s *Series) (float64, error) {
		if s.stored == nil {
			return 0, pyext.ValueError("nothing stored")
		}
		vals := make([]float64, s.stored.Shape[0])
		if err := usm.CopyToSlice(vals, s.stored); err != nil {
			return 0, err
		}
		t := 0.0
		for _, v := range vals {
			t += v
		}
		return t, nil
	})
	pyext.SettableProperty(series, "tag", "A number of the caller's, which tag_closes counts by.",
		func(s *Series) (int, error) { return s.tag, nil }, func(s *Series, t int) error { s.tag = t; return nil })
	pyext.Func1R(m, "tag_closes", "How many times Go closed the Series tagged tag.", func(tag int) (int64, error) {
		if n, ok := tagCloses.Load(tag); ok {
			return n.(*atomic.Int64).Load(), nil
		}
		return 0, nil
	}, pyext.P("tag"))
	pyext.Method(series, "scaled", "x*k into out when given (out as given), else a new Array where x is; and the Series' length.",
		func(s *Series, x pyext.Array[float64], k float64, out pyext.Array[float64]) (pyext.Result, int, error) {
			r, err := scaleInto(x, k, out)
			return r, len(s.vals), err
		}, []pyext.Param{pyext.P("x", pyext.NDim(1)), pyext.P("k"), pyext.P("out", pyext.Optional(), pyext.KeywordOnly(), pyext.Writable())},
		pyext.ReleaseGIL())
}

var stoppedSeqs atomic.Int64

func seriesOf(a *usm.Array) (*Series, error) {
	n := 1
	for _, d := range a.Shape {
		n *= int(d)
	}
	s := &Series{vals: make([]float64, n)}
	switch a.DType.String() {
	case "float32":
		v := make([]float32, n)
		if err := usm.CopyToSlice(v, a); err != nil {
			return nil, err
		}
		for i, x := range v {
			s.vals[i] = float64(x)
		}
	default:
		if err := usm.CopyToSlice(s.vals, a); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func sum32(v []float32) float64 {
	t := 0.0
	for _, x := range v {
		t += float64(x)
	}
	return t
}

func raiseError(how string) error {
	switch how {
	case "error":
		return &modelError{"extmod says no"}
	case "shape":
		return shapeError{2, 3}
	case "wrapped":
		return fmt.Errorf("splitting: %w", shapeError{4, 5})
	case "kinded": // a kind of its own in front: pyext's ValueError keeps its meaning
		return errors.Join(pyext.ValueError("plain"), shapeError{1, 2})
	case "index":
		return pyext.IndexError("no item %d", 3)
	case "key":
		return missingKey("k")
	}
	return errors.New("how is one of error, shape, wrapped, kinded, index, key")
}

func reduce(x pyext.Array[float64], mode string) (float64, error) {
	vals := make([]float64, x.Len())
	if err := usm.CopyToSlice(vals, x.USM()); err != nil {
		return 0, err
	}
	if len(vals) == 0 {
		return 0, &modelError{"reduce() of an empty array"}
	}
	r := vals[0]
	switch mode {
	case "mean":
		r = 0
		for _, v := range vals {
			r += v
		}
		r /= float64(len(vals))
	case "max":
		for _, v := range vals {
			r = max(r, v)
		}
	}
	return r, nil
}

func minmax(x pyext.Array[float64]) (lo, hi float64, err error) {
	vals := make([]float64, x.Len())
	if err := usm.CopyToSlice(vals, x.USM()); err != nil {
		return 0, 0, err
	}
	if len(vals) == 0 {
		return 0, 0, shapeError{0, 1}
	}
	lo, hi = vals[0], vals[0]
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, nil
}

func split(x pyext.Array[float64]) (*usm.Array, *usm.Array, pyext.Array[float64], error) {
	vals := make([]float64, x.Len())
	if err := usm.CopyToSlice(vals, x.USM()); err != nil {
		return nil, nil, x, err
	}
	h := len(vals) / 2
	a, err := newLike(x, vals[:h])
	if err != nil {
		return nil, nil, x, err
	}
	b, err := newLike(x, vals[h:])
	if err != nil {
		a.Owner.Release()
		return nil, nil, x, err
	}
	return a, b, x, nil
}

// splitFails returns a tuple whose last value cannot be made: the Arrays
// before it are let go (test_model.py counts the live arrays).
func splitFails(x pyext.Array[float64]) (*usm.Array, []float64, *Box, error) {
	a, err := newLike(x, []float64{1, 2})
	if err != nil {
		return nil, nil, nil, err
	}
	return a, []float64{3}, closedBox, nil
}

// closedBox is a Box whose object went (closed): returning it is refused.
var closedBox *Box

func newLike(x pyext.Array[float64], vals []float64) (*usm.Array, error) {
	a, err := pyext.EmptyLike[float64](x, int64(len(vals)))
	if err != nil {
		return nil, err
	}
	if err := usm.CopyFromSlice(a, vals); err != nil {
		a.Owner.Release()
		return nil, err
	}
	return a, nil
}

func statsInto(x pyext.Array[float64], k float64, out pyext.Array[float64]) (float64, int, pyext.Result, error) {
	vals := make([]float64, x.Len())
	if err := usm.CopyToSlice(vals, x.USM()); err != nil {
		return 0, 0, pyext.Result{}, err
	}
	t := 0.0
	for _, v := range vals {
		t += v
	}
	r, err := scaleInto(x, k, out)
	return t, len(vals), r, err
}

// scaleInto writes x*k into out when given (returned as given), else into
// a new array where x is.
func scaleInto(x pyext.Array[float64], k float64, out pyext.Array[float64]) (pyext.Result, error) {
	vals := make([]float64, x.Len())
	if err := usm.CopyToSlice(vals, x.USM()); err != nil {
		return pyext.Result{}, err
	}
	for i := range vals {
		vals[i] *= k
	}
	if !out.IsNone() {
		if out.Len() != len(vals) {
			return pyext.Result{}, shapeError{out.Len(), len(vals)}
		}
		return out.Given(), usm.CopyFromSlice(out.USM(), vals)
	}
	a, err := newLike(x, vals)
	if err != nil {
		return pyext.Result{}, err
	}
	return pyext.NewArray(a), nil
}
