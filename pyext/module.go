package pyext

import (
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"
)

// Module is an extension module being defined. The package built into the
// module has a function Module, which adds the module's functions (Example
// has this one):
//
//	func Module(m *pyext.Module) error {
//		m.Doc("Scale arrays in place, in Go.")
//		pyext.Func2(m, "scale", "x *= factor, in place.", scale,
//			pyext.P("x", pyext.NDim(1), pyext.Writable()), pyext.P("factor", pyext.Default(2.0)))
//		return nil
//	}
//
// and `python -m usmbridge.build` calls it when Python imports the module. Definition errors (a parameter type pyext
// cannot convert, an option that does not fit its parameter, two functions
// of one name) are collected, and the import fails with an ImportError
// that lists them; Check reports them to a Go test first.
type Module struct {
	name    string
	doc     string
	funcs   []*function // the module's functions, and its classes' members (function.member)
	classes []*class
	excs    []*exception // the module's own exception classes
	consts  []constant   // the module's attributes (Const)
	errs    []error

	arrayName, forkErrorName string
}

// Name is the module's full name, as Python imports it ("saxpy",
// "usmbridge._ext").
func (m *Module) Name() string { return m.name }

// Doc sets the module's docstring (UTF-8, without NUL: CPython keeps it
// as a C string).
func (m *Module) Doc(doc string) { m.doc = doc }

// TypeNames names the module's Array type and fork error, by default
// "<module>.Array" and "<module>.ForkError" (usmbridge's own module, whose
// objects users meet as usmbridge.Array, names them so).
func (m *Module) TypeNames(array, forkError string) {
	m.arrayName, m.forkErrorName = array, forkError
}

// Const adds an attribute to the module: a version string, a default, the
// choices of a parameter (OneOf's, as a tuple). v is a bool, an integer, a
// float, a string, or a slice of those (a tuple in Python); the stub types
// it Final. name is a name Python code can write, and none the import
// machinery sets (__name__, __doc__, __file__, ...).
func (m *Module) Const(name string, v any) {
	if err := nameError("attribute", name); err != nil {
		m.errs = append(m.errs, err)
		return
	}
	if moduleDunders[name] {
		m.errs = append(m.errs, fmt.Errorf("attribute %s: the name is one the import sets", name))
		return
	}
	if err := constProblem(v); err != "" {
		m.errs = append(m.errs, fmt.Errorf("attribute %s: %s", name, err))
		return
	}
	m.consts = append(m.consts, constant{name, v})
}

// constant is an attribute of the module, as Const gives it.
type constant struct {
	name string
	v    any
}

// moduleDunders are the attributes the import sets on every module.
var moduleDunders = map[string]bool{"__name__": true, "__doc__": true, "__package__": true, "__loader__": true,
	"__spec__": true, "__file__": true, "__path__": true, "__cached__": true, "__builtins__": true, "__dict__": true,
	"__class__": true}

// constProblem is why v cannot be a Const's value, or "".
func constProblem(v any) string {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return "nil is no value (a Const is a bool, an integer, a float, a string or a slice of them)"
	}
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		for i := range rv.Len() {
			if kindClass(rv.Index(i).Type()) == "" {
				return "a " + rv.Type().String() + " holds a " + rv.Index(i).Type().String() + " (a Const is a bool, an integer, a float, a string or a slice of them)"
			}
			if s, ok := rv.Index(i).Interface().(string); ok && !utf8.ValidString(s) {
				return "a string that is not valid UTF-8"
			}
		}
		return ""
	}
	if kindClass(rv.Type()) == "" {
		return "a " + rv.Type().String() + " (a Const is a bool, an integer, a float, a string or a slice of them)"
	}
	if s, ok := v.(string); ok && !utf8.ValidString(s) {
		return "a string that is not valid UTF-8"
	}
	return ""
}

// FromDLPack adds the array API's from_dlpack(x, /, *, device=None,
// copy=None) under name: it takes any DLPack producer (host memory is
// imported by the module's C half without entering Go, as NumPy's own
// from_dlpack does; USM, streams, copies and moves are Go's) and returns
// an Array of this module.
func (m *Module) FromDLPack(name string) {
	m.add(&function{name: name, builtin: fnFromDLPack, doc: name + "(x, /, *, device=None, copy=None)\n--\n\n" +
		"Return an Array over the data of x, as the array API's from_dlpack does.\n\n" +
		"x is any DLPack producer (numpy, dpnp, dpctl, jax, torch, another module's Array).\n" +
		"device is where the array must be: \"cpu\", a DLPack (device_type, device_id) pair,\n" +
		"a dpctl filter string, a dpctl.SyclDevice or a dpctl.SyclQueue; copy=None shares\n" +
		"memory where possible, True always copies, False never does (BufferError or\n" +
		"ValueError when a copy would be needed). A SYCL producer is passed the queue the\n" +
		"array lands on as stream, so it orders that queue after its pending work without\n" +
		"a host wait."})
}

// AsArray adds asarray(obj, /) under name: a zero-copy Array over obj's
// __sycl_usm_array_interface__ (dpnp and dpctl arrays, dpctl.memory
// objects), checked with dpctl's rules, its pointer bound to the SYCL
// context its syclobj names. The Array keeps obj alive.
func (m *Module) AsArray(name string) {
	m.add(&function{name: name, builtin: fnAsArray, doc: name + "(obj, /)\n--\n\n" +
		"Return a zero-copy Array over obj's USM memory (__sycl_usm_array_interface__).\n\n" +
		"The interface is checked with dpctl's rules and exceptions, the pointer must belong\n" +
		"to the SYCL context its syclobj names, and where the runtime can tell the\n" +
		"allocation's extent the array must lie inside it (ValueError otherwise). The\n" +
		"read-only flag is kept. The Array keeps obj alive. Needs dpctl."})
}

func (m *Module) add(f *function) {
	if f.member != nil {
		m.join(f)
		return
	}
	for _, g := range m.funcs {
		if g.name == f.name {
			if err := g.overload(f); err != nil {
				m.errs = append(m.errs, fmt.Errorf("function %s %w", f.name, err))
			}
			return
		}
	}
	if err := nameError("function", f.name); err != nil {
		m.errs = append(m.errs, err)
		return
	}
	f.index = len(m.funcs)
	m.funcs = append(m.funcs, f)
}

// err is the module's definition errors, joined, with the names that
// clash in the module's namespace.
func (m *Module) err() error {
	var errs []error
	if p := moduleNameProblem(m.name); p != "" {
		errs = append(errs, fmt.Errorf("module name %q %s", m.name, p))
	}
	if err := docError("the module", m.doc); err != nil {
		errs = append(errs, err)
	}
	for _, t := range []string{m.arrayName, m.forkErrorName} {
		if p := moduleNameProblem(t); t != "" && p != "" {
			errs = append(errs, fmt.Errorf("TypeNames: %q %s", t, p))
		}
	}
	errs = append(append(errs, m.errs...), m.clashes()...)
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

// reservedNames are the names every module has besides its own: a function
// or class of one of these would replace them (or be replaced) silently.
var reservedNames = map[string]string{
	"Array":       "the module's Array type",
	"ForkError":   "the module's fork error",
	"_fork_skips": "a function of the module's C half",
	"_c_stats":    "a function of the module's C half",
	"_stub":       "the function that writes the module's type stub",
	iterClassName: "the class of the module's iterators (iter.Seq results)",
}

// clashes are the definition errors of names the module's functions and
// classes share with each other or with the names every module has.
func (m *Module) clashes() []error {
	var errs []error
	seen := map[string]string{}
	check := func(what, name string) {
		if r, ok := reservedNames[name]; ok {
			errs = append(errs, fmt.Errorf("%s %s: the name is %s", what, name, r))
		} else if prev, ok := seen[name]; ok {
			errs = append(errs, fmt.Errorf("%s %s: the name is %s already", what, name, prev))
		}
		seen[name] = what + " " + name
	}
	for _, f := range m.funcs {
		if f.member == nil {
			check("function", f.name)
		}
	}
	for _, c := range m.classes {
		if !c.hidden {
			check("class", c.name)
		}
	}
	for _, e := range m.excs {
		check("exception", e.name)
	}
	for _, c := range m.consts {
		check("attribute", c.name)
	}
	return errs
}

// registered is the module this library serves (Main).
var registered struct {
	name   string
	define func(*Module) error
}

// Main makes this program the extension module name, defined by define
// when Python imports it. The main package that `python -m usmbridge.build`
// writes calls it (this is what it writes for example.com/saxpy; every
// build compiles it, and test/docs_test.go holds the two equal); a
// hand-written one does the same:
//
//	package main
//
//	// void *ubx_module_init(const char *name);
//	// void *PyInit_saxpy(void) { return ubx_module_init("saxpy"); }
//	import "C"
//
//	import (
//		"github.com/usmbridge/usmbridge/pyext"
//
//		pkg "example.com/saxpy"
//	)
//
//	func init() { pyext.Main("saxpy", pkg.Module) }
//
//	func main() {}
//
// built with go build -buildmode=c-shared, cgo on, CGO_CFLAGS naming
// Python's include directory and -DUBX_MODULE. A module name that is not
// ASCII has, as PEP 489 says, an init function PyInitU_ and its last part
// in Python's punycode, '-' made '_' (PyInitU_mod_bsa for "modé").
func Main(name string, define func(*Module) error) {
	registered.name, registered.define = name, define
}

// Check runs define on a new module named name and returns every
// definition error, as the import would report them (a parameter type
// pyext cannot read, an option that does not fit, a name Python code
// could not write: no identifier, a keyword, or not in the NFKC form
// Python reads identifiers in, a parameter name that is not ASCII or, of a
// constructor or method, is self; a doc with a NUL or not UTF-8; two
// functions or classes of one name, a function or class named like a name
// every module has: Array, ForkError): call it from a Go test of the
// package so that a mistake fails there rather than at import.
func Check(name string, define func(*Module) error) error {
	m := &Module{name: name}
	if err := define(m); err != nil {
		return err
	}
	return m.err()
}

// moduleFuncs are the functions of the module's namespace (not its
// classes' members).
func (m *Module) moduleFuncs() []*function {
	var out []*function
	for _, f := range m.funcs {
		if f.member == nil {
			out = append(out, f)
		}
	}
	return out
}
