package pyext

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Param names a parameter of a Go function Python calls and says what it
// accepts beyond its Go type. The Go type decides how an argument is read:
//
//	bool                       True or False
//	int, int8…int64, uint…     an int (or any object with __index__), range-checked
//	float32, float64           a float, an int, or any object with __float__
//	string                     a str
//	*bool, *int, …, *string    the same or None, which is nil (told from zero)
//	Array[T], AnyArray         an array: see Array
//	Device                     a device: see Device
//	*T of a class              an object of the class: see Class
//	pybridge.Object            any object, borrowed for the call
//
// A wrong argument is a TypeError (or OverflowError, ValueError) that names
// the function and the parameter, as CPython's own are.
type Param struct {
	name string
	opts []ParamOption
}

// P is a parameter named name, with options. name is an ASCII Python
// identifier that is no keyword (CPython's text signatures, which
// inspect.signature reads, are ASCII), and not self for a constructor or
// method.
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
// reports true, 0 for an int: a parameter of type *int tells None from 0,
// nil from a pointer to the value).
func Optional() ParamOption {
	return optionFunc(func(s *paramSpec) error { s.flags |= fOptional | fNone; return nil })
}

// KeywordOnly makes the parameter keyword-only, and every parameter after
// it, as * does in a Python signature: P("x"), P("out", Optional(),
// KeywordOnly()), P("n") is f(x, *, out=None, n), where n is keyword-only
// and required (Python allows a required keyword-only parameter after an
// optional one). ExampleKeywordOnly shows it.
func KeywordOnly() ParamOption {
	return optionFunc(func(s *paramSpec) error { s.flags |= fKwOnly; return nil })
}

// OneOf makes a str parameter take only these strs: another is a
// ValueError naming the parameter and the choices, and the stub types the
// parameter Literal['a', 'b'] (an enum of choices, as a Python API spells
// it: mode="mean"). A Default must be one of them.
func OneOf(choices ...string) ParamOption {
	return optionFunc(func(s *paramSpec) error {
		if len(choices) == 0 {
			return errors.New("OneOf without choices")
		}
		for i, c := range choices {
			if !utf8.ValidString(c) {
				return errors.New("OneOf's choice " + strconv.Quote(c) + " is not valid UTF-8")
			}
			if slices.Contains(choices[:i], c) {
				return errors.New("OneOf's choice " + pyStrRepr(c) + " appears twice")
			}
		}
		s.choices = slices.Clone(choices)
		return nil
	})
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
	choices    []string       // OneOf: the strs the parameter takes (nil: any)
	elem       dlabi.DataType // an Array[T]'s element type (zero: any, or no array)
}

// FuncOption is an option of a function: ReleaseGIL, NoWait.
type FuncOption interface{ applyFunc(*function) }

type funcOption func(*function)

func (f funcOption) applyFunc(fn *function) { f(fn) }

// ReleaseGIL lets other Python threads run while the Go function runs: the
// module releases the GIL after it has read the arguments and takes it
// again before it makes the result. The function must not touch Python
// objects meanwhile except through pybridge's Python.Do, which takes the
// GIL; its array arguments stay valid (the module holds them).
func ReleaseGIL() FuncOption { return funcOption(func(f *function) { f.releaseGIL = true }) }

// NoWait lets the function return while the kernels it launched still
// run. Without it, the call waits (with the GIL released) for the work
// the function recorded on its arrays (AnyArray.WrittenBy, a result's
// usm.Array.WrittenBy) before it returns, so that no reader, of whatever
// kind, can see the arrays before that work is done. With it, the call
// returns once the work is submitted: the work is recorded where the
// arrays' readers look for it (dpctl.utils.SequentialOrderManager of the
// arrays' queue, which dpnp's next operation depends on; the pending
// work of the module's Arrays and of kept arguments, which their host
// readers wait for), and the call's array arguments are held until it is
// done. A reader that orders itself by neither (a kernel submitted to
// dpnp's out-of-order queue without its events, a host read of shared
// USM through another object) must wait on the queue first, as after
// dpnp's own operations. A function that fails waits all the same.
func NoWait() FuncOption { return funcOption(func(f *function) { f.noWait = true }) }

// function is a Python function of the module.
type function struct {
	name, doc  string
	index      int     // in Module.funcs, which C calls it by
	member     *member // a class's constructor, method or accessor; nil for a function of the module
	builtin    int32
	params     []paramSpec
	releaseGIL bool
	bind       binding        // a class member's binding: an instance method, Static, ClassMethod
	results    []reflect.Type // the Go results' types (none: no result; two or more: a tuple), for the stub
	noWait     bool           // NoWait: the call returns before the work it recorded is done
	// call decodes the arguments, calls the Go function and encodes its
	// result; c is the call's frame.
	call func(c *frame, r *result) error
	// wants is the element type each array parameter takes (zero for any
	// and for the other parameters); types names each parameter's Go type.
	wants []dlabi.DataType
	types []string
	// overloads are the functions of one name over other element types,
	// this one first (nil when there is one): the first whose array
	// parameters take the arguments' element types is called.
	overloads []*function
}

// define adds a Go function whose parameters have the decoders decs (one
// per Go parameter, in order, made for the parameter's Go type) and
// specs ps.
func define(m *Module, name, doc string, ps []Param, decs []decoder, opts []FuncOption, call func(c *frame, r *result) error) {
	f := &function{name: name, call: call}
	for _, o := range opts {
		o.applyFunc(f)
	}
	for _, d := range decs {
		f.wants = append(f.wants, d.want)
		f.types = append(f.types, d.typ)
	}
	var errs []string
	kwOnly := false
	seen := map[string]bool{}
	for i, p := range ps {
		s := paramSpec{name: p.name, kind: decs[i].kind, class: decs[i].class, typ: decs[i].typ, flags: decs[i].flags, elem: decs[i].want}
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
		if s.choices != nil && s.kind != pStr {
			errs = append(errs, "parameter "+p.name+": OneOf on a parameter of type "+decs[i].typ+" (it chooses among strs)")
		} else if d, ok := s.deflt.(string); ok && s.choices != nil && s.hasDefault && !slices.Contains(s.choices, d) {
			errs = append(errs, "parameter "+p.name+": its Default "+pyStrRepr(d)+" is not one of OneOf's choices")
		}
		if s.array.writable {
			s.flags |= fWritable
		}
		if s.hasDefault && decs[i].checkDefault != nil {
			if err := decs[i].checkDefault(s.deflt); err != nil {
				errs = append(errs, "parameter "+p.name+": "+err.Error())
			}
		}
		if d, ok := s.deflt.(string); ok && s.hasDefault && !utf8.ValidString(d) {
			errs = append(errs, "parameter "+p.name+": its Default is not valid UTF-8, which a Python str cannot hold")
		}
		if err := nameError("parameter", p.name); err != nil {
			errs = append(errs, err.Error())
		} else if p := asciiProblem(p.name); p != "" && (f.member == nil || f.member.kind != memberSet) {
			errs = append(errs, p) // a setter's value is named after its property, and never in a signature
		}
		switch {
		case s.flags&(fSelf|fCls) != 0: // the receiver: a setter's value may be named self (a property self)
		case p.name == "self" && f.member != nil && f.member.kind != memberSet:
			errs = append(errs, "parameter self: a constructor's or method's parameter cannot be named self, "+
				"which is the object's own in its Python signature")
		case p.name == "cls" && f.bind == bindClass:
			errs = append(errs, "parameter cls: a class method's parameter cannot be named cls, the class's own in its Python signature")
		case seen[p.name]:
			errs = append(errs, "parameter "+p.name+" appears twice")
		}
		if s.flags&(fSelf|fCls) == 0 {
			seen[p.name] = true
		}
		if kwOnly {
			s.flags |= fKwOnly // after Python's *, every parameter is keyword-only
		}
		kwOnly = s.flags&fKwOnly != 0
		f.params = append(f.params, s)
	}
	if p := docProblem(doc); p != "" {
		errs = append(errs, "its doc "+p)
	}
	errs = append(errs, f.bindProblems()...)
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
		if p.flags&(fSelf|fCls) != 0 {
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

// pyRepr writes a default the way Python's repr would, so that
// inspect.signature and help() read it back: a str with Python's escapes,
// True/False, ints and floats, a Device as what a caller would pass ('cpu',
// (14, 0)), an empty array default as None. A value Python has no literal
// for is "...", which inspect reads as Ellipsis rather than failing.
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return pyStrRepr(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	case Device:
		if x.IsHost() {
			return "'cpu'"
		}
		return fmt.Sprintf("(%d, %d)", int32(x.DL.Type), x.DL.ID)
	case arrayResult: // Array[T]{} or AnyArray{}: omitted means None
		return "None"
	case float32:
		return pyFloatRepr(float64(x), 32)
	case float64:
		return pyFloatRepr(x, 64)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	}
	return "..."
}

// pyFloatRepr is Python's repr of a float: the shortest text that reads
// back, with ".0" for integral values. inf and nan have no literal: they
// are the expressions 1e999 (a literal too large for a float is inf),
// -1e999 and 1e999-1e999, which inspect.signature evaluates (from Python
// 3.10 on) and a stub may hold.
func pyFloatRepr(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "1e999-1e999"
	case math.IsInf(f, 1):
		return "1e999"
	case math.IsInf(f, -1):
		return "-1e999"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// pyStrRepr is Python's ascii() of a str: single quotes unless the text
// has one and no double quote, backslash escapes for the quote,
// backslashes, control characters and everything beyond ASCII (CPython's
// text signatures, which inspect parses, must be ASCII).
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || (r >= 0x7f && r < 0x100):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x100 && r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x10000:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// decoder reads one argument of a Go type T: kind is how C reads it,
// typ the Go type's name, array whether it is an array, checkDefault
// whether a Default fits T.
type decoder struct {
	kind         int32
	flags        int32 // flags the type implies (UBX_F_NONE for a *T)
	class        int32 // pInstance: the class's index
	typ          string
	array        bool
	optional     bool           // a *T of a scalar type T
	want         dlabi.DataType // an array's element type (zero: any)
	goType       string         // an array's Go element type, for messages
	checkDefault func(any) error
	into         func(c *frame, i int, dst unsafe.Pointer) error
	// word reads a bool, integer or float argument C read as the bits of
	// its Go value (nil for the other types).
	word func(v *value, c *frame, i int) (uint64, error)
}

// Each FuncN and FuncNR is one implementation per arity, funcN: FuncN
// is FuncNR with no result (none, which encodes as Python's None).

// none is the result of a function that returns nothing.
type none struct{}

// withResult adds the option that records a function's result type R.
func withResult[R any](opts []FuncOption) []FuncOption {
	return append(opts[:len(opts):len(opts)], funcOption(func(f *function) { f.results = resultTypes(reflect.TypeFor[R]()) }))
}

// resultTypes is a function's results as the stub sees them: none for
// none, else each.
func resultTypes(ts ...reflect.Type) []reflect.Type {
	if len(ts) == 1 && ts[0] == reflect.TypeFor[none]() {
		return nil
	}
	return ts
}

func encodeNone(_ *frame, _ none, r *result) error {
	r.kind = rNone
	return nil
}

// Func0 adds a Go function without parameters, returning nothing.
func Func0(m *Module, name, doc string, fn func() error, opts ...FuncOption) {
	func0(m, name, doc, func() (none, error) { return none{}, fn() }, encodeNone, opts)
}

// Func0R adds a Go function without parameters that returns a value. A
// result's Go type says what Python gets:
//
//	bool, integers, floats, string   bool, int, float, str
//	*bool, *int, …, *string          the same, or None for nil
//	*usm.Array                       a new Array, which takes over the array's Owner
//	[]T (T an element type)          a new host Array over the slice
//	Array[T], AnyArray               an Array over an argument's memory
//	Result                           an argument as given (out=), a new Array, or None
//	*T of a class                    the object holding the *T: see Class
//	iter.Seq[V]                      an iterator over the values, each returned as a V is
//	pybridge.Object                  the object (a new reference Python takes)
//
// Func and Method return several results as a tuple.
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

// Func adds a Go function of any number of parameters, one Param each in
// params: fn is a func whose parameters have the types Param lists, and
// whose results are an error, or values of result types (see Func0R) and
// an error. One value is the function's result; two or more are a tuple
// of them, as Python returns several values (func(x Array[float64]) (mean,
// variance float64, err error) returns (mean, variance)). Its type is
// checked when the module is defined (a mistake is a definition error:
// Check, and the import). Func0 … Func4R are the same for up to four
// parameters and one result with fn's type checked by the compiler; Func
// calls fn through reflection, which costs a few hundred nanoseconds more
// per call.
//
// Functions added under one name are one Python function over several
// element types (nanobind's overloads): they must have the same
// parameters (names, options, Go types) but for the element types of
// their Array parameters, and a call goes to the first whose Array
// parameters take the arguments' element types; none is a TypeError
// naming the parameter and the types the overloads take.
func Func(m *Module, name, doc string, fn any, params []Param, opts ...FuncOption) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		m.errs = append(m.errs, fmt.Errorf("function %s: Func takes a Go func, got %T", name, fn))
		return
	}
	t := v.Type()
	errType := reflect.TypeFor[error]()
	var errs []string
	if t.IsVariadic() {
		errs = append(errs, "a variadic func has no Python signature")
	}
	if t.NumIn() != len(params) {
		errs = append(errs, fmt.Sprintf("the func has %d parameters and %d Params name them", t.NumIn(), len(params)))
	}
	if t.NumOut() < 1 || t.Out(t.NumOut()-1) != errType {
		errs = append(errs, "the func must return error, or results and an error")
	}
	decs := make([]decoder, t.NumIn())
	for i := range decs {
		d, ok := m.decoderOf(t.In(i))
		if !ok {
			errs = append(errs, "parameter "+paramName(params, i)+" has Go type "+d.typ+", which pyext cannot read from a Python argument"+classHint(t.In(i)))
		}
		decs[i] = d
	}
	nres := max(t.NumOut()-1, 0) // the values besides the error
	encs := make([]encoder, nres)
	types := make([]reflect.Type, nres)
	for i := range encs {
		types[i] = t.Out(i)
		e, ok := m.encoderOf(types[i])
		if !ok {
			errs = append(errs, "result type "+types[i].String()+" cannot be returned to Python"+classHint(types[i]))
		}
		encs[i] = e
	}
	if len(errs) > 0 {
		m.errs = append(m.errs, fmt.Errorf("function %s: %s", name, strings.Join(errs, "; ")))
		return
	}
	n := t.NumIn()
	opts = append(opts[:len(opts):len(opts)], funcOption(func(f *function) { f.results = types }))
	define(m, name, doc, params, decs, opts, func(c *frame, r *result) error {
		args := make([]reflect.Value, n)
		for i := range args {
			p := reflect.New(t.In(i))
			if err := decs[i].into(c, i, p.UnsafePointer()); err != nil {
				return err
			}
			args[i] = p.Elem()
		}
		var outs []reflect.Value
		if err := c.run(func() error {
			outs = v.Call(args)
			if e := outs[nres]; !e.IsNil() {
				return e.Interface().(error)
			}
			return nil
		}); err != nil {
			return err
		}
		encode := func(i int, r *result) error {
			p := reflect.New(types[i])
			p.Elem().Set(outs[i])
			return encs[i](c, p.UnsafePointer(), r)
		}
		switch nres {
		case 0:
			r.kind = rNone
			return nil
		case 1:
			return encode(0, r)
		}
		return c.setTuple(r, nres, encode)
	})
}

func paramName(ps []Param, i int) string {
	if i < len(ps) {
		return ps[i].name
	}
	return "#" + strconv.Itoa(i+1)
}

// overload adds g, a function or method of f's name, to f's overloads, or
// says why it cannot be one: "defined twice" and why, which the caller
// completes with what f is ("function f", "class Plan: run").
func (f *function) overload(g *function) error {
	if f.builtin != fnGo || g.builtin != fnGo {
		return errors.New("defined twice")
	}
	if len(f.params) != len(g.params) || f.releaseGIL != g.releaseGIL || f.noWait != g.noWait {
		return errors.New("defined twice, with other parameters or options (overloads differ only in their arrays' element types)")
	}
	differ := false
	for i := range f.params {
		p, q := &f.params[i], &g.params[i]
		same := p.name == q.name && p.kind == q.kind && p.flags == q.flags && p.isArray == q.isArray &&
			p.hasDefault == q.hasDefault && reflect.DeepEqual(p.array, q.array) &&
			(!p.hasDefault || reflect.DeepEqual(p.deflt, q.deflt)) && (p.isArray || f.types[i] == g.types[i])
		if !same {
			return fmt.Errorf("defined twice: parameter %s differs (overloads differ only in their arrays' element types)", p.name)
		}
		if f.wants[i] != g.wants[i] {
			differ = true
		}
	}
	os := f.overloads
	if os == nil {
		os = []*function{f}
	}
	for _, o := range os {
		if slices.Equal(o.wants, g.wants) {
			if differ {
				return errors.New("defined twice for the same element types")
			}
			return errors.New("defined twice")
		}
	}
	if f.overloads == nil {
		first := *f // overload 0: f as it was defined, with its own call
		f.overloads = []*function{&first}
		f.call = f.dispatch
	}
	f.overloads = append(f.overloads, g)
	return nil
}

// dispatch calls the first overload whose array parameters take the
// arguments' element types (an omitted or None array takes any).
func (f *function) dispatch(c *frame, r *result) error {
	for _, o := range f.overloads {
		ok, err := o.takes(c)
		if err != nil {
			return err
		}
		if ok {
			c.fn = o
			return o.call(c, r)
		}
	}
	return f.noOverload(c)
}

// takes reports whether f's array parameters take the call's arguments'
// element types; an error for an argument that is no array at all.
func (f *function) takes(c *frame) (bool, error) {
	for i, want := range f.wants {
		if !f.params[i].isArray || want.Bits == 0 {
			continue
		}
		a, err := c.decodeArray(i)
		if err != nil {
			return false, err
		}
		if a.none {
			continue
		}
		if got := a.dl; got.Bits == 0 || got != want {
			return false, nil
		}
	}
	return true, nil
}

// noOverload is the TypeError of a call no overload takes: the first
// array parameter whose element type none takes, with the types they do.
func (f *function) noOverload(c *frame) error {
	for i, p := range f.params {
		if !p.isArray {
			continue
		}
		a, err := c.decodeArray(i)
		if err != nil || a.none {
			continue
		}
		got := a.dl
		var names []string
		taken := false
		for _, o := range f.overloads {
			if o.wants[i].Bits == 0 || o.wants[i] == got {
				taken = true
				break
			}
			if n := dtypeName(o.wants[i]); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		if !taken {
			return argErr(errkind.Type, f.name, p.name, "must be an array of "+strings.Join(names, " or ")+", got "+dtypeName(got))
		}
	}
	var sigs []string
	for _, o := range f.overloads {
		var ps []string
		for i, p := range o.params {
			if p.isArray && o.wants[i].Bits != 0 {
				ps = append(ps, p.name+": "+dtypeName(o.wants[i]))
			}
		}
		sigs = append(sigs, "("+strings.Join(ps, ", ")+")")
	}
	return errkind.New(errkind.Type, "pyext", f.name+"() takes arrays of element types "+strings.Join(sigs, " or ")+", not the ones given")
}
