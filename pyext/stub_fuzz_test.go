package pyext

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/pybridge"
)

// FuzzModuleStub defines modules from the fuzzer's bytes (names ASCII and
// not, keywords, names of what a stub imports; docs with quotes,
// backslashes, NUL, control characters, newlines and signatures of their
// own; defaults of every type, inf, nan, the ends of the integers, strings
// with escapes; arities, keyword-only and optional parameters; classes
// with constructors, methods and properties) and holds Check to what
// Python says (testdata/stubcheck.py, one process for the run):
//
//   - a module Check refuses is refused for the reasons the definition
//     has, each said (a name's as Python's verdict on it: no identifier,
//     a keyword, not NFKC), and for no other;
//   - a module Check accepts has a stub that compiles, whose type names
//     mean types where they are written, and whose every def says what
//     the module would: the docstring __doc__ shows, and the parameters,
//     kinds and defaults of the text signature, which inspect reads back
//     as the definition gave them.
//
// That the module imports, help() renders it and mypy accepts its stub is
// test/hostilemod's, built once (a build per input is too slow for a fuzz
// loop).
func FuzzModuleStub(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		[]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"),
		[]byte("\x10\x21\x32\x43\x54\x65\x76\x87\x98\xa9\xba\xcb\xdc\xed\xfe\x0f\x1e\x2d\x3c\x4b\x5a\x69\x78\x87\x96"),
		[]byte("\x02\x05\x03\x01\x04\x07\x09\x02\x02\x06\x05\x01\x08\x03\x00\x04\x02\x07\x01\x03\x05\x09\x0b\x04\x06\x02"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checker := stubCheckerFor(t)
		def := decodeModuleDef(data)
		verdicts := checker.verdicts(t, def.names())
		m := &Module{name: def.name}
		def.define(m)
		err := m.err()
		want := def.refusals(verdicts)
		if len(want) == 0 {
			if err != nil {
				t.Fatalf("Check refused a module it has no reason to refuse:\n%v\n%s", err, def)
			}
			if msg := checker.checkStub(t, stubOf(m), def.expectations(m)); msg != "" {
				t.Fatalf("%s\n%s\nthe stub:\n%s", msg, def, stubOf(m))
			}
			return
		}
		if err == nil {
			t.Fatalf("Check accepted a module it must refuse (%q):\n%s", want, def)
		}
		lines := strings.Split(err.Error(), "\n")
		for _, cause := range want {
			if !slices_anyLine(lines, cause) {
				t.Errorf("Check's refusal does not say %q:\n%v\n%s", cause, err, def)
			}
		}
		for _, l := range lines {
			explained := false
			for _, cause := range want {
				explained = explained || containsAll(l, cause)
			}
			if !explained {
				t.Errorf("Check refused for a reason the definition does not have: %q\n%s", l, def)
			}
		}
	})
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func slices_anyLine(lines []string, parts []string) bool {
	for _, l := range lines {
		if containsAll(l, parts) {
			return true
		}
	}
	return false
}

// stubChecker is testdata/stubcheck.py, running.
type stubChecker struct {
	mu     sync.Mutex
	in     io.Writer
	out    *bufio.Reader
	err    error
	stderr lockedBuffer
}

// lockedBuffer is the checker's stderr, which it writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var (
	checkerOnce sync.Once
	checker     *stubChecker
)

// stubCheckerFor is the run's checker, started on first use; it skips t
// (or fails it, under USMBRIDGE_REQUIRE=python) when there is no Python.
func stubCheckerFor(t *testing.T) *stubChecker {
	py := testutil.ProjectPython(t)
	checkerOnce.Do(func() {
		checker = &stubChecker{}
		cmd := exec.Command(py, filepath.Join("testdata", "stubcheck.py"))
		cmd.Stderr = &checker.stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			checker.err = err
			return
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			checker.err = err
			return
		}
		if checker.err = cmd.Start(); checker.err == nil {
			checker.in, checker.out = in, bufio.NewReaderSize(out, 1<<20)
		}
		// The process ends when the test binary does: its stdin closes.
	})
	if checker.err != nil {
		t.Fatalf("starting testdata/stubcheck.py: %v", checker.err)
	}
	return checker
}

func (c *stubChecker) ask(t *testing.T, req, resp any) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("stubcheck.py: %v\n%s", err, c.stderr.String())
	}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("stubcheck.py: %v\n%s", err, c.stderr.String())
	}
	if err := json.Unmarshal(line, resp); err != nil {
		t.Fatalf("stubcheck.py answered %q: %v", line, err)
	}
}

// verdicts is Python's verdict on each name: 0 a name, 1 no identifier,
// 2 a keyword, 3 not in NFKC form. A name that is not UTF-8 is no str
// Python could hold, so no identifier.
func (c *stubChecker) verdicts(t *testing.T, names []string) map[string]int {
	var resp struct{ Verdicts []int }
	c.ask(t, map[string]any{"names": names}, &resp)
	out := map[string]int{}
	for i, n := range names {
		out[n] = resp.Verdicts[i]
		if !utf8.ValidString(n) {
			out[n] = 1
		}
	}
	return out
}

func (c *stubChecker) checkStub(t *testing.T, stub string, defs []map[string]any) string {
	var resp struct{ Error *string }
	c.ask(t, map[string]any{"stub": stub, "defs": defs}, &resp)
	if resp.Error != nil {
		return *resp.Error
	}
	return ""
}

// fuzzReader reads choices from the fuzzer's bytes; past their end every
// choice is the first.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) n(k int) int {
	if len(r.b) == 0 || k <= 1 {
		return 0
	}
	v := int(r.b[0])
	r.b = r.b[1:]
	return v % k
}

func (r *fuzzReader) chance(of int) bool { return r.n(of) == 0 }

// fuzzNames are names worth trying: ASCII and not, soft and hard
// keywords, names of what a stub imports or defines, names every module
// has, not NFKC, no identifier.
var fuzzNames = []string{
	"f", "x", "value", "naïve", "modé", "self", "class", "match", "type", "_", "__x", "Optional", "np", "Tuple",
	"int", "float", "str", "bool", "object", "property", "Any", "Union", "ClassVar", "RuntimeError", "_ArrayLike",
	"_DeviceLike", "_SUAIProducer", "_typing", "_builtins", "_numpy", "_Plan", "typing", "builtins", "numpy",
	"Array", "ForkError", "_stub", "_c_stats", "__init__", "__eq__", "__repr__", "__doc__", "\ufb01t", "\u212b",
	"a\u0301", "x\u0345", "\u0e33x", "\u037a", "1x", "a-b", "", "a\x00", "\xff", "Plan", "ñ", "Größe", "__Vec",
	"None", "True", "lambda", "await", "a b", "\u00b7x", "x\u00b7", "\u2118", "\u30fb", "x\u200d",
}

// fuzzRunes make names of their own: letters, marks that compose, a
// ligature, Other_ID_Start and Other_ID_Continue, a space, a dash.
var fuzzRunes = []rune("aZ_0é\u0301\ufb01ª-ß\u00b7\u2118\u0345\u037a\u30fb\u200d \u00e9\u0065")

func (r *fuzzReader) name() string {
	if !r.chance(4) {
		return fuzzNames[r.n(len(fuzzNames))]
	}
	var b strings.Builder
	for i := 1 + r.n(4); i > 0; i-- {
		b.WriteRune(fuzzRunes[r.n(len(fuzzRunes))])
	}
	return b.String()
}

// fuzzDocParts make docs: quotes, backslashes, NUL, control characters,
// newlines, indentation, tabs, a signature of its own, bytes not UTF-8.
var fuzzDocParts = []string{
	"A doc.", `"`, `"""`, `\`, "\n", "\t", "   ", "\x00", "\r", "\x0b", "\x0c", "\x1c", "\x7f", "\u0085", "\u2028",
	"é", "Plan(", "(x)\n--\n\n", ")\n--\n\n", "\n\n", "\xff", "'''", "\n    indented", "\n\tx", "\n  \n", "😀",
}

func (r *fuzzReader) doc() string {
	var b strings.Builder
	for i := r.n(6); i > 0; i-- {
		b.WriteString(fuzzDocParts[r.n(len(fuzzDocParts))])
	}
	return b.String()
}

// fuzzA, fuzzB and fuzzC are the Go types of the classes.
type (
	fuzzA struct{ _ byte }
	fuzzB struct{ _ byte }
	fuzzC struct{ _ byte }
)

// fuzzTypes are the parameter types, with the defaults each may have.
var fuzzTypes = []struct {
	t        reflect.Type
	defaults []any
}{
	{reflect.TypeFor[bool](), []any{true, false}},
	{reflect.TypeFor[int](), []any{0, -1, math.MaxInt, math.MinInt}},
	{reflect.TypeFor[int8](), []any{int8(-128), int8(127)}},
	{reflect.TypeFor[uint8](), []any{uint8(255)}},
	{reflect.TypeFor[uint64](), []any{uint64(math.MaxUint64), uint64(0)}},
	{reflect.TypeFor[float32](), []any{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), float32(0.1),
		float32(math.Copysign(0, -1)), float32(math.MaxFloat32), float32(math.SmallestNonzeroFloat32)}},
	{reflect.TypeFor[float64](), []any{math.Inf(1), math.Inf(-1), math.NaN(), 1e300, 5e-324, math.Copysign(0, -1),
		0.5, 1e21, 1e16, 123456789.125}},
	{reflect.TypeFor[string](), []any{"", "'", `"`, `'"`, `\`, "\x00", "a\nb", "é", "😀", "\u2028", "\x7f", "\xff",
		"\t\r", `"""`, "'''", "\U0010ffff"}},
	{reflect.TypeFor[Device](), []any{"cpu", Device{Index: -1}, Device{DL: dlpack.Device{Type: dlpack.OneAPI, ID: 1}, Index: 1}}},
	{reflect.TypeFor[AnyArray](), nil},
	{reflect.TypeFor[Array[float32]](), nil},
	{reflect.TypeFor[pybridge.Object](), nil},
	{reflect.TypeFor[*fuzzA](), nil},
	{reflect.TypeFor[*fuzzB](), nil},
	{reflect.TypeFor[*fuzzC](), nil},
}

// fuzzResults are the result types (nil: none, only an error).
var fuzzResults = []reflect.Type{nil, reflect.TypeFor[int](), reflect.TypeFor[float64](), reflect.TypeFor[string](),
	reflect.TypeFor[bool](), reflect.TypeFor[AnyArray](), reflect.TypeFor[*fuzzA](), reflect.TypeFor[*fuzzB](), reflect.TypeFor[*fuzzC]()}

// ctorTypes are a constructor's parameter types by arity (Init0 … Init3
// take them as type parameters).
var ctorTypes = [][]int{{}, {6}, {7, 6}, {0, 1, 5}}

type fuzzParam struct {
	name                      string
	typ                       int // in fuzzTypes
	deflt                     any
	hasDefault, optional, kwo bool
}

type fuzzFunc struct {
	name, doc string
	params    []fuzzParam
	result    reflect.Type
}

type fuzzProp struct {
	name, doc string
	settable  bool
}

type fuzzClass struct {
	name, doc string
	typ       int // 12, 13, 14: fuzzA, fuzzB, fuzzC
	ctor      *fuzzFunc
	methods   []fuzzFunc
	props     []fuzzProp
}

type fuzzModule struct {
	name, doc string
	items     []any // *fuzzFunc and *fuzzClass, in the order they are defined
}

func decodeModuleDef(data []byte) *fuzzModule {
	r := &fuzzReader{b: data}
	mod := &fuzzModule{name: "m"}
	switch r.n(8) {
	case 1:
		mod.name = r.name()
	case 2:
		mod.name = "pkg." + r.name()
	}
	mod.doc = r.doc()
	top := map[string]bool{} // one definition a name: overloads and clashes are tested elsewhere
	classes := map[int]bool{}
	for n := r.n(5); n > 0; n-- {
		if r.chance(3) && len(classes) < 3 {
			c := &fuzzClass{name: r.name(), typ: 12 + len(classes)}
			c.doc = r.doc()
			if r.chance(3) {
				c.doc = c.name + "(" + c.doc
			}
			if top[c.name] {
				continue
			}
			top[c.name] = true
			classes[c.typ] = true // its methods may take and return its objects
			if !r.chance(3) {
				k := r.n(len(ctorTypes))
				c.ctor = &fuzzFunc{name: c.name, params: r.params(classes, ctorTypes[k])}
			}
			members := map[string]bool{}
			for m := r.n(4); m > 0; m-- {
				name := r.name()
				if members[name] {
					continue
				}
				members[name] = true
				if r.chance(3) {
					c.props = append(c.props, fuzzProp{name: name, doc: r.doc(), settable: r.chance(2)})
				} else {
					c.methods = append(c.methods, fuzzFunc{name: name, doc: r.doc(), params: r.params(classes, nil), result: r.result(classes)})
				}
			}
			mod.items = append(mod.items, c)
			continue
		}
		fn := &fuzzFunc{name: r.name(), doc: r.doc()}
		fn.params, fn.result = r.params(classes, nil), r.result(classes)
		if top[fn.name] {
			continue
		}
		top[fn.name] = true
		mod.items = append(mod.items, fn)
	}
	return mod
}

// params are up to four parameters, of types (or of types the fuzzer
// chooses, those of the classes defined so far among them).
func (r *fuzzReader) params(classes map[int]bool, types []int) []fuzzParam {
	n := len(types)
	if types == nil {
		n = r.n(5)
	}
	var ps []fuzzParam
	for i := 0; i < n; i++ {
		p := fuzzParam{name: r.name()}
		if types != nil {
			p.typ = types[i]
		} else {
			p.typ = r.n(len(fuzzTypes))
			if p.typ >= 12 && !classes[p.typ] {
				p.typ = 6
			}
		}
		if d := fuzzTypes[p.typ].defaults; len(d) > 0 && r.chance(2) {
			p.deflt, p.hasDefault = d[r.n(len(d))], true
		} else if p.typ != 8 && r.chance(3) {
			p.optional = true
		}
		p.kwo = r.chance(4)
		ps = append(ps, p)
	}
	return ps
}

func (r *fuzzReader) result(classes map[int]bool) reflect.Type {
	k := r.n(len(fuzzResults))
	if k >= 6 && !classes[12+k-6] {
		return nil
	}
	return fuzzResults[k]
}

func (p fuzzParam) param() Param {
	var opts []ParamOption
	if p.hasDefault {
		opts = append(opts, Default(p.deflt))
	}
	if p.optional {
		opts = append(opts, Optional())
	}
	if p.kwo {
		opts = append(opts, KeywordOnly())
	}
	return P(p.name, opts...)
}

func params(ps []fuzzParam) []Param {
	out := make([]Param, len(ps))
	for i, p := range ps {
		out[i] = p.param()
	}
	return out
}

// goFunc is a Go func of fn's parameter types (after recv, if any) and
// result that returns zero values.
func goFunc(recv reflect.Type, fn *fuzzFunc) any {
	var in, out []reflect.Type
	if recv != nil {
		in = append(in, recv)
	}
	for _, p := range fn.params {
		in = append(in, fuzzTypes[p.typ].t)
	}
	if fn.result != nil {
		out = append(out, fn.result)
	}
	out = append(out, reflect.TypeFor[error]())
	ft := reflect.FuncOf(in, out, false)
	return reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value {
		res := make([]reflect.Value, len(out))
		for i, t := range out {
			res[i] = reflect.Zero(t)
		}
		return res
	}).Interface()
}

func (mod *fuzzModule) define(m *Module) {
	m.Doc(mod.doc)
	for _, it := range mod.items {
		switch it := it.(type) {
		case *fuzzFunc:
			Func(m, it.name, it.doc, goFunc(nil, it), params(it.params))
		case *fuzzClass:
			switch it.typ {
			case 12:
				defineFuzzClass[fuzzA](m, it)
			case 13:
				defineFuzzClass[fuzzB](m, it)
			case 14:
				defineFuzzClass[fuzzC](m, it)
			}
		}
	}
}

func defineFuzzClass[T any](m *Module, c *fuzzClass) {
	cls := NewClass[T](m, c.name, c.doc)
	if k := c.ctor; k != nil {
		ps := params(k.params)
		mk := func() (*T, error) { return new(T), nil }
		switch len(ps) {
		case 0:
			Init0(cls, mk)
		case 1:
			Init1(cls, func(float64) (*T, error) { return mk() }, ps[0])
		case 2:
			Init2(cls, func(string, float64) (*T, error) { return mk() }, ps[0], ps[1])
		case 3:
			Init3(cls, func(bool, int, float32) (*T, error) { return mk() }, ps[0], ps[1], ps[2])
		}
	}
	for _, p := range c.props {
		get := func(*T) (int, error) { return 0, nil }
		if p.settable {
			SettableProperty(cls, p.name, p.doc, func(*T) (float64, error) { return 0, nil }, func(*T, float64) error { return nil })
		} else {
			Property(cls, p.name, p.doc, get)
		}
	}
	for i := range c.methods {
		fn := &c.methods[i]
		Method(cls, fn.name, fn.doc, goFunc(reflect.TypeFor[*T](), fn), params(fn.params))
	}
}

// names are the names the definition gives, for Python's verdicts.
func (mod *fuzzModule) names() []string {
	out := strings.Split(mod.name, ".")
	for _, it := range mod.items {
		switch it := it.(type) {
		case *fuzzFunc:
			out = append(out, it.name)
			for _, p := range it.params {
				out = append(out, p.name)
			}
		case *fuzzClass:
			out = append(out, it.name)
			if it.ctor != nil {
				for _, p := range it.ctor.params {
					out = append(out, p.name)
				}
			}
			for _, f := range it.methods {
				out = append(out, f.name)
				for _, p := range f.params {
					out = append(out, p.name)
				}
			}
			for _, p := range it.props {
				out = append(out, p.name)
			}
		}
	}
	return out
}

// fuzzReasons are what a refusal says of a name, by Python's verdict.
var fuzzReasons = map[int]string{1: "is not a Python identifier", 2: "is a Python keyword", 3: "is not in the NFKC form"}

func fuzzDocProblem(doc string) string {
	switch {
	case strings.Contains(doc, "\x00"):
		return "has a NUL character"
	case !utf8.ValidString(doc):
		return "is not valid UTF-8"
	}
	return ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// refusals are the reasons to refuse the definition, each as the parts
// one line of Check's error must have.
func (mod *fuzzModule) refusals(v map[string]int) [][]string {
	var out [][]string
	for _, part := range strings.Split(mod.name, ".") {
		if v[part] != 0 {
			out = append(out, []string{fmt.Sprintf("module name %q", mod.name), fuzzReasons[v[part]]})
			break
		}
	}
	if p := fuzzDocProblem(mod.doc); p != "" {
		out = append(out, []string{"the doc of the module " + p})
	}
	// function's reasons: those of its definition (define), and only
	// when it has none, those of its name.
	function := func(qual string, fn *fuzzFunc, member bool, setter bool) (bad bool) {
		head := "function " + qual + ": "
		seen := map[string]bool{}
		optional := false
		kwo := false
		for _, p := range fn.params {
			if s, ok := p.deflt.(string); ok && p.hasDefault && !utf8.ValidString(s) {
				out, bad = append(out, []string{head, "parameter " + p.name + ": its Default is not valid UTF-8"}), true
			}
			switch {
			case v[p.name] != 0:
				out, bad = append(out, []string{head, fmt.Sprintf("parameter name %q", p.name), fuzzReasons[v[p.name]]}), true
			case !isASCII(p.name) && !setter:
				out, bad = append(out, []string{head, fmt.Sprintf("parameter name %q is not ASCII", p.name)}), true
			}
			switch {
			case p.name == "self" && member && !setter:
				out, bad = append(out, []string{head, "parameter self: a constructor's or method's parameter cannot be named self"}), true
			case seen[p.name]:
				out, bad = append(out, []string{head, "parameter " + p.name + " appears twice"}), true
			}
			seen[p.name] = true
			kwo = kwo || p.kwo
			opt := p.hasDefault || p.optional
			if optional && !opt && !kwo {
				out, bad = append(out, []string{head, "parameter " + p.name + " is required but follows an optional one"}), true
			}
			optional = opt
		}
		if p := fuzzDocProblem(fn.doc); p != "" {
			out, bad = append(out, []string{head, "its doc " + p}), true
		}
		return bad
	}
	for _, it := range mod.items {
		switch it := it.(type) {
		case *fuzzFunc:
			if function(it.name, it, false, false) {
				continue
			}
			if v[it.name] != 0 {
				out = append(out, []string{fmt.Sprintf("function name %q", it.name), fuzzReasons[v[it.name]]})
			} else if _, ok := reservedNames[it.name]; ok {
				out = append(out, []string{"function " + it.name + ": the name is"})
			}
		case *fuzzClass:
			qual := func(attr string) string { // class.go's qual: "" is the constructor's
				if attr == "" {
					return it.name
				}
				return it.name + "." + attr
			}
			if v[it.name] != 0 {
				out = append(out, []string{fmt.Sprintf("class name %q", it.name), fuzzReasons[v[it.name]]})
			} else if _, ok := reservedNames[it.name]; ok {
				out = append(out, []string{"class " + it.name + ": the name is"})
			}
			if p := fuzzDocProblem(it.doc); p != "" {
				out = append(out, []string{"the doc of class " + it.name + " " + p})
			}
			if it.ctor != nil {
				function(it.name, it.ctor, true, false)
			}
			member := func(name string) {
				if v[name] != 0 {
					out = append(out, []string{"class " + it.name + ": ", fmt.Sprintf("name %q", name), fuzzReasons[v[name]]})
				} else if reservedAttr[name] {
					out = append(out, []string{"class " + it.name + ": " + name + " cannot be defined by a Go method"})
				}
			}
			for _, p := range it.props {
				get := fuzzFunc{name: p.name, doc: p.doc}
				if !function(qual(p.name), &get, true, false) {
					member(p.name)
				}
				if p.settable {
					function(qual(p.name), &fuzzFunc{params: []fuzzParam{{name: p.name}}}, true, true)
				}
			}
			for i := range it.methods {
				if fn := &it.methods[i]; !function(qual(fn.name), fn, true, false) {
					member(fn.name)
				}
			}
		}
	}
	return out
}

// expectations are what the stub of an accepted module must say, for
// stubcheck.py: each def's path, doc, parameters and text signature.
func (mod *fuzzModule) expectations(m *Module) []map[string]any {
	defs := []map[string]any{{"path": "", "doc": mod.doc}}
	sig := func(f *function) string {
		i, j := strings.Index(f.doc, "("), strings.Index(f.doc, ")\n--\n\n")
		return f.doc[i : j+1]
	}
	byName := map[string]*function{}
	for _, f := range m.funcs {
		byName[f.name] = f
	}
	classes := map[int]string{} // the class of each Go type
	for _, it := range mod.items {
		if c, ok := it.(*fuzzClass); ok {
			classes[c.typ] = c.name
		}
	}
	expectParams := func(ps []fuzzParam) [][]any { return expectParams(ps, classes) }
	result := func(t reflect.Type) any { // the class a result is an object of, or nil
		for i, ft := range fuzzTypes {
			if ft.t == t && classes[i] != "" {
				return classes[i]
			}
		}
		return nil
	}
	for _, it := range mod.items {
		switch it := it.(type) {
		case *fuzzFunc:
			if !strings.HasPrefix(it.name, "_") {
				defs = append(defs, map[string]any{"path": it.name, "doc": it.doc, "params": expectParams(it.params),
					"sig": sig(byName[it.name]), "method": false, "bound": false, "result": result(it.result)})
			}
		case *fuzzClass:
			internal := it.doc
			if it.ctor != nil {
				internal = signature(it.name, byName[it.name].params) + it.doc
				defs = append(defs, map[string]any{"path": it.name + ".__init__", "params": expectParams(it.ctor.params),
					"sig": sig(byName[it.name]), "method": true, "bound": false})
			}
			defs = append(defs, map[string]any{"path": it.name, "doc": internal, "typename": it.name})
			for _, p := range it.props {
				defs = append(defs, map[string]any{"path": it.name + "." + p.name, "doc": p.doc})
			}
			for i := range it.methods {
				fn := &it.methods[i]
				d := map[string]any{"path": it.name + "." + fn.name, "doc": fn.doc}
				if fn.name != "__eq__" && fn.name != "__ne__" || len(fn.params) != 1 {
					d["params"], d["sig"], d["method"], d["bound"] = expectParams(fn.params), sig(byName[it.name+"."+fn.name]), true, true
					d["result"] = result(fn.result)
				}
				defs = append(defs, d)
			}
		}
	}
	return defs
}

// expectParams are ps as stubcheck.py compares them: name, "p" or "k"
// (keyword-only), the default as [kind, value] or nil, and the class
// whose objects it takes, or nil.
func expectParams(ps []fuzzParam, classes map[int]string) [][]any {
	out := [][]any{}
	kwo := false
	for _, p := range ps {
		kwo = kwo || p.kwo
		kind := "p"
		if kwo {
			kind = "k"
		}
		var d any
		switch {
		case p.hasDefault:
			d = expectDefault(p.deflt)
		case p.optional:
			d = []any{"none", nil}
		}
		var cls any
		if c := classes[p.typ]; c != "" {
			cls = c
		}
		out = append(out, []any{p.name, kind, d, cls})
	}
	return out
}

func expectDefault(v any) []any {
	switch x := v.(type) {
	case bool:
		return []any{"bool", x}
	case string:
		return []any{"str", x}
	case float64:
		return []any{"float", strconv.FormatFloat(x, 'g', -1, 64)}
	case float32:
		return []any{"f32", strconv.FormatFloat(float64(x), 'g', -1, 64)}
	case Device:
		if x.IsHost() {
			return []any{"device", "cpu"}
		}
		return []any{"device", []int{int(x.DL.Type), int(x.DL.ID)}}
	}
	return []any{"int", fmt.Sprint(v)}
}

// String describes the definition, for a failure's message.
func (mod *fuzzModule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %q doc %q\n", mod.name, mod.doc)
	param := func(p fuzzParam) string {
		s := fmt.Sprintf("%q %s", p.name, fuzzTypes[p.typ].t)
		if p.hasDefault {
			s += fmt.Sprintf(" =%#v", p.deflt)
		}
		if p.optional {
			s += " optional"
		}
		if p.kwo {
			s += " kw-only"
		}
		return s
	}
	fn := func(indent string, f *fuzzFunc) {
		fmt.Fprintf(&b, "%sfunc %q doc %q -> %v\n", indent, f.name, f.doc, f.result)
		for _, p := range f.params {
			fmt.Fprintf(&b, "%s    %s\n", indent, param(p))
		}
	}
	for _, it := range mod.items {
		switch it := it.(type) {
		case *fuzzFunc:
			fn("  ", it)
		case *fuzzClass:
			fmt.Fprintf(&b, "  class %q doc %q\n", it.name, it.doc)
			if it.ctor != nil {
				fn("    ctor ", it.ctor)
			}
			for _, p := range it.props {
				fmt.Fprintf(&b, "    property %q doc %q settable %v\n", p.name, p.doc, p.settable)
			}
			for i := range it.methods {
				fn("    ", &it.methods[i])
			}
		}
	}
	return b.String()
}
