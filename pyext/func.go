package pyext

import (
	"fmt"
	"reflect"
	"strings"
)

// Param names a parameter of a Go function Python calls and says what it
// accepts beyond its Go type. The Go type decides how an argument is read:
//
//	bool                       True or False
//	int, int8…int64, uint…     an int (or any object with __index__), range-checked
//	float32, float64           a float, an int, or any object with __float__
//	string                     a str
//	Array[T], AnyArray         an array: see Array
//	pybridge.Object            any object, borrowed for the call
//
// A wrong argument is a TypeError (or OverflowError, ValueError) that names
// the function and the parameter, as CPython's own are.
type Param struct {
	name string
	opts []ParamOption
}

// P is a parameter named name, with options.
func P(name string, opts ...ParamOption) Param { return Param{name: name, opts: opts} }

// ParamOption is an option of a parameter: Default, Optional, KeywordOnly,
// or one of the array constraints (NDim, Shape, CContiguous,
// FContiguous, Writable, Memory).
type ParamOption interface{ apply(*paramSpec) error }

type optionFunc func(*paramSpec) error

func (f optionFunc) apply(s *paramSpec) error { return f(s) }

// Default makes the parameter optional: an omitted argument is v, which
// must be a value of the parameter's Go type (checked when the module is
// defined).
func Default(v any) ParamOption {
	return optionFunc(func(s *paramSpec) error {
		s.flags |= fOptional
		s.deflt, s.hasDefault = v, true
		return nil
	})
}

// Optional makes the parameter optional and lets it be None: an omitted
// argument or None is the Go zero value (an Array for which IsNone
// reports true).
func Optional() ParamOption {
	return optionFunc(func(s *paramSpec) error { s.flags |= fOptional | fNone; return nil })
}

// KeywordOnly makes the parameter keyword-only (after * in Python); every
// parameter after it must be keyword-only too.
func KeywordOnly() ParamOption {
	return optionFunc(func(s *paramSpec) error { s.flags |= fKwOnly; return nil })
}

// paramSpec is a parameter as the module defines it.
type paramSpec struct {
	name       string
	kind       int32
	flags      int32
	deflt      any
	hasDefault bool
	array      constraints
	isArray    bool
	class      int32 // pInstance: the class's index
	typ        string
}

// FuncOption is an option of a function: ReleaseGIL.
type FuncOption interface{ applyFunc(*function) }

type funcOption func(*function)

func (f funcOption) applyFunc(fn *function) { f(fn) }

// ReleaseGIL lets other Python threads run while the Go function runs: the
// module releases the GIL after it has read the arguments and takes it
// again before it makes the result. The function must not touch Python
// objects meanwhile except through pybridge's Python.Do, which takes the
// GIL; its array arguments stay valid (the module holds them).
func ReleaseGIL() FuncOption { return funcOption(func(f *function) { f.releaseGIL = true }) }

// function is a Python function of the module.
type function struct {
	name, doc  string
	index      int     // in Module.funcs, which C calls it by
	member     *member // a class's constructor, method or accessor; nil for a function of the module
	builtin    int32
	params     []paramSpec
	releaseGIL bool
	result     reflect.Type // the Go result's type (none: no result), for the stub
	// call decodes the arguments, calls the Go function and encodes its
	// result; c is the call's frame.
	call func(c *frame, r *result) error
}

// define adds a Go function whose parameters have the decoders decs (one
// per Go parameter, in order, made for the parameter's Go type) and
// specs ps.
func define(m *Module, name, doc string, ps []Param, decs []decoder, opts []FuncOption, call func(c *frame, r *result) error) {
	f := &function{name: name, call: call}
	for _, o := range opts {
		o.applyFunc(f)
	}
	var errs []string
	kwOnly := false
	seen := map[string]bool{}
	for i, p := range ps {
		s := paramSpec{name: p.name, kind: decs[i].kind, class: decs[i].class, typ: decs[i].typ}
		if decs[i].array {
			s.isArray = true
		}
		for _, o := range p.opts {
			if err := o.apply(&s); err != nil {
				errs = append(errs, "parameter "+p.name+": "+err.Error())
			}
		}
		if s.array.any() && !s.isArray {
			errs = append(errs, "parameter "+p.name+": an array constraint on a parameter of type "+decs[i].typ)
		}
		if s.array.writable {
			s.flags |= fWritable
		}
		if s.hasDefault && decs[i].checkDefault != nil {
			if err := decs[i].checkDefault(s.deflt); err != nil {
				errs = append(errs, "parameter "+p.name+": "+err.Error())
			}
		}
		if !identifier(p.name) {
			errs = append(errs, fmt.Sprintf("parameter name %q is not a Python identifier", p.name))
		}
		if seen[p.name] {
			errs = append(errs, "parameter "+p.name+" appears twice")
		}
		seen[p.name] = true
		if s.flags&fKwOnly != 0 {
			kwOnly = true
		} else if kwOnly {
			errs = append(errs, "parameter "+p.name+" follows a keyword-only parameter but is not keyword-only")
		}
		f.params = append(f.params, s)
	}
	for i := 1; i < len(f.params); i++ {
		if f.params[i-1].flags&fOptional != 0 && f.params[i].flags&(fOptional|fKwOnly) == 0 {
			errs = append(errs, "parameter "+f.params[i].name+" is required but follows an optional one")
		}
	}
	if len(errs) > 0 {
		m.errs = append(m.errs, fmt.Errorf("function %s: %s", name, strings.Join(errs, "; ")))
		return
	}
	f.doc = signature(name, f.params) + doc
	m.add(f)
}

// signature is CPython's "name(params)\n--\n\n" docstring prefix, from
// which inspect.signature and help() read the parameters.
func signature(name string, ps []paramSpec) string {
	var b strings.Builder
	b.WriteString(name + "(")
	star := false
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		if p.flags&fKwOnly != 0 && !star {
			b.WriteString("*, ")
			star = true
		}
		if p.flags&fSelf != 0 {
			b.WriteString("$")
		}
		b.WriteString(p.name)
		if p.flags&fPosOnly != 0 && (i+1 == len(ps) || ps[i+1].flags&fPosOnly == 0) {
			b.WriteString(", /")
		}
		switch {
		case p.hasDefault:
			b.WriteString("=" + pyRepr(p.deflt))
		case p.flags&fOptional != 0:
			b.WriteString("=None")
		}
	}
	b.WriteString(")\n--\n\n")
	return b.String()
}

// pyRepr writes a default the way Python would.
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", "\\'") + "'"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	}
	return fmt.Sprint(v)
}

// decoder reads one argument of a Go type T: kind is how C reads it,
// typ the Go type's name, array whether it is an array, checkDefault
// whether a Default fits T.
type decoder struct {
	kind         int32
	class        int32 // pInstance: the class's index
	typ          string
	array        bool
	checkDefault func(any) error
}

// Each FuncN and FuncNR is one implementation per arity, funcN: FuncN
// is FuncNR with no result (none, which encodes as Python's None).

// none is the result of a function that returns nothing.
type none struct{}

// withResult adds the option that records a function's result type R.
func withResult[R any](opts []FuncOption) []FuncOption {
	return append(opts[:len(opts):len(opts)], funcOption(func(f *function) { f.result = reflect.TypeFor[R]() }))
}

func encodeNone(_ *frame, _ none, r *result) error {
	r.kind = rNone
	return nil
}

// Func0 adds a Go function without parameters, returning nothing.
func Func0(m *Module, name, doc string, fn func() error, opts ...FuncOption) {
	func0(m, name, doc, func() (none, error) { return none{}, fn() }, encodeNone, opts)
}

// Func0R adds a Go function without parameters that returns a value.
func Func0R[R any](m *Module, name, doc string, fn func() (R, error), opts ...FuncOption) {
	enc, ok := encoderFor[R](m, name)
	if !ok {
		enc = nil // the parameters are still checked, so that every error is told
	}
	func0(m, name, doc, fn, enc, opts)
}

func func0[R any](m *Module, name, doc string, fn func() (R, error), enc typedEncoder[R], opts []FuncOption) {
	if enc == nil {
		return
	}
	define(m, name, doc, nil, nil, withResult[R](opts), func(c *frame, r *result) error {
		var out R
		if err := c.run(func() (err error) { out, err = fn(); return }); err != nil {
			return err
		}
		return enc(c, out, r)
	})
}

// Func1 adds a Go function of one parameter, returning nothing.
func Func1[A any](m *Module, name, doc string, fn func(A) error, a Param, opts ...FuncOption) {
	func1(m, name, doc, func(x A) (none, error) { return none{}, fn(x) }, encodeNone, a, opts)
}

// Func1R adds a Go function of one parameter that returns a value.
func Func1R[A, R any](m *Module, name, doc string, fn func(A) (R, error), a Param, opts ...FuncOption) {
	enc, ok := encoderFor[R](m, name)
	if !ok {
		enc = nil // the parameters are still checked, so that every error is told
	}
	func1(m, name, doc, fn, enc, a, opts)
}

func func1[A, R any](m *Module, name, doc string, fn func(A) (R, error), enc typedEncoder[R], a Param, opts []FuncOption) {
	da, ok := decoderFor[A](m, name, a)
	if !ok || enc == nil {
		return
	}
	define(m, name, doc, []Param{a}, []decoder{da.d}, withResult[R](opts), func(c *frame, r *result) error {
		x, err := da.read(c, 0)
		if err != nil {
			return err
		}
		var out R
		if err := c.run(func() (err error) { out, err = fn(x); return }); err != nil {
			return err
		}
		return enc(c, out, r)
	})
}

// Func2 adds a Go function of two parameters, returning nothing.
func Func2[A, B any](m *Module, name, doc string, fn func(A, B) error, a, b Param, opts ...FuncOption) {
	func2(m, name, doc, func(x A, y B) (none, error) { return none{}, fn(x, y) }, encodeNone, a, b, opts)
}

// Func2R adds a Go function of two parameters that returns a value.
func Func2R[A, B, R any](m *Module, name, doc string, fn func(A, B) (R, error), a, b Param, opts ...FuncOption) {
	enc, ok := encoderFor[R](m, name)
	if !ok {
		enc = nil // the parameters are still checked, so that every error is told
	}
	func2(m, name, doc, fn, enc, a, b, opts)
}

func func2[A, B, R any](m *Module, name, doc string, fn func(A, B) (R, error), enc typedEncoder[R], a, b Param, opts []FuncOption) {
	da, ok1 := decoderFor[A](m, name, a)
	db, ok2 := decoderFor[B](m, name, b)
	if !ok1 || !ok2 || enc == nil {
		return
	}
	define(m, name, doc, []Param{a, b}, []decoder{da.d, db.d}, withResult[R](opts), func(c *frame, r *result) error {
		x, err := da.read(c, 0)
		if err != nil {
			return err
		}
		y, err := db.read(c, 1)
		if err != nil {
			return err
		}
		var out R
		if err := c.run(func() (err error) { out, err = fn(x, y); return }); err != nil {
			return err
		}
		return enc(c, out, r)
	})
}

// Func3 adds a Go function of three parameters, returning nothing.
func Func3[A, B, C any](m *Module, name, doc string, fn func(A, B, C) error, a, b, c Param, opts ...FuncOption) {
	func3(m, name, doc, func(x A, y B, z C) (none, error) { return none{}, fn(x, y, z) }, encodeNone, a, b, c, opts)
}

// Func3R adds a Go function of three parameters that returns a value.
func Func3R[A, B, C, R any](m *Module, name, doc string, fn func(A, B, C) (R, error), a, b, c Param, opts ...FuncOption) {
	enc, ok := encoderFor[R](m, name)
	if !ok {
		enc = nil // the parameters are still checked, so that every error is told
	}
	func3(m, name, doc, fn, enc, a, b, c, opts)
}

func func3[A, B, C, R any](m *Module, name, doc string, fn func(A, B, C) (R, error), enc typedEncoder[R], a, b, c Param, opts []FuncOption) {
	da, ok1 := decoderFor[A](m, name, a)
	db, ok2 := decoderFor[B](m, name, b)
	dc, ok3 := decoderFor[C](m, name, c)
	if !ok1 || !ok2 || !ok3 || enc == nil {
		return
	}
	define(m, name, doc, []Param{a, b, c}, []decoder{da.d, db.d, dc.d}, withResult[R](opts), func(f *frame, r *result) error {
		x, err := da.read(f, 0)
		if err != nil {
			return err
		}
		y, err := db.read(f, 1)
		if err != nil {
			return err
		}
		z, err := dc.read(f, 2)
		if err != nil {
			return err
		}
		var out R
		if err := f.run(func() (err error) { out, err = fn(x, y, z); return }); err != nil {
			return err
		}
		return enc(f, out, r)
	})
}

// Func4 adds a Go function of four parameters, returning nothing.
func Func4[A, B, C, D any](m *Module, name, doc string, fn func(A, B, C, D) error, a, b, c, d Param, opts ...FuncOption) {
	func4(m, name, doc, func(x A, y B, z C, w D) (none, error) { return none{}, fn(x, y, z, w) }, encodeNone, a, b, c, d, opts)
}

// Func4R adds a Go function of four parameters that returns a value.
func Func4R[A, B, C, D, R any](m *Module, name, doc string, fn func(A, B, C, D) (R, error), a, b, c, d Param, opts ...FuncOption) {
	enc, ok := encoderFor[R](m, name)
	if !ok {
		enc = nil // the parameters are still checked, so that every error is told
	}
	func4(m, name, doc, fn, enc, a, b, c, d, opts)
}

func func4[A, B, C, D, R any](m *Module, name, doc string, fn func(A, B, C, D) (R, error), enc typedEncoder[R], a, b, c, d Param, opts []FuncOption) {
	da, ok1 := decoderFor[A](m, name, a)
	db, ok2 := decoderFor[B](m, name, b)
	dc, ok3 := decoderFor[C](m, name, c)
	dd, ok4 := decoderFor[D](m, name, d)
	if !ok1 || !ok2 || !ok3 || !ok4 || enc == nil {
		return
	}
	define(m, name, doc, []Param{a, b, c, d}, []decoder{da.d, db.d, dc.d, dd.d}, withResult[R](opts), func(f *frame, r *result) error {
		x, err := da.read(f, 0)
		if err != nil {
			return err
		}
		y, err := db.read(f, 1)
		if err != nil {
			return err
		}
		z, err := dc.read(f, 2)
		if err != nil {
			return err
		}
		w, err := dd.read(f, 3)
		if err != nil {
			return err
		}
		var out R
		if err := f.run(func() (err error) { out, err = fn(x, y, z, w); return }); err != nil {
			return err
		}
		return enc(f, out, r)
	})
}
