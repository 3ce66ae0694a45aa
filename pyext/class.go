package pyext

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
)

// Class is a Go type T that Python sees as a class of the module: Python
// objects of the class each hold a *T, which lives as long as the object.
// NewClass defines it; Init0 … Init4 give it a constructor, Method0 …
// Method3 (and …R) and Method methods (Method with Static or ClassMethod:
// static and class methods), Property and SettableProperty properties.
// Methods and constructors take parameters as functions do (P, Default,
// Optional, KeywordOnly, OneOf, the array options), and a parameter or
// result of type *T of any function or method is an object of the class.
// Methods of one name that differ only in their arrays' element types are
// overloads, whichever of Method0 … Method3R or Method adds them, as Func's
// functions are; so are constructors (Init0 … Init4 twice) and static
// methods. docs/extensions.md, "Classes, start to end", walks through a
// class.
//
// The Python object is freed as any other: by its reference count, or by
// the cyclic garbage collector (the class takes part in it); the module then
// drops its *T, and calls its Close method if *T has one (io.Closer: device
// memory, a plan, a connection), once, with the GIL; an error Close returns
// goes to Python's unraisable hook. A call that reads the object as an
// argument holds its *T until the call ends: the collector clearing the
// object meanwhile closes it after the call, not under it.
//
// Each *T has at most one object. A *T that Go returns while its object is
// alive is that object again, not a second one (a constructor, which makes
// a new object, must return a new value: a live one is a RuntimeError). A
// *T that Go returns after its object went (a value held by another
// class's value, returned when its own object was deleted) is a new object
// if *T has no Close, since nothing happened to it; if *T has Close, which
// ran when the object went, the call raises RuntimeError naming the
// function and the class rather than return a closed value as alive (and
// close it a second time): keep the object alive as long as Go uses its
// value. Go keeps that record of a closed value without keeping the value
// alive, for as long as Go can reach it. A zero-size T (struct{}) has no
// identity to go by, for Go gives every zero-size allocation one address:
// each construction is an object of its own, a *T Go returns is a new
// object each time, and each object's Close runs once, when it goes.
//
// Objects support weak references. The constructor runs in __init__, as a
// Python class's does: Python may subclass the class, and a subclass's
// __init__ calls the class's (super().__init__(...)) to give the object its
// *T; an object whose __init__ did not has none, and its methods raise
// TypeError saying so. Go never calls a subclass's methods: a method a
// subclass overrides is overridden for Python's callers only. A class with
// __getstate__ and __setstate__ methods pickles and copies: unpickling
// makes an object without a value, and __setstate__ receives a new zero
// *T to set (RATIONALE.md, "Go types as Python classes").
type Class[T any] struct {
	m *Module
	c *class
}

// class is a class of the module as it is defined.
type class struct {
	name, doc string // the Python name, the docstring
	index     int    // in Module.classes, and C's table of class types
	typ       reflect.Type
	ctor      *function // nil: Python cannot make objects of the class
	methods   []*function
	props     []*property
	closer    bool // *T has Close() error
	zeroSize  bool // T has size zero: its values have no identity (values)
	hidden    bool // pyext's own (the iterators'): not in the module's namespace or its stub
}

// binding is how a member function of a class is bound: an instance
// method gets the object, a static method nothing, a class method the
// class it is called on.
type binding int

const (
	bindSelf binding = iota
	bindStatic
	bindClass
)

func (b binding) applyFunc(f *function) { f.bind = b }

// Static makes a method Method adds a static method (Python's
// @staticmethod, PyO3's #[staticmethod], nanobind's def_static): its func
// takes no receiver, only the Params, and Python calls it on the class or
// an object alike. An alternative constructor is one: a static method
// returning *T (Stats.from_values(...)). It is an option of Method only.
func Static() FuncOption { return bindStatic }

// ClassMethod makes a method Method adds a class method (Python's
// @classmethod): its func's first parameter is a pybridge.Object, the
// class it is called on (a Python subclass, when called through one),
// borrowed for the call, and the Params name the others. It is an option
// of Method only.
func ClassMethod() FuncOption { return bindClass }

// bindOf is the binding opts ask for.
func bindOf(opts []FuncOption) binding {
	b := bindSelf
	for _, o := range opts {
		if x, ok := o.(binding); ok {
			b = x
		}
	}
	return b
}

// bindProblems are the definition errors of f's binding: Static and
// ClassMethod make methods of Method without a receiver, and no special
// method, which Python calls on the object.
func (f *function) bindProblems() []string {
	if f.bind == bindSelf {
		return nil
	}
	opt := map[binding]string{bindStatic: "Static", bindClass: "ClassMethod"}[f.bind]
	switch {
	case f.member == nil || f.member.kind != memberMethod:
		return []string{opt + " is an option of a class's Method"}
	case len(f.params) > 0 && f.params[0].flags&fSelf != 0:
		return []string{opt + " is an option of Method, whose func then takes no receiver (Method0 … Method3R take one)"}
	case isSpecial(f.member.attr):
		return []string{opt + " cannot make " + f.member.attr + ", a special method Python calls on the object"}
	}
	return nil
}

// isSpecial reports whether name is a special method's: __name__.
func isSpecial(name string) bool {
	return len(name) > 4 && strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__")
}

// property is a property of a class: its getter (self) and setter (self,
// value) are functions of the module.
type property struct {
	name, doc string
	get, set  *function
}

// member marks a function of the module as a part of class c: kind says
// which (a constructor, a method, a property's getter or setter), attr is
// its name in the class.
type member struct {
	c    *class
	kind memberKind
	attr string
	prop *property
}

type memberKind int

const (
	memberInit memberKind = iota
	memberMethod
	memberGet
	memberSet
)

func (mb *member) applyFunc(f *function) { f.member = mb }

// NewClass defines a class name of the module whose objects hold a *T.
// name, and those of its methods and properties, are names Python code can
// write (Check says which cannot).
// Without a constructor (Init0 …) only Go makes its objects, by returning
// a *T. T is not a pointer or interface type.
func NewClass[T any](m *Module, name, doc string) *Class[T] {
	c := &class{name: name, doc: doc, typ: reflect.TypeFor[*T](), zeroSize: reflect.TypeFor[T]().Size() == 0}
	if err := docError("class "+name, doc); err != nil {
		m.errs = append(m.errs, err)
	}
	_, c.closer = any((*T)(nil)).(interface{ Close() error })
	if k := reflect.TypeFor[T]().Kind(); k == reflect.Pointer || k == reflect.Interface {
		m.errs = append(m.errs, fmt.Errorf("class %s: its Go type %s is a %s; a class holds a *T of a type T of its own", name, reflect.TypeFor[T](), k))
	}
	m.addClass(c)
	return &Class[T]{m: m, c: c}
}

// addClass adds c to m, unless its name is taken or no Python identifier,
// or T has a class already.
func (m *Module) addClass(c *class) {
	if err := nameError("class", c.name); err != nil {
		m.errs = append(m.errs, err)
	}
	for _, o := range m.classes {
		if o.typ == c.typ {
			m.errs = append(m.errs, fmt.Errorf("class %s: Go type %s is class %s already", c.name, c.typ.Elem(), o.name))
		}
	}
	c.index = len(m.classes)
	m.classes = append(m.classes, c)
}

// classOf is the class of Go type t (a *T), or nil.
func (m *Module) classOf(t reflect.Type) *class {
	for _, c := range m.classes {
		if c.typ == t {
			return c
		}
	}
	return nil
}

// receiver is the parameter a method's Go function receives its *T as:
// Python's self, positional-only.
var receiver = Param{name: "self", opts: []ParamOption{optionFunc(func(s *paramSpec) error {
	s.flags |= fPosOnly | fSelf
	return nil
})}}

// classReceiver is the parameter a class method's Go function receives the
// class as: Python's cls, positional-only.
var classReceiver = Param{name: "cls", opts: []ParamOption{optionFunc(func(s *paramSpec) error {
	s.flags |= fPosOnly | fCls
	return nil
})}}

// memberOpts are a class member's function options: the user's, and its
// membership.
func memberOpts(opts []FuncOption, mb *member) []FuncOption {
	return append(append([]FuncOption(nil), opts...), mb)
}

// qual is the name a member's errors carry: "Plan.run", "Plan" for the
// constructor.
func (c *class) qual(attr string) string {
	if attr == "" {
		return c.name
	}
	return c.name + "." + attr
}

// initEncoder is a constructor's result: the new object (never None).
func initEncoder[T any](cls *Class[T]) typedEncoder[*T] {
	enc := instanceEncoder(cls.c)
	return func(f *frame, out *T, r *result) error {
		if out == nil {
			return RuntimeError("%s() returned no %s (a nil *%s and no error)", cls.c.name, cls.c.name, cls.c.typ.Elem())
		}
		if err := enc(f, unsafe.Pointer(&out), r); err != nil {
			return err
		}
		if r.n != 0 { // its object is alive: a constructor's object is new
			return RuntimeError("%s() returned a *%s that is the value of a %s object already: a constructor returns a new value",
				cls.c.name, cls.c.typ.Elem(), cls.c.name)
		}
		return nil
	}
}

// Init0 gives the class a constructor without parameters: Python's
// Plan() calls fn, whose *T the new object holds. The constructor is the
// class's __init__ (a subclass's __init__ calls it), and fn returns a new
// value: one that is an object's already is a RuntimeError. A second
// constructor of other element types is an overload, as for Func.
func Init0[T any](cls *Class[T], fn func() (*T, error), opts ...FuncOption) {
	func0(cls.m, cls.c.name, "", fn, initEncoder(cls), memberOpts(opts, &member{c: cls.c, kind: memberInit}))
}

// Init1 gives the class a constructor of one parameter.
func Init1[T, A any](cls *Class[T], fn func(A) (*T, error), a Param, opts ...FuncOption) {
	func1(cls.m, cls.c.name, "", fn, initEncoder(cls), a, memberOpts(opts, &member{c: cls.c, kind: memberInit}))
}

// Init2 gives the class a constructor of two parameters.
func Init2[T, A, B any](cls *Class[T], fn func(A, B) (*T, error), a, b Param, opts ...FuncOption) {
	func2(cls.m, cls.c.name, "", fn, initEncoder(cls), a, b, memberOpts(opts, &member{c: cls.c, kind: memberInit}))
}

// Init3 gives the class a constructor of three parameters.
func Init3[T, A, B, C any](cls *Class[T], fn func(A, B, C) (*T, error), a, b, c Param, opts ...FuncOption) {
	func3(cls.m, cls.c.name, "", fn, initEncoder(cls), a, b, c, memberOpts(opts, &member{c: cls.c, kind: memberInit}))
}

// Init4 gives the class a constructor of four parameters.
func Init4[T, A, B, C, D any](cls *Class[T], fn func(A, B, C, D) (*T, error), a, b, c, d Param, opts ...FuncOption) {
	func4(cls.m, cls.c.name, "", fn, initEncoder(cls), a, b, c, d, memberOpts(opts, &member{c: cls.c, kind: memberInit}))
}

func method(c *class, name string) *member { return &member{c: c, kind: memberMethod, attr: name} }

// Method0 adds a method without parameters, returning nothing: fn gets
// the object's *T (a method expression such as (*Plan).Reset fits).
func Method0[T any](cls *Class[T], name, doc string, fn func(*T) error, opts ...FuncOption) {
	func1(cls.m, cls.c.qual(name), doc, func(p *T) (none, error) { return none{}, fn(p) }, encodeNone, receiver,
		memberOpts(opts, method(cls.c, name)))
}

// Method0R adds a method without parameters that returns a value.
func Method0R[T, R any](cls *Class[T], name, doc string, fn func(*T) (R, error), opts ...FuncOption) {
	enc, _ := encoderFor[R](cls.m, cls.c.qual(name))
	func1(cls.m, cls.c.qual(name), doc, fn, enc, receiver, memberOpts(opts, method(cls.c, name)))
}

// Method1 adds a method of one parameter, returning nothing.
func Method1[T, A any](cls *Class[T], name, doc string, fn func(*T, A) error, a Param, opts ...FuncOption) {
	func2(cls.m, cls.c.qual(name), doc, func(p *T, x A) (none, error) { return none{}, fn(p, x) }, encodeNone,
		receiver, a, memberOpts(opts, method(cls.c, name)))
}

// Method1R adds a method of one parameter that returns a value.
func Method1R[T, A, R any](cls *Class[T], name, doc string, fn func(*T, A) (R, error), a Param, opts ...FuncOption) {
	enc, _ := encoderFor[R](cls.m, cls.c.qual(name))
	func2(cls.m, cls.c.qual(name), doc, fn, enc, receiver, a, memberOpts(opts, method(cls.c, name)))
}

// Method adds a method of any number of parameters, as Func adds a
// function: fn's first parameter is the receiver, *T, and params name the
// others. Methods of one name that differ only in their arrays' element
// types are overloads, as Func's functions are. With Static, fn has no
// receiver (a static method); with ClassMethod, fn's first parameter is
// the class (a class method). ExampleMethod shows both.
func Method[T any](cls *Class[T], name, doc string, fn any, params []Param, opts ...FuncOption) {
	t := reflect.TypeOf(fn)
	opts = memberOpts(opts, method(cls.c, name))
	switch bindOf(opts) {
	case bindStatic:
		Func(cls.m, cls.c.qual(name), doc, fn, params, opts...)
		return
	case bindClass:
		if t == nil || t.Kind() != reflect.Func || t.NumIn() == 0 || t.In(0) != reflect.TypeFor[pybridge.Object]() {
			cls.m.errs = append(cls.m.errs, fmt.Errorf("method %s: a class method's func takes the class first, a pybridge.Object", cls.c.qual(name)))
			return
		}
		Func(cls.m, cls.c.qual(name), doc, fn, append([]Param{classReceiver}, params...), opts...)
		return
	}
	if t == nil || t.Kind() != reflect.Func || t.NumIn() == 0 || t.In(0) != reflect.TypeFor[*T]() {
		cls.m.errs = append(cls.m.errs, fmt.Errorf("method %s: its func's first parameter must be the receiver, %s", cls.c.qual(name), reflect.TypeFor[*T]()))
		return
	}
	Func(cls.m, cls.c.qual(name), doc, fn, append([]Param{receiver}, params...), opts...)
}

// Method2 adds a method of two parameters, returning nothing.
func Method2[T, A, B any](cls *Class[T], name, doc string, fn func(*T, A, B) error, a, b Param, opts ...FuncOption) {
	func3(cls.m, cls.c.qual(name), doc, func(p *T, x A, y B) (none, error) { return none{}, fn(p, x, y) }, encodeNone,
		receiver, a, b, memberOpts(opts, method(cls.c, name)))
}

// Method2R adds a method of two parameters that returns a value.
func Method2R[T, A, B, R any](cls *Class[T], name, doc string, fn func(*T, A, B) (R, error), a, b Param, opts ...FuncOption) {
	enc, _ := encoderFor[R](cls.m, cls.c.qual(name))
	func3(cls.m, cls.c.qual(name), doc, fn, enc, receiver, a, b, memberOpts(opts, method(cls.c, name)))
}

// Method3 adds a method of three parameters, returning nothing.
func Method3[T, A, B, C any](cls *Class[T], name, doc string, fn func(*T, A, B, C) error, a, b, c Param, opts ...FuncOption) {
	func4(cls.m, cls.c.qual(name), doc, func(p *T, x A, y B, z C) (none, error) { return none{}, fn(p, x, y, z) },
		encodeNone, receiver, a, b, c, memberOpts(opts, method(cls.c, name)))
}

// Method3R adds a method of three parameters that returns a value.
func Method3R[T, A, B, C, R any](cls *Class[T], name, doc string, fn func(*T, A, B, C) (R, error), a, b, c Param, opts ...FuncOption) {
	enc, _ := encoderFor[R](cls.m, cls.c.qual(name))
	func4(cls.m, cls.c.qual(name), doc, fn, enc, receiver, a, b, c, memberOpts(opts, method(cls.c, name)))
}

// Property adds a read-only property: reading it calls get.
func Property[T, V any](cls *Class[T], name, doc string, get func(*T) (V, error)) {
	p := &property{name: name, doc: doc}
	enc, _ := encoderFor[V](cls.m, cls.c.qual(name))
	func1(cls.m, cls.c.qual(name), doc, get, enc, receiver, []FuncOption{&member{c: cls.c, kind: memberGet, attr: name, prop: p}})
}

// SettableProperty adds a property that Python may also set: setting it
// calls set with the value, read as a parameter named name of type V with
// opts (a wrong value is a TypeError naming the property); deleting it is a
// TypeError.
func SettableProperty[T, V any](cls *Class[T], name, doc string, get func(*T) (V, error), set func(*T, V) error, opts ...ParamOption) {
	p := &property{name: name, doc: doc}
	enc, _ := encoderFor[V](cls.m, cls.c.qual(name))
	func1(cls.m, cls.c.qual(name), doc, get, enc, receiver, []FuncOption{&member{c: cls.c, kind: memberGet, attr: name, prop: p}})
	func2(cls.m, cls.c.qual(name), "", func(t *T, v V) (none, error) { return none{}, set(t, v) }, encodeNone,
		receiver, P(name, opts...), []FuncOption{&member{c: cls.c, kind: memberSet, attr: name, prop: p}})
}

// join adds member function f to its class: the constructor, a method or
// a property's accessor. A method of the name of another is its overload
// (function.overload, as for functions of the module); any other two
// members of one name are an error.
func (m *Module) join(f *function) {
	mb := f.member
	c := mb.c
	method := func(name string) *function {
		for _, g := range c.methods {
			if g.member.attr == name {
				return g
			}
		}
		return nil
	}
	taken := func(name string) bool {
		for _, p := range c.props {
			if p.name == name {
				return true
			}
		}
		return method(name) != nil
	}
	switch mb.kind {
	case memberInit:
		if c.ctor != nil {
			if err := c.ctor.overload(f); err != nil {
				m.errs = append(m.errs, fmt.Errorf("class %s: the constructor %w", c.name, err))
			}
			return
		}
		c.ctor = f
	case memberMethod, memberGet:
		if mb.kind == memberMethod {
			if p := specialProblem(f); p != "" {
				m.errs = append(m.errs, fmt.Errorf("class %s: %s %s", c.name, mb.attr, p))
				return
			}
			if mb.attr == "__setstate__" {
				f.params[0].flags |= fNew // unpickling: the object has no value yet
			}
		}
		switch {
		case nameProblem(mb.attr) != "":
			m.errs = append(m.errs, fmt.Errorf("class %s: name %q %s", c.name, mb.attr, nameProblem(mb.attr)))
			return
		case reservedAttr[mb.attr]:
			m.errs = append(m.errs, fmt.Errorf("class %s: %s cannot be defined by a Go method (the class makes and frees its objects itself)", c.name, mb.attr))
			return
		case mb.kind == memberMethod && method(mb.attr) != nil && method(mb.attr).bind != f.bind:
			m.errs = append(m.errs, fmt.Errorf("class %s: %s defined twice, as a %s and a %s", c.name, mb.attr, method(mb.attr).bind, f.bind))
			return
		case mb.kind == memberMethod && method(mb.attr) != nil:
			if err := method(mb.attr).overload(f); err != nil {
				m.errs = append(m.errs, fmt.Errorf("class %s: %s %w", c.name, mb.attr, err))
			}
			return
		case taken(mb.attr):
			m.errs = append(m.errs, fmt.Errorf("class %s: %s defined twice", c.name, mb.attr))
			return
		}
		if mb.kind == memberMethod {
			c.methods = append(c.methods, f)
		} else {
			mb.prop.get = f
			c.props = append(c.props, mb.prop)
		}
	case memberSet:
		if mb.prop.get == nil { // the getter was refused
			return
		}
		mb.prop.set = f
	}
	f.index = len(m.funcs)
	m.funcs = append(m.funcs, f)
}

func (b binding) String() string {
	return map[binding]string{bindSelf: "method", bindStatic: "static method", bindClass: "class method"}[b]
}

// special is what Python passes a special method besides the object (the
// positional arguments its slot calls it with) and the result it takes
// (a reflect.Kind class: "int", "bool", "str", "float"; "" any).
type special struct {
	args   int
	result string
}

// specials are the special methods whose calls Python makes itself: a
// method of one of these names must take the arguments Python passes, and
// return what Python accepts, or every use would fail; __call__ takes any.
var specials = func() map[string]special {
	s := map[string]special{
		"__len__": {0, "int"}, "__bool__": {0, "bool"}, "__repr__": {0, "str"}, "__str__": {0, "str"},
		"__hash__": {0, "int"}, "__index__": {0, "int"}, "__int__": {0, "int"}, "__float__": {0, "float"},
		"__getitem__": {1, ""}, "__setitem__": {2, ""}, "__delitem__": {1, ""}, "__contains__": {1, "bool"},
		"__iter__": {0, ""}, "__next__": {0, ""}, "__enter__": {0, ""}, "__exit__": {3, ""},
		"__getstate__": {0, ""}, "__setstate__": {1, ""}, "__neg__": {0, ""}, "__pos__": {0, ""},
		"__abs__": {0, ""}, "__invert__": {0, ""},
		"__eq__": {1, ""}, "__ne__": {1, ""}, "__lt__": {1, ""}, "__le__": {1, ""}, "__gt__": {1, ""}, "__ge__": {1, ""},
	}
	for _, op := range []string{"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
		"lshift", "rshift", "and", "xor", "or"} {
		s["__"+op+"__"], s["__r"+op+"__"] = special{1, ""}, special{1, ""}
		if op != "divmod" {
			s["__i"+op+"__"] = special{1, ""}
		}
	}
	return s
}()

// specialProblem is why f, a method named like a special method, cannot be
// called as Python calls that method, or "".
func specialProblem(f *function) string {
	sp, ok := specials[f.member.attr]
	if !ok || f.bind != bindSelf {
		return ""
	}
	positional, required := 0, 0
	for _, p := range f.params[1:] {
		if p.flags&fKwOnly == 0 {
			positional++
		}
		if p.flags&fOptional == 0 {
			required++
		}
	}
	if required > sp.args || positional < sp.args {
		return fmt.Sprintf("takes %d argument%s besides the object, as Python calls it; the method has %d (%d required)",
			sp.args, plural(sp.args), len(f.params)-1, required)
	}
	if sp.result != "" {
		if len(f.results) != 1 || kindClass(f.results[0]) != sp.result {
			goType := map[string]string{"int": "an integer", "bool": "a bool", "str": "a string", "float": "a float"}[sp.result]
			return "must return a Python " + sp.result + ", as Python requires of it (a Go " + goType + ")"
		}
	}
	if f.member.attr == "__setstate__" && len(f.results) != 0 {
		return "returns nothing (Python ignores what it returns, and its value becomes the object's)"
	}
	if f.member.attr == "__setstate__" && f.releaseGIL {
		return "makes the object's value when it unpickles one: it cannot release the GIL"
	}
	return ""
}

// kindClass is the Python scalar a Go type is returned as: "int", "bool",
// "str", "float", or "".
func kindClass(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Bool:
		return "bool"
	case reflect.String:
		return "str"
	case reflect.Float32, reflect.Float64:
		return "float"
	}
	return ""
}

// reservedAttr are the names a Go method or property cannot take: the
// class's own machinery, which Python would look up instead of the slots
// pyext fills.
var reservedAttr = map[string]bool{
	"__new__": true, "__init__": true, "__del__": true, "__class__": true, "__dict__": true,
	"__weakref__": true, "__slots__": true, "__getattribute__": true, "__getattr__": true,
	"__setattr__": true, "__delattr__": true, "__init_subclass__": true, "__class_getitem__": true,
	"__set_name__": true, "__doc__": true, "__module__": true, "__qualname__": true, "__name__": true,
	"__text_signature__": true, "__reduce__": true, "__reduce_ex__": true,
}

// decoderOf is the decoder of a parameter of Go type t: an object of one
// of the module's classes for its *T, else pyext's decoderOf.
func (m *Module) decoderOf(t reflect.Type) (decoder, bool) {
	if c := m.classOf(t); c != nil {
		return instanceDecoder(c), true
	}
	return decoderOf(t)
}

// encoderOf is encoderOf, with the module's classes and sequences.
func (m *Module) encoderOf(t reflect.Type) (encoder, bool) {
	if c := m.classOf(t); c != nil {
		return instanceEncoder(c), true
	}
	if v, ok := isSeq(t); ok {
		return m.seqEncoder(t, v)
	}
	return encoderOf(t)
}

// instanceDecoder reads an object of class c as its *T: C checked the
// object's class and passes its handle; None (for an Optional parameter)
// is a nil pointer.
func instanceDecoder(c *class) decoder {
	d := decoder{typ: c.typ.String(), kind: pInstance, class: int32(c.index)}
	d.into = func(f *frame, i int, dst unsafe.Pointer) error {
		v := &f.vals[i]
		if v.kind == vNew { // __setstate__ of an object without a value: a new one
			x := reflect.New(c.typ.Elem())
			f.fresh = freshValue{i: i, v: x.Interface(), c: c}
			*(*unsafe.Pointer)(dst) = x.UnsafePointer()
			return nil
		}
		if v.kind != vInstance {
			*(*unsafe.Pointer)(dst) = nil
			return nil
		}
		x := values.get(v.i)
		if x == nil || reflect.TypeOf(x) != c.typ { // C checks the class: a value gone since is a dead object
			return deadObject(f, i, c)
		}
		*(*unsafe.Pointer)(dst) = reflect.ValueOf(x).UnsafePointer() // a *T is one pointer word
		return nil
	}
	d.checkDefault = func(any) error {
		return errors.New("a parameter of class " + c.name + " has no Default (Optional makes None its default)")
	}
	return d
}

func deadObject(f *frame, i int, c *class) error {
	return &ArgumentError{Func: f.fn.name, Param: f.fn.params[i].name, Reason: "is a " + c.name + " object whose Go value is gone", kind: errkind.Type}
}

// instanceEncoder returns a *T as its object: the one it has, or a new
// object of class c; nil is None. A value that was closed when its object
// went is refused: Go kept it past its object, and a new object would pass
// a closed value off as alive, and close it again.
func instanceEncoder(c *class) encoder {
	return func(f *frame, src unsafe.Pointer, r *result) error {
		if *(*unsafe.Pointer)(src) == nil {
			r.kind = rNone
			return nil
		}
		h, got := values.adopt(reflect.NewAt(c.typ, src).Elem().Interface(), c)
		if got == valueClosed {
			return RuntimeError("%s() returned a %s whose object is gone, and whose value was closed then: keep the %s object alive while Go holds its value", f.fn.name, c.name, c.name)
		}
		r.kind, r.arg, r.i = rInstance, int32(c.index), h
		if got == valueAlive {
			r.n = 1
		}
		return nil
	}
}

// classHint completes the definition error of a parameter or result type
// that pyext cannot convert: a pointer type may want a class.
func classHint(t reflect.Type) string {
	if t.Kind() == reflect.Pointer && t.Elem().Kind() != reflect.Pointer {
		return " (a *" + t.Elem().String() + " is an object of a class defined with NewClass[" + t.Elem().String() + "] before it is used)"
	}
	return ""
}
