package pyext

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// stubMember matches a member of a class in a stub: a method's name,
// parameters and result (properties are methods under @property), or a
// class variable's name and type.
var stubMember = regexp.MustCompile(`(?m)def (\w+)\(([^)]*)\)\s*->\s*([^:]+):|^\s+(\w+): (ClassVar\[[^\]]*\])`)

// arrayMembers is the Array class of a stub, member by member (docstrings
// and comments aside), whitespace made single spaces.
func arrayMembers(t *testing.T, stub string) []string {
	t.Helper()
	i := strings.Index(stub, "\nclass Array:")
	require.GreaterOrEqual(t, i, 0, "the stub has no Array class")
	body := stub[i+1:]
	if end := regexp.MustCompile(`\n\S`).FindStringIndex(body[1:]); end != nil {
		body = body[:end[0]+1]
	}
	body = regexp.MustCompile(`(?s)""".*?"""`).ReplaceAllString(body, "")
	body = regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(body, "")
	var out []string
	for _, m := range stubMember.FindAllStringSubmatch(body, -1) {
		out = append(out, strings.Join(strings.Fields(strings.Join(m[1:], " ")), " "))
	}
	return out
}

// The usmbridge package's stub (python/usmbridge/__init__.pyi, written by
// hand: the package binds its names lazily) declares the same Array as the
// stub every pyext module gets, member by member: the Array is one type.
func TestPackageStubArray(t *testing.T) {
	pyi, err := os.ReadFile(filepath.Join(testutil.ModuleRoot(), "python", "usmbridge", "__init__.pyi"))
	require.NoError(t, err)
	want := arrayMembers(t, stubOf(&Module{name: "m"}))
	require.NotEmpty(t, want)
	assert.Contains(t, want, "dtype self Union[np.dtype[Any], str]", "the parse reads the members' types")
	assert.Equal(t, want, arrayMembers(t, string(pyi)))
}

// Issue 41, item 7: what a stub once wrote for definitions pyext accepted,
// which was not Python (the fuzz target and test/hostilemod hold every
// stub to Python and mypy; this says each case where a reader sees it).
func TestStubOfWhatOnceBrokeIt(t *testing.T) {
	type plan struct{}
	m := &Module{name: "m"}
	Func1(m, "Optional", "", func(x float64) error { return nil }, P("x", Default(math.Inf(1))))
	Func1(m, "np", "", func(x float32) error { return nil }, P("x", Default(float32(math.NaN()))))
	c := NewClass[plan](m, "Plan", "")
	Method0R(c, "int", "", func(*plan) (int, error) { return 0, nil })
	Method0R(c, "Plan", "", func(p *plan) (*plan, error) { return p, nil })
	require.NoError(t, m.err())
	stub := stubOf(m)
	for _, want := range []string{
		"def Optional(x: float = 1e999) -> None",
		"def np(x: float = 1e999-1e999) -> None",
		"    def int(self) -> _builtins.int",
		"    def Plan(self) -> _Plan",
		"_Plan = Plan\n",
		"import typing as _typing\n",
		"import numpy as _numpy\n",
		"dtype(self) -> Union[_numpy.dtype[Any], str]", // Union, Any and str are not hidden
	} {
		assert.Contains(t, stub, want)
	}
	assert.NotContains(t, stub, "Optional,", "the stub imports no Optional the module's function hides")
	assert.Contains(t, m.funcs[0].doc, "Optional(x=1e999)\n--\n\n")
	assert.Contains(t, m.funcs[1].doc, "np(x=1e999-1e999)\n--\n\n")
}

// A name's refusal says why (docs/extensions.md, "Names"); docs CPython
// cannot keep, a constructor's parameter named self, a parameter name
// inspect cannot read and a str default Python cannot hold are refused.
func TestDefinitionRefusals(t *testing.T) {
	type plan struct{}
	type other struct{}
	err := Check("m", func(m *Module) error {
		m.Doc("a\x00b")
		Func0(m, "\ufb01t", "", func() error { return nil })
		Func0(m, "doc", "cut\x00here", func() error { return nil })
		Func0(m, "latin1", "caf\xe9", func() error { return nil })
		Func1(m, "s", "", func(string) error { return nil }, P("s", Default("\xff")))
		Func1(m, "ascii", "", func(float64) error { return nil }, P("ñ"))
		c := NewClass[plan](m, "Plan", "nul\x00")
		Init1(c, func(float64) (*plan, error) { return nil, nil }, P("self"))
		// a property may be named self, and a setter's value is named so
		SettableProperty(c, "self", "", func(*plan) (float64, error) { return 0, nil }, func(*plan, float64) error { return nil })
		SettableProperty(c, "größe", "", func(*plan) (float64, error) { return 0, nil }, func(*plan, float64) error { return nil })
		NewClass[other](m, "naïve", "")
		Func1(m, "self", "", func(float64) error { return nil }, P("self"))
		return nil
	})
	require.Error(t, err)
	want := []string{
		"the doc of the module has a NUL character",
		`function name "ﬁt" is not in the NFKC form to which Python normalizes the identifiers it reads (code that writes it names "fit")`,
		"function doc: its doc has a NUL character",
		"function latin1: its doc is not valid UTF-8",
		"function s: parameter s: its Default is not valid UTF-8",
		`function ascii: parameter name "ñ" is not ASCII`,
		"the doc of class Plan has a NUL character",
		"function Plan: parameter self: a constructor's or method's parameter cannot be named self",
	}
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
	assert.Len(t, strings.Split(err.Error(), "\n"), len(want), "%v", err)
}
