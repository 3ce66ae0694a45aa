package pyext_test

import (
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// show prints what Python sees of the module define makes: the lines of
// its stub that declare (def, class, attribute) one of names, docstrings
// and decorators left out, or its definition errors.
func show(define func(m *pyext.Module) error, names ...string) {
	stub, err := pyext.Stub("mod", define)
	if err != nil {
		fmt.Println(err)
		return
	}
	// What every module has (the Array type, the helpers' aliases) ends
	// with the alias of a Result's type.
	_, own, _ := strings.Cut(stub, "\n_Result = ")
	for _, line := range strings.Split(own, "\n") {
		decl := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(line), " ..."), ":")
		for _, n := range names {
			if strings.HasPrefix(decl, "def "+n+"(") || strings.HasPrefix(decl, "class "+n+"(") ||
				decl == "class "+n || strings.HasPrefix(decl, n+": ") {
				fmt.Println(decl)
			}
		}
	}
}

// KeywordOnly is Python's *: the parameter and every one after it are
// keyword-only, so a required parameter may follow an optional one.
func ExampleKeywordOnly() {
	show(func(m *pyext.Module) error {
		pyext.Func3(m, "f", "", func(x, out pyext.Array[float32], n int) error { return nil },
			pyext.P("x"), pyext.P("out", pyext.Optional(), pyext.KeywordOnly()), pyext.P("n"))
		return nil
	}, "f")
	// Output:
	// def f(x: Annotated[_ArrayLike, dict(dtype='float32')], *, out: Optional[Annotated[_ArrayLike, dict(dtype='float32')]] = None, n: int) -> None
}

func minmax[T float32 | float64](x pyext.Array[T]) (lo, hi T, err error) {
	vals := x.Slice()
	if len(vals) == 0 {
		return 0, 0, pyext.ArgValueError("x", "must not be empty")
	}
	lo, hi = vals[0], vals[0]
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, nil
}

// Func adds a function of any arity; several results are a tuple, and
// functions of one name over other element types are its overloads, which
// the stub declares with typing.overload: the NumPy array of each element
// type, then any other array producer, whose element type the call checks.
func ExampleFunc() {
	show(func(m *pyext.Module) error {
		params := []pyext.Param{pyext.P("x", pyext.NDim(1))}
		pyext.Func(m, "minmax", "(min, max) of x.", minmax[float32], params)
		pyext.Func(m, "minmax", "", minmax[float64], params)
		return nil
	}, "minmax")
	// Output:
	// def minmax(x: Annotated[NDArray[np.float32], dict(ndim=1)]) -> Tuple[float, float]
	// def minmax(x: Annotated[NDArray[np.float64], dict(ndim=1)]) -> Tuple[float, float]
	// def minmax(x: Annotated[_ArrayLike, dict(ndim=1)]) -> Tuple[float, float]
}

// Stats is a Go type Python sees as a class.
type Stats struct{ vals []float64 }

// A class: an overloaded constructor, a static method (an alternative
// constructor), a class method (it gets the class it is called on: a
// Python subclass's too), methods, a property, and the special methods
// Python calls (len, indexing, iteration, pickling).
func ExampleNewClass() {
	show(func(m *pyext.Module) error {
		stats := pyext.NewClass[Stats](m, "Stats", "Values held by Go.")
		pyext.Init1(stats, func(x pyext.Array[float64]) (*Stats, error) {
			return &Stats{vals: append([]float64(nil), x.Slice()...)}, nil
		}, pyext.P("x"))
		pyext.Init1(stats, func(x pyext.Array[float32]) (*Stats, error) {
			s := &Stats{}
			for _, v := range x.Slice() {
				s.vals = append(s.vals, float64(v))
			}
			return s, nil
		}, pyext.P("x"))
		pyext.Method(stats, "zeros", "n zeros.", func(n int) (*Stats, error) {
			return &Stats{vals: make([]float64, n)}, nil
		}, []pyext.Param{pyext.P("n")}, pyext.Static())
		pyext.Method(stats, "name", "The class's name.", func(cls pybridge.Object) (string, error) {
			return "Stats", nil
		}, nil, pyext.ClassMethod())
		pyext.Property(stats, "n", "How many values.", func(s *Stats) (int, error) { return len(s.vals), nil })
		pyext.Method0R(stats, "__len__", "", func(s *Stats) (int, error) { return len(s.vals), nil })
		pyext.Method1R(stats, "__getitem__", "", func(s *Stats, i int) (float64, error) {
			if i < 0 || i >= len(s.vals) {
				return 0, pyext.IndexError("Stats index out of range")
			}
			return s.vals[i], nil
		}, pyext.P("i"))
		pyext.Method0R(stats, "__iter__", "", func(s *Stats) (iter.Seq[float64], error) {
			return func(yield func(float64) bool) {
				for _, v := range s.vals {
					if !yield(v) {
						return
					}
				}
			}, nil
		})
		pyext.Method0R(stats, "__getstate__", "", func(s *Stats) ([]float64, error) { return s.vals, nil })
		pyext.Method1(stats, "__setstate__", "", func(s *Stats, state pyext.Array[float64]) error {
			s.vals = append([]float64(nil), state.Slice()...)
			return nil
		}, pyext.P("state"))
		return nil
	}, "Stats", "__init__", "zeros", "name", "n", "__len__", "__getitem__", "__iter__", "__getstate__", "__setstate__")
	// Output:
	// class Stats
	// def __init__(self, x: NDArray[np.float64]) -> None
	// def __init__(self, x: NDArray[np.float32]) -> None
	// def __init__(self, x: _ArrayLike) -> None
	// def n(self) -> int
	// def zeros(n: int) -> Stats
	// def name(cls) -> str
	// def __len__(self) -> int
	// def __getitem__(self, i: int) -> float
	// def __iter__(self) -> Iterator[float]
	// def __getstate__(self) -> Annotated[Array, dict(dtype='float64', shape=(None,))]
	// def __setstate__(self, state: Annotated[_ArrayLike, dict(dtype='float64')]) -> None
}

// Static and ClassMethod make a method Method adds a static or a class
// method; what the definition cannot express is refused by Check (and the
// import), naming the method.
func ExampleMethod() {
	show(func(m *pyext.Module) error {
		stats := pyext.NewClass[Stats](m, "Stats", "")
		pyext.Method(stats, "of", "", func(n int) (*Stats, error) { return &Stats{}, nil },
			[]pyext.Param{pyext.P("n")}, pyext.Static())
		pyext.Method1R(stats, "__len__", "", func(s *Stats, n int) (int, error) { return 0, nil }, pyext.P("n"))
		return nil
	})
	// Output:
	// class Stats: __len__ takes 0 arguments besides the object, as Python calls it; the method has 1 (1 required)
}

// ShapeError is an error type of the module's own.
type ShapeError struct{ Got, Want int }

func (e *ShapeError) Error() string { return fmt.Sprintf("length %d, want %d", e.Got, e.Want) }

// NewException makes a Go error type an exception class of the module,
// which its users catch: here stats.ShapeError, a ValueError. A Go
// function returning a *ShapeError (or an error wrapping one, with
// fmt.Errorf's %w) raises it.
func ExampleNewException() {
	show(func(m *pyext.Module) error {
		pyext.NewException[*ShapeError](m, "ShapeError", "Arrays of lengths that do not fit.", "ValueError")
		pyext.Func2(m, "check", "", func(x, y pyext.Array[float64]) error {
			if x.Len() != y.Len() {
				return &ShapeError{Got: y.Len(), Want: x.Len()}
			}
			return nil
		}, pyext.P("x"), pyext.P("y"))
		return nil
	}, "ShapeError")
	err := error(&ShapeError{Got: 2, Want: 3})
	var se *ShapeError
	fmt.Println(errors.As(fmt.Errorf("check: %w", err), &se), se)
	// Output:
	// class ShapeError(ValueError)
	// true length 2, want 3
}

// OneOf makes a str parameter one of a set: the stub types it as their
// Literal, and another str is a ValueError naming the parameter. Const
// adds the module's attributes; a *T parameter tells None from T's zero.
func ExampleOneOf() {
	show(func(m *pyext.Module) error {
		m.Const("__version__", "1.0")
		m.Const("MODES", []string{"mean", "max"})
		pyext.Func3R(m, "reduce", "", func(x pyext.Array[float64], mode string, ddof *int) (float64, error) {
			return 0, nil
		}, pyext.P("x"), pyext.P("mode", pyext.OneOf("mean", "max"), pyext.Default("mean")),
			pyext.P("ddof", pyext.Optional(), pyext.KeywordOnly()))
		return nil
	}, "__version__", "MODES", "reduce")
	// Output:
	// __version__: Final = '1.0'
	// MODES: Final[Tuple[str, ...]]
	// def reduce(x: Annotated[_ArrayLike, dict(dtype='float64')], mode: Literal['mean', 'max'] = 'mean', *, ddof: Optional[int] = None) -> float
}

// Empty allocates on a Device argument, or one a class kept: a Device is
// a value, valid after the call that read it.
func ExampleEmpty() {
	where := pyext.Host // as a constructor's Device argument, kept in its value
	a, err := pyext.Empty[float32](where, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Owner.Release() // a Go function returning a hands its reference to Python instead
	fmt.Println(a.Shape, a.DType, usm.CopyFromSlice(a, []float32{1, 2, 3}))
	// Output:
	// [3] float32 <nil>
}
