package pyext

import (
	"iter"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/pybridge"
)

type series struct{ vals []float64 }

type seriesError struct{}

func (seriesError) Error() string { return "series" }

type otherError struct{}

func (*otherError) Error() string { return "other" }

// The rest of the class and function model (issue 44) as a definition:
// static and class methods, overloaded constructors and static methods,
// special methods, optional scalars, choices, several results, sequences,
// exceptions and attributes of the module.
func TestModelDefinition(t *testing.T) {
	err := Check("m", func(m *Module) error {
		m.Const("__version__", "1.0")
		m.Const("MODES", []string{"a", "b"})
		NewException[seriesError](m, "Error", "doc", "ValueError")
		NewException[*otherError](m, "Other", "", "Error")
		c := NewClass[series](m, "Series", "")
		Init1(c, func(x Array[float32]) (*series, error) { return &series{}, nil }, P("x"))
		Init1(c, func(x Array[float64]) (*series, error) { return &series{}, nil }, P("x"))
		Method(c, "of", "", func(n int) (*series, error) { return &series{}, nil }, []Param{P("n")}, Static())
		Method(c, "sum", "", func(x Array[float32]) (float64, error) { return 0, nil }, []Param{P("x")}, Static())
		Method(c, "sum", "", func(x Array[float64]) (float64, error) { return 0, nil }, []Param{P("x")}, Static())
		Method(c, "kind", "", func(cls pybridge.Object, n int) (string, error) { return "", nil }, []Param{P("n")}, ClassMethod())
		Method0R(c, "__len__", "", func(s *series) (int, error) { return 0, nil })
		Method1R(c, "__getitem__", "", func(s *series, i int) (float64, error) { return 0, IndexError("no") }, P("i"))
		Method0R(c, "__iter__", "", func(s *series) (iter.Seq[float64], error) { return nil, nil })
		Method0R(c, "__getstate__", "", func(s *series) ([]float64, error) { return s.vals, nil })
		Method1(c, "__setstate__", "", func(s *series, x Array[float64]) error { return nil }, P("state"))
		Method(c, "__exit__", "", func(s *series, a, b, c pybridge.Object) (bool, error) { return false, nil },
			[]Param{P("t"), P("v"), P("tb")})
		Func(m, "minmax", "", func(x Array[float64]) (float64, float64, error) { return 0, 0, nil }, []Param{P("x")})
		Func2R(m, "pick", "", func(mode string, x *float64) (*float64, error) { return x, nil },
			P("mode", OneOf("a", "b"), Default("a")), P("x", Default(1.5)))
		return nil
	})
	require.NoError(t, err)
}

// What the definition cannot express is refused at definition, each
// mistake said.
func TestModelDefinitionErrors(t *testing.T) {
	err := Check("m", func(m *Module) error {
		c := NewClass[series](m, "Series", "")
		Method1(c, "static_receiver", "", func(s *series, n int) error { return nil }, P("n"), Static())
		Func0(m, "static_func", "", func() error { return nil }, Static())
		Method(c, "cls_first", "", func(n int) error { return nil }, nil, ClassMethod())
		Method(c, "__len__", "", func() (int, error) { return 0, nil }, nil, Static())
		Method(c, "cls_named", "", func(cls pybridge.Object, x int) error { return nil }, []Param{P("cls")}, ClassMethod())
		Method(c, "twice", "", func(n int) error { return nil }, []Param{P("n")}, Static())
		Method1(c, "twice", "", func(s *series, n int) error { return nil }, P("n"))
		Method1R(c, "__len__", "", func(s *series, n int) (int, error) { return 0, nil }, P("n"))
		Method0R(c, "__repr__", "", func(s *series) (int, error) { return 0, nil })
		Method0(c, "__getitem__", "", func(s *series) error { return nil })
		Method1R(c, "__setstate__", "", func(s *series, x int) (int, error) { return 0, nil }, P("x"))
		Func1(m, "choose", "", func(x int) error { return nil }, P("x", OneOf("a")))
		Func1(m, "choose2", "", func(x string) error { return nil }, P("x", OneOf("a", "b"), Default("c")))
		Func1(m, "choose3", "", func(x string) error { return nil }, P("x", OneOf("a", "a")))
		Func1(m, "ptr", "", func(x *float64) error { return nil }, P("x", Default(&[]float64{1}[0])))
		Func1(m, "ptr2", "", func(x *[]int) error { return nil }, P("x"))
		Func(m, "results", "", func() (int, error, error) { return 0, nil, nil }, nil)
		NewException[error](m, "Any", "", "")
		NewException[seriesError](m, "Bad", "", "NoSuchError")
		NewException[seriesError](m, "Again", "", "")
		NewException[seriesError](m, "Again2", "", "")
		m.Const("__name__", "x")
		m.Const("vals", map[string]int{})
		m.Const("Series", 1)
		return nil
	})
	require.Error(t, err)
	for _, want := range []string{
		"function Series.static_receiver: Static is an option of Method, whose func then takes no receiver",
		"function static_func: Static is an option of a class's Method",
		"method Series.cls_first: a class method's func takes the class first, a pybridge.Object",
		"function Series.__len__: Static cannot make __len__, a special method",
		"function Series.cls_named: parameter cls: a class method's parameter cannot be named cls",
		"class Series: twice defined twice, as a static method and a method",
		"class Series: __len__ takes 0 arguments besides the object, as Python calls it",
		"class Series: __repr__ must return a Python str",
		"class Series: __getitem__ takes 1 argument besides the object",
		"class Series: __setstate__ returns nothing",
		"function choose: parameter x: OneOf on a parameter of type int",
		"function choose2: parameter x: its Default 'c' is not one of OneOf's choices",
		"function choose3: parameter x: OneOf's choice 'a' appears twice",
		"function ptr: parameter x: Default of type *float64 for a parameter of type *float64 (the default is a float64",
		"function ptr2: parameter x has Go type *[]int, which pyext cannot read",
		"function results: result type error cannot be returned to Python",
		"exception Any: its Go type is error",
		"exception Bad: base NoSuchError is no built-in exception",
		"exception Again2: Go type pyext.seriesError is exception Again already",
		"attribute __name__: the name is one the import sets",
		"attribute vals: a map[string]int",
		"attribute Series: the name is class Series already",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// The stub says what each part of the model is: overloads as
// typing.overload (the NumPy array of each element type, then any
// producer), static and class methods, optional scalars, Literal choices,
// tuples, iterators, the Result union, exceptions and attributes.
func TestModelStub(t *testing.T) {
	stub, err := Stub("m", func(m *Module) error {
		m.Const("__version__", "1.0")
		m.Const("MODES", []string{"a", "b"})
		NewException[seriesError](m, "Error", "A series error.", "ValueError")
		NewException[*otherError](m, "Other", "", "Error")
		c := NewClass[series](m, "Series", "")
		Init1(c, func(x Array[float32]) (*series, error) { return &series{}, nil }, P("x", NDim(1)))
		Init1(c, func(x Array[float64]) (*series, error) { return &series{}, nil }, P("x", NDim(1)))
		Method(c, "of", "", func(n int) (*series, error) { return &series{}, nil }, []Param{P("n")}, Static())
		Method(c, "kind", "", func(cls pybridge.Object) (string, error) { return "", nil }, nil, ClassMethod())
		Method0R(c, "__iter__", "", func(s *series) (iter.Seq[float64], error) { return nil, nil })
		Func(m, "minmax", "", func(x Array[float64]) (float64, float64, error) { return 0, 0, nil }, []Param{P("x")})
		Func2R(m, "pick", "", func(mode string, x *float64) (*float64, error) { return x, nil },
			P("mode", OneOf("a", "b"), Default("a")), P("x", Optional()))
		Func2R(m, "into", "", func(x AnyArray, out AnyArray) (Result, error) { return out.Given(), nil },
			P("x", CContiguous(), Writable()), P("out", Optional(), KeywordOnly()))
		Func1(m, "on", "", func(d Device) error { return nil }, P("d"))
		return nil
	})
	require.NoError(t, err)
	for _, want := range []string{
		"__version__: Final = '1.0'\n",
		"MODES: Final[Tuple[str, ...]]\n",
		"class Error(ValueError):\n    \"\"\"A series error.\"\"\"\n",
		"class Other(Error):\n",
		"    @overload\n    def __init__(self, x: Annotated[NDArray[np.float32], dict(ndim=1)]) -> None: ...\n" +
			"    @overload\n    def __init__(self, x: Annotated[NDArray[np.float64], dict(ndim=1)]) -> None: ...\n" +
			"    @overload\n    def __init__(self, x: Annotated[_ArrayLike, dict(ndim=1)]) -> None: ...\n",
		"    @staticmethod\n    def of(n: int) -> Series: ...\n",
		"    @classmethod\n    def kind(cls) -> str: ...\n",
		"    def __iter__(self) -> Iterator[float]: ...\n",
		"def minmax(x: Annotated[_ArrayLike, dict(dtype='float64')]) -> Tuple[float, float]: ...\n",
		"def pick(mode: Literal['a', 'b'] = 'a', x: Optional[float] = None) -> Optional[float]: ...\n",
		"def into(x: Annotated[_ArrayLike, dict(order='C', writable=True)], *, out: Optional[_ArrayLike] = None) -> _Result: ...\n",
		"def on(d: _DeviceLike) -> None: ...\n",
		"_DeviceLike = Union[str, Tuple[int, int], _SyclDeviceLike, _SyclQueueLike]\n",
		"_Result = Union[Array, _ArrayLike, None]\n",
	} {
		assert.Contains(t, stub, want)
	}
	assert.False(t, strings.Contains(stub, "_GoIterator"), "the iterators' class is pyext's own")
}

// An error is raised as the module's exception when a link of its chain
// has the exception's type before any link that states a kind of its own
// or is a Python exception.
func TestExceptionFor(t *testing.T) {
	m := &Module{name: "m"}
	NewException[seriesError](m, "Error", "", "ValueError")
	NewException[*otherError](m, "Other", "", "Error")
	require.NoError(t, m.err())
	for err, want := range map[error]int{
		seriesError{}:                                         0,
		&otherError{}:                                         1,
		wrapErr{"ctx", seriesError{}}:                         0,
		wrapErr{"ctx", ValueError("x")}:                       -1,
		ValueError("x"):                                       -1,
		wrapErr{"ctx", wrapErr{"more", &otherError{}}}:        1,
		IndexError("no"):                                      -1,
		&ArgumentError{Param: "x", Err: seriesError{}}:        -1, // an argument's error: its kind
		wrapErr{"ctx", &pybridge.Exception{Type: "KeyError"}}: -1,
	} {
		assert.Equal(t, want, m.exceptionFor(err), "%v", err)
	}
}

type wrapErr struct {
	msg string
	err error
}

func (w wrapErr) Error() string { return w.msg + ": " + w.err.Error() }
func (w wrapErr) Unwrap() error { return w.err }
