// Package hostilemod is an extension module of names, docs and defaults
// that pyext accepts and that once broke the module or its stub (issue
// 41): non-ASCII names of functions, classes and members (the module itself is built as "hostilé", which
// CPython imports through PyInitU_hostil_fva, PEP 489), soft keywords,
// functions and members named like what the stub imports (Optional, np,
// int, property) or defines (_ArrayLike), a member named like its own
// class, docs with quotes, backslashes, control characters, tabs and a
// signature of their own, and defaults of inf, nan, the ends of the
// integer types and strings with escapes; and, beside names that hide what
// it writes (Annotated, Final, overload, NDArray, staticmethod, ...), the
// class and function model of issue 44. test/extension_test.go's
// TestHostileNames imports it and holds its stub to what the module says
// (test_hostile.py); test/stubs_test.go holds the stub to mypy --strict.
package hostilemod

import (
	"iter"
	"math"

	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/pyext"
)

// Docs that Python's source cannot hold as they are.
const (
	quotes   = `Quotes: """triple""", ''' and a backslash \ at the end: \`
	controls = "A carriage return\r, a vertical tab\v, a form feed\f, \x1c, \x7f, a NEL \u0085, " +
		"a line separator \u2028 and an escape \x1b[0m, then a quote: \""
	tabbed  = "A tab\tinside, then\n\tan indented line\n    and one of spaces."
	blank   = "Lines of only whitespace follow.\n   \n\t\n  \u3000\nThe end."
	indent  = "First line.\n\n    Indented code:\n        x = 1\n    back."
	hostile = "Not a signature(x)\n--\n\nbut text that looks like one."
)

// Plan is a class whose members are named like what the stub writes.
type Plan struct {
	a    float64
	name string
	self float64
}

// Token is a class made only by Go, whose doc starts with a signature.
type Token struct{ id int }

// Vec is a class named with two leading underscores.
type Vec struct{ _ byte }

// Helper is a class named like the stub's own helper _ArrayLike.
type Helper struct{ _ byte }

// Größe is a class of a non-ASCII name.
type Größe struct{ _ byte }

// hostileError is raised as hostilé.Error.
type hostileError struct{}

func (hostileError) Error() string { return "hostile" }

// AnyClass is a class named Any, like what the stub imports from typing.
type AnyClass struct{ n int }

// Module defines the module.
func Module(m *pyext.Module) error {
	m.Doc("The hostile module.\n\n" + quotes + "\n" + controls + "\n" + tabbed)

	pyext.Func3R(m, "naïve", "Return x, y and z: inf, -inf and nan by default.",
		func(x float64, y float32, z float64) ([]float64, error) { return []float64{x, float64(y), z}, nil },
		pyext.P("x", pyext.Default(math.Inf(1))), pyext.P("y", pyext.Default(float32(math.Inf(-1)))),
		pyext.P("z", pyext.Default(math.NaN())))
	pyext.Func4R(m, "ends", "The ends of the integer types, as defaults.",
		func(a uint64, b int64, c int8, d uint) (string, error) { return "", nil },
		pyext.P("a", pyext.Default(uint64(math.MaxUint64))), pyext.P("b", pyext.Default(int64(math.MinInt64))),
		pyext.P("c", pyext.Default(int8(-128))), pyext.P("d", pyext.Default(uint(0)), pyext.KeywordOnly()))
	pyext.Func2R(m, "texts", tabbed, func(s, t string) (string, error) { return s + t, nil },
		pyext.P("s", pyext.Default("it's \"quoted\" \\ a\nb\x00c é \u2028 😀")), pyext.P("t", pyext.Default(`'`)))
	pyext.Func1R(m, "ñ", blank, func(x float32) (float32, error) { return x, nil }, pyext.P("x", pyext.Default(float32(0.1))))
	pyext.Func1R(m, "where", indent, func(d pyext.Device) (string, error) { return d.String(), nil },
		pyext.P("device", pyext.Default("cpu")))

	// Named like what the stub imports or writes.
	for _, name := range []string{"Optional", "Tuple", "Union", "Literal", "ClassVar", "Protocol", "Buffer",
		"np", "int", "float", "str", "bool", "object", "dict", "memoryview", "property", "RuntimeError",
		"typing", "builtins", "numpy", "Annotated", "Final", "overload", "Iterator", "NDArray", "staticmethod",
		"classmethod", "ValueError", "_numpy_typing"} {
		pyext.Func1R(m, name, "Return x.", func(x pyext.AnyArray) (pyext.AnyArray, error) { return x, nil }, pyext.P("x"))
	}
	// What the class and function model writes (issue 44), where the names
	// above hide what the stub means by them: Annotated array metadata,
	// overloads of NumPy arms, Literal, Final attributes, an exception of
	// a built-in base, tuples, iterators, static and class methods.
	m.Const("Final_value", "x")
	m.Const("limits", []int{1, 2})
	pyext.NewException[hostileError](m, "Error", quotes, "ValueError")
	pyext.Func(m, "pair", "(x[0], n) of a 1-D float64 array.", func(x pyext.Array[float64], n int) (float64, int, error) {
		return x.Slice()[0], n, nil
	}, []pyext.Param{pyext.P("x", pyext.NDim(1)), pyext.P("n", pyext.Default(1))})
	pyext.Func1R(m, "kind", "The element type of x.", func(x pyext.Array[float32]) (string, error) { return "float32", nil }, pyext.P("x"))
	pyext.Func1R(m, "kind", "", func(x pyext.Array[float64]) (string, error) { return "float64", nil }, pyext.P("x"))
	pyext.Func1R(m, "choose", "", func(s string) (string, error) { return s, nil }, pyext.P("s", pyext.OneOf("a", `\`), pyext.Default("a")))
	pyext.Func1R(m, "count", "", func(n int) (iter.Seq[int], error) { return func(yield func(int) bool) {}, nil }, pyext.P("n"))
	// Soft keywords are names.
	for _, name := range []string{"match", "case", "type"} {
		pyext.Func0R(m, name, quotes, func() (bool, error) { return true, nil })
	}

	vec := pyext.NewClass[Vec](m, "__Vec", hostile)
	pyext.Init0(vec, func() (*Vec, error) { return &Vec{}, nil })
	plan := pyext.NewClass[Plan](m, "Plan", controls)
	pyext.Init2(plan, func(a float64, name string) (*Plan, error) { return &Plan{a: a, name: name}, nil },
		pyext.P("a", pyext.Default(math.NaN())), pyext.P("name", pyext.Default(`"""`), pyext.KeywordOnly()))
	pyext.Method0R(plan, "int", "An int, from a method named int.", func(p *Plan) (int, error) { return 7, nil })
	pyext.Method1R(plan, "Optional", "x, from a method named Optional.", func(p *Plan, x int) (int, error) { return x, nil },
		pyext.P("x", pyext.Default(1)))
	pyext.Method0R(plan, "Plan", "A new Plan, from a method named like its class.", func(p *Plan) (*Plan, error) {
		return &Plan{a: p.a}, nil
	})
	pyext.Method0R(plan, "Array", "An Array, from a method named Array.", func(p *Plan) ([]float64, error) { return []float64{p.a}, nil })
	pyext.Method1R(plan, "property", "Whether x is not None.", func(p *Plan, x pyext.AnyArray) (bool, error) { return !x.IsNone(), nil },
		pyext.P("x", pyext.Optional()))
	pyext.Method1R(plan, "np", hostile, func(p *Plan, v *Vec) (*Vec, error) { return v, nil }, pyext.P("v", pyext.Optional()))
	pyext.SettableProperty(plan, "self", "A property named self.", func(p *Plan) (float64, error) { return p.self, nil },
		func(p *Plan, v float64) error { p.self = v; return nil })
	pyext.Property(plan, "float", blank, func(p *Plan) (float64, error) { return p.a, nil })
	pyext.Property(plan, "größe", indent, func(p *Plan) (string, error) { return p.name, nil })
	pyext.Method1R(plan, "any", "An object, as given.", func(p *Plan, o pybridge.Object) (pybridge.Object, error) { return o, nil },
		pyext.P("o"))

	pyext.Method(plan, "staticmethod", "A static method named staticmethod.", func(n int) (int, error) { return n, nil },
		[]pyext.Param{pyext.P("n")}, pyext.Static())
	pyext.Method(plan, "classmethod", "A class method named classmethod.", func(cls pybridge.Object) (bool, error) { return true, nil },
		nil, pyext.ClassMethod())
	pyext.Method(plan, "overload", "An overloaded static method named overload.", func(x pyext.Array[float32]) (int, error) { return 32, nil },
		[]pyext.Param{pyext.P("x")}, pyext.Static())
	pyext.Method(plan, "overload", "", func(x pyext.Array[float64]) (int, error) { return 64, nil },
		[]pyext.Param{pyext.P("x")}, pyext.Static())
	pyext.Method0R(plan, "Iterator", "", func(p *Plan) (iter.Seq[float64], error) { return func(yield func(float64) bool) {}, nil })
	tok := pyext.NewClass[Token](m, "Token", "Token(x)\n--\n\nA token: its doc began with a signature of its own.")
	pyext.Property(tok, "id", "", func(t *Token) (int, error) { return t.id, nil })
	pyext.Method1R(tok, "__eq__", "", func(t, u *Token) (bool, error) { return t.id == u.id, nil }, pyext.P("other"))
	pyext.Func1R(m, "token", "A Token.", func(id int) (*Token, error) { return &Token{id: id}, nil }, pyext.P("id"))

	pyext.NewClass[Helper](m, "_ArrayLike", "")
	anyc := pyext.NewClass[AnyClass](m, "Any", "A class named Any.")
	pyext.Property(anyc, "n", "", func(a *AnyClass) (int, error) { return a.n, nil })
	pyext.Func1R(m, "make_any", "An Any.", func(n int) (*AnyClass, error) { return &AnyClass{n: n}, nil }, pyext.P("n"))
	pyext.Func1R(m, "any_n", "a.n.", func(a *AnyClass) (int, error) {
		if a == nil {
			return -1, nil
		}
		return a.n, nil
	}, pyext.P("a", pyext.Optional()))
	g := pyext.NewClass[Größe](m, "Größe", "")
	pyext.Method2R(g, "größe", "", func(_ *Größe, x pyext.AnyArray, n int) (int, error) { return n, nil },
		pyext.P("x"), pyext.P("n", pyext.Default(2)))
	return nil
}
