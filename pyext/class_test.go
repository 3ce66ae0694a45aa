package pyext

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

type plan struct{ a float64 }

func (p *plan) run(x Array[float32]) (float64, error) { return p.a, nil }

// A module with a class, a constructor, methods of each arity, properties
// and functions taking and returning its objects is a valid definition.
func TestClassDefinition(t *testing.T) {
	err := Check("m", func(m *Module) error {
		c := NewClass[plan](m, "Plan", "A plan.")
		Init1(c, func(a float64) (*plan, error) { return &plan{a}, nil }, P("a", Default(1.0)))
		Method1R(c, "run", "Run.", (*plan).run, P("x"))
		Method0(c, "reset", "", func(p *plan) error { return nil })
		Method3R(c, "three", "", func(p *plan, a, b int, s string) (*plan, error) { return p, nil }, P("a"), P("b"), P("s", KeywordOnly()))
		Method0R(c, "__repr__", "", func(p *plan) (string, error) { return "Plan", nil })
		Property(c, "size", "", func(p *plan) (int, error) { return 1, nil })
		SettableProperty(c, "a", "", func(p *plan) (float64, error) { return p.a, nil }, func(p *plan, a float64) error { p.a = a; return nil })
		Func2R(m, "merge", "", func(p, q *plan) (*plan, error) { return p, nil }, P("p"), P("q", Optional()))
		// Overloads over element types (issue 41: "class Plan: run
		// defined twice"), typed and of any arity.
		Method1R(c, "run", "", func(p *plan, x Array[float64]) (float64, error) { return p.a, nil }, P("x"))
		Method(c, "fill", "", func(p *plan, x Array[float32], v int) error { return nil }, []Param{P("x"), P("v", Default(0))})
		Method(c, "fill", "", func(p *plan, x Array[int32], v int) error { return nil }, []Param{P("x"), P("v", Default(0))})
		return nil
	})
	require.NoError(t, err)
}

// Each mistake is told, as Check and the import report them.
func TestClassDefinitionErrors(t *testing.T) {
	err := Check("m", func(m *Module) error {
		c := NewClass[plan](m, "Plan", "")
		Method0(c, "__init__", "", func(p *plan) error { return nil })
		Method0(c, "run", "", func(p *plan) error { return nil })
		Method0(c, "run", "", func(p *plan) error { return nil })
		Method1(c, "fill", "", func(p *plan, x Array[float32]) error { return nil }, P("x"))
		Method1(c, "fill", "", func(p *plan, x Array[float64]) error { return nil }, P("x"))
		Method1(c, "fill", "", func(p *plan, x Array[float64]) error { return nil }, P("x"))
		Method1(c, "fill", "", func(p *plan, y Array[float64]) error { return nil }, P("y"))
		Method1(c, "launch", "", func(p *plan, x Array[float32]) error { return nil }, P("x"))
		Method1(c, "launch", "", func(p *plan, x Array[float64]) error { return nil }, P("x"), NoWait())
		Property(c, "run", "", func(p *plan) (int, error) { return 0, nil })
		Method1(c, "bad", "", func(p *plan, self int) error { return nil }, P("self"))
		Method0(c, "class", "", func(p *plan) error { return nil })
		Init0(c, func() (*plan, error) { return nil, nil })
		Init0(c, func() (*plan, error) { return nil, nil })
		NewClass[plan](m, "Again", "")
		NewClass[*plan](m, "Pointer", "")
		NewClass[int](m, "1st", "")
		Func1(m, "takes", "", func(p *struct{}) error { return nil }, P("p"))
		Func1(m, "optional", "", func(p *plan) error { return nil }, P("p", Default(&plan{})))
		return nil
	})
	require.Error(t, err)
	for _, want := range []string{
		"class Plan: __init__ cannot be defined by a Go method",
		"class Plan: run defined twice",
		"class Plan: fill defined twice: parameter x differs (overloads differ only in their arrays' element types)",
		"class Plan: fill defined twice for the same element types",
		"class Plan: launch defined twice, with other parameters or options",
		"function Plan.bad: parameter self: a constructor's or method's parameter cannot be named self",
		`class Plan: name "class" is a Python keyword`,
		"class Plan: the constructor defined twice",
		"class Again: Go type pyext.plan is class Plan already",
		"class Pointer: its Go type *pyext.plan is a ptr",
		`class name "1st" is not a Python identifier`,
		"parameter p has Go type *struct {}, which pyext cannot read from a Python argument (a *struct {} is an object of a class defined with NewClass[struct {}] before it is used)",
		"function optional: parameter p: a parameter of class Plan has no Default",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// Item 7 of issue 29: a function or class named like what every module has
// (its Array type, ForkError, the C half's functions) replaced it silently;
// so did a function and a class of one name. Both are definition errors
// now, and Python keywords are not names.
func TestNameClashes(t *testing.T) {
	err := Check("m", func(m *Module) error {
		Func0(m, "Array", "", func() error { return nil })
		NewClass[plan](m, "ForkError", "")
		Func0(m, "_c_stats", "", func() error { return nil })
		Func0(m, "Plan", "", func() error { return nil })
		NewClass[struct{ x int }](m, "Plan", "")
		Func0(m, "lambda", "", func() error { return nil })
		Func1(m, "f", "", func(int) error { return nil }, P("def"))
		return nil
	})
	require.Error(t, err)
	for _, want := range []string{
		"function Array: the name is the module's Array type",
		"class ForkError: the name is the module's fork error",
		"function _c_stats: the name is a function of the module's C half",
		"class Plan: the name is function Plan already",
		`function name "lambda" is a Python keyword`,
		`parameter name "def" is a Python keyword`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// ArgTypeError and ArgValueError are ArgumentErrors of their kinds; the
// call gives them the function's name.
func TestArgErrors(t *testing.T) {
	err := ArgValueError("x", "must ascend, got %d", 3)
	assert.True(t, errors.Is(err, errkind.Value))
	nameFunc("Plan.run", err)
	assert.Equal(t, "Plan.run() argument 'x' must ascend, got 3", err.Error())
	err = ArgTypeError("y", "must be a list")
	assert.True(t, errors.Is(err, errkind.Type) && !errors.Is(err, errkind.Value))
	nameFunc("f", err)
	nameFunc("g", err) // named once, by the innermost call
	assert.True(t, strings.HasPrefix(err.Error(), "f() argument 'y'"))
}
