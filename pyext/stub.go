package pyext

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// stubHeader opens every module's stub: what an array and a device
// parameter take, the module's Array type and its fork error. The names
// with a leading underscore exist only for type checkers. {Name} is a name
// the stub refers to, which stubWriter.ref writes so that no name of the
// module's hides it.
const stubHeader = `
class {_DLPackProducer}({Protocol}):
    def __dlpack_device__(self) -> {Any}: ...

class {_SUAIProducer}({Protocol}):
    @{property}
    def __sycl_usm_array_interface__(self) -> {Any}: ...

# What an array parameter takes: host memory with the buffer protocol
# (NumPy), any DLPack producer (dpnp, dpctl, jax, torch, tvm-ffi, an Array
# of a pyext module), an object with __sycl_usm_array_interface__.
{_ArrayLike} = {Union}[{Buffer}, {_DLPackProducer}, {_SUAIProducer}]
class {_SyclDeviceLike}({Protocol}):
    @{property}
    def filter_string(self) -> {str}: ...

class {_SyclQueueLike}({Protocol}):
    @{property}
    def sycl_device(self) -> {Any}: ...

# What a device parameter takes: "cpu", a SYCL filter string, a DLPack
# (device_type, device_id) pair, a dpctl.SyclDevice or SyclQueue.
{_DeviceLike} = {Union}[{str}, {Tuple}[{int}, {int}], {_SyclDeviceLike}, {_SyclQueueLike}]

class ForkError({RuntimeError}):
    """Raised by every use of the module in a child created by fork()."""

class Array:
    """A zero-copy view of host memory or SYCL USM, made by this module."""

    __dlpack_c_exchange_api__: {ClassVar}[{Any}]
    __c_dlpack_exchange_api__: {ClassVar}[{int}]

    @{property}
    def __sycl_usm_array_interface__(self) -> {dict}[{str}, {Any}]: ...
    @{property}
    def shape(self) -> {Tuple}[{int}, ...]: ...
    @{property}
    def ndim(self) -> {int}: ...
    @{property}
    def size(self) -> {int}: ...
    @{property}
    def itemsize(self) -> {int}: ...
    @{property}
    def nbytes(self) -> {int}: ...
    @{property}
    def dtype(self) -> {Union}[{np}.dtype[{Any}], {str}]: ...
    @{property}
    def strides(self) -> {Tuple}[{int}, ...]: ...
    @{property}
    def offset(self) -> {int}: ...
    @{property}
    def T(self) -> "Array": ...
    @{property}
    def mT(self) -> "Array": ...
    @{property}
    def sycl_queue(self) -> {Any}: ...
    @{property}
    def __usm_ndarray__(self) -> {Any}: ...
    @{property}
    def usm_type(self) -> {Optional}[{Literal}["device", "shared", "host"]]: ...
    @{property}
    def device(self) -> {Tuple}[{int}, {int}]: ...
    @{property}
    def data(self) -> {int}: ...
    @{property}
    def readonly(self) -> {bool}: ...
    def __dlpack__(
        self,
        *,
        stream: {Any} = None,
        max_version: {Optional}[{Tuple}[{int}, {int}]] = None,
        dl_device: {Optional}[{Tuple}[{int}, {int}]] = None,
        copy: {Optional}[{bool}] = None,
    ) -> {Any}: ...
    def __dlpack_device__(self) -> {Tuple}[{int}, {int}]: ...
    def __array__(self, dtype: {Any} = None, copy: {Optional}[{bool}] = None) -> {Any}: ...
    def __len__(self) -> {int}: ...
    def __buffer__(self, flags: {int}, /) -> {memoryview}: ...

# What a function returning a pyext.Result returns: a new Array, an array
# argument as the caller gave it (out=), or None.
{_Result} = {Union}[Array, {_ArrayLike}, None]
`

// stubOrigins are the names a stub refers to that it does not define, and
// the module each comes from (np: numpy itself).
var stubOrigins = func() map[string]string {
	o := map[string]string{
		"Any": "typing", "ClassVar": "typing", "Literal": "typing", "Optional": "typing", "Protocol": "typing",
		"Tuple": "typing", "Union": "typing", "Annotated": "typing", "Final": "typing", "overload": "typing", "Iterator": "typing",
		"Buffer": "typing_extensions", "np": "numpy", "NDArray": "numpy.typing",
		"bool": "builtins", "dict": "builtins", "float": "builtins", "int": "builtins", "memoryview": "builtins",
		"object": "builtins", "property": "builtins", "str": "builtins", "staticmethod": "builtins",
		"classmethod": "builtins",
	}
	for _, e := range builtinExceptions {
		o[e] = "builtins"
	}
	return o
}()

// stubWriter writes a module's stub. A name the stub refers to (int,
// Optional, np, a class of the module) is hidden wherever the module binds
// the same name: at the top for a function or class of the module named
// so, in a class's body for a method or property (a method named int makes
// "-> int" in its class mean the method, which type checkers refuse). ref
// writes such a name through a private one instead (_builtins.int, an
// alias _Plan = Plan), which no name of the module takes, so any names
// pyext accepts give a stub that type-checks.
type stubWriter struct {
	m       *Module
	top     map[string]bool   // the names the module's definitions bind at the stub's top
	members map[string]bool   // the names the class being written binds; nil outside a class
	taken   map[string]bool   // every name the module's definitions bind, and the private names given out
	private map[string]string // the private name of each key ("import typing": "_typing")
	plain   map[string]bool   // the imported names written as they are (from typing import Any)
	aliases []string          // the classes written through an alias (_Plan = Plan)
}

// stubOf is the module's type stub (<name>.pyi): its functions and classes
// with the Python types of their parameters, defaults and results, and
// their docstrings, each as the module's __doc__ says it. `python -m
// usmbridge.build --stubs` writes it.
func stubOf(m *Module) string {
	w := &stubWriter{m: m, top: map[string]bool{}, taken: map[string]bool{}, private: map[string]string{}, plain: map[string]bool{}}
	for _, f := range w.stubFuncs() {
		w.top[f.name] = true
	}
	for _, c := range w.stubClasses() {
		w.top[c.name] = true
		for n := range classMembers(c) {
			w.taken[n] = true
		}
	}
	for _, e := range m.excs {
		w.top[e.name] = true
	}
	for _, c := range m.consts {
		w.top[c.name] = true
	}
	for n := range w.top {
		w.taken[n] = true
	}
	var body strings.Builder
	for _, c := range m.consts {
		body.WriteString("\n" + c.name + ": " + w.constType(c.v) + "\n")
	}
	for _, e := range m.excs {
		var base string
		if e.baseExc >= 0 {
			base = w.class(e.base)
		} else {
			base = w.ref(e.base)
		}
		body.WriteString("\nclass " + e.name + "(" + base + "):\n")
		if e.doc == "" {
			body.WriteString("    ...\n")
		} else {
			writeDoc(&body, "    ", e.doc)
		}
	}
	for _, c := range w.stubClasses() {
		w.writeClass(&body, c)
	}
	for _, f := range w.stubFuncs() {
		switch f.builtin {
		case fnGo:
			w.writeDef(&body, "", f.name, "", f, docOf(f))
		case fnFromDLPack:
			body.WriteString("\ndef " + f.name + "(x: " + w.helper("_ArrayLike") + ", /, *, device: " + w.ref("Optional") + "[" +
				w.helper("_DeviceLike") + "] = None, copy: " + w.ref("Optional") + "[" + w.ref("bool") + "] = None) -> " + w.class("Array") + ": ...\n")
		case fnAsArray:
			body.WriteString("\ndef " + f.name + "(obj: " + w.helper("_SUAIProducer") + ", /) -> " + w.class("Array") + ": ...\n")
		}
	}
	var header strings.Builder
	for rest := stubHeader; rest != ""; {
		before, after, ok := strings.Cut(rest, "{")
		header.WriteString(before)
		if !ok {
			break
		}
		name, tail, _ := strings.Cut(after, "}")
		if strings.HasPrefix(name, "_") {
			header.WriteString(w.helper(name))
		} else {
			header.WriteString(w.ref(name))
		}
		rest = tail
	}

	var b strings.Builder
	b.WriteString("# Type stubs of the extension module " + m.name + ", written by python -m usmbridge.build (pyext).\n")
	if m.doc != "" {
		writeDoc(&b, "", m.doc)
	}
	b.WriteString(w.imports())
	b.WriteString(header.String())
	b.WriteString(body.String())
	if len(w.aliases) > 0 {
		b.WriteString("\n# The classes by names no method or property of a class hides.\n")
		for _, c := range w.aliases {
			b.WriteString(w.private["class "+c] + " = " + c + "\n")
		}
	}
	return b.String()
}

// stubFuncs are the module's functions the stub declares: not the private
// ones (a leading underscore), which are not the module's API.
func (w *stubWriter) stubFuncs() []*function {
	var out []*function
	for _, f := range w.m.moduleFuncs() {
		if f.builtin != fnGo || !strings.HasPrefix(f.name, "_") {
			out = append(out, f)
		}
	}
	return out
}

// stubClasses are the module's classes the stub declares: not pyext's
// own (the iterators', which the stub names Iterator).
func (w *stubWriter) stubClasses() []*class {
	var out []*class
	for _, c := range w.m.classes {
		if !c.hidden {
			out = append(out, c)
		}
	}
	return out
}

// classMembers are the names c's body binds in the stub.
func classMembers(c *class) map[string]bool {
	names := map[string]bool{}
	if c.ctor != nil {
		names["__init__"] = true
	}
	for _, p := range c.props {
		names[p.name] = true
	}
	for _, f := range c.methods {
		names[f.member.attr] = true
	}
	if c.eqWithoutHash() {
		names["__hash__"] = true
	}
	return names
}

// eqWithoutHash reports whether c has __eq__ and no __hash__, which makes
// its objects unhashable (class.c's make_class).
func (c *class) eqWithoutHash() bool {
	eq, hash := false, false
	for _, f := range c.methods {
		eq = eq || f.member.attr == "__eq__"
		hash = hash || f.member.attr == "__hash__"
	}
	return eq && !hash
}

func (w *stubWriter) writeClass(b *strings.Builder, c *class) {
	w.members = classMembers(c)
	defer func() { w.members = nil }()
	b.WriteString("\nclass " + c.name + ":\n")
	writeDoc(b, "    ", typeDoc(c))
	if c.ctor != nil {
		w.writeDef(b, "    ", "__init__", "self", c.ctor, "")
	}
	for _, p := range c.props {
		b.WriteString("    @" + w.ref("property") + "\n    def " + p.name + "(self) -> " + w.results(p.get.results) + ":")
		writeBody(b, "        ", p.doc)
		if p.set != nil {
			v := p.set.params[1]
			b.WriteString("    @" + p.name + ".setter\n    def " + p.name + "(self, value: " + w.param(&v, v.want()) + ") -> None: ...\n")
		}
	}
	for _, f := range c.methods {
		switch f.bind {
		case bindStatic:
			w.writeDef(b, "    ", f.member.attr, "", f, docOf(f))
		case bindClass:
			w.writeDef(b, "    ", f.member.attr, "cls", f, docOf(f))
		default:
			w.writeDef(b, "    ", f.member.attr, "self", f, docOf(f))
		}
	}
	if c.eqWithoutHash() {
		b.WriteString("    __hash__: " + w.ref("ClassVar") + "[None]  # type: ignore[assignment]\n")
	}
	if c.ctor == nil && len(c.props) == 0 && len(c.methods) == 0 && typeDoc(c) == "" {
		b.WriteString("    ...\n")
	}
}

// writeDef writes f as name (a function, or a class's member at indent,
// whose receiver is self: "self", "cls", or "" for none): one def, or for
// overloads one @overload def each, their array parameters typed with the
// NumPy arrays of their element types (NDArray[np.float32]), which type
// checkers tell apart, and a last one for every other array producer,
// whose element types only the call checks. doc goes to the first def.
func (w *stubWriter) writeDef(b *strings.Builder, indent, name, self string, f *function, doc string) {
	deco := ""
	switch f.bind {
	case bindStatic:
		deco = indent + "@" + w.ref("staticmethod") + "\n"
	case bindClass:
		deco = indent + "@" + w.ref("classmethod") + "\n"
	}
	params := func(o *function, wants []dlabi.DataType, numpy bool) string {
		ps := o.params
		if self != "" && len(ps) > 0 && ps[0].flags&(fSelf|fCls) != 0 {
			ps = ps[1:]
			wants = wants[1:]
		}
		if a := f.member; a != nil && (a.attr == "__eq__" || a.attr == "__ne__") && self == "self" && len(ps) == 1 {
			// Any operand: another type is NotImplemented (call.c's
			// operand_refused), as object's signature says.
			return "self, " + ps[0].name + ": " + w.ref("object")
		}
		return w.params(ps, wants, self, numpy)
	}
	result := func(o *function) string {
		if name == "__init__" {
			return "None"
		}
		return w.results(o.results)
	}
	if f.overloads == nil {
		b.WriteString(deco + indent + "def " + name + "(" + params(f, f.wants, false) + ") -> " + result(f) + ":")
		writeBody(b, indent+"    ", doc)
		return
	}
	var all []string
	for i, o := range f.overloads {
		b.WriteString(indent + "@" + w.ref("overload") + "\n" + deco + indent + "def " + name + "(" + params(o, o.wants, true) + ") -> " + result(o) + ":")
		if i == 0 {
			writeBody(b, indent+"    ", doc)
		} else {
			b.WriteString(" ...\n")
		}
		if r := result(o); !slices.Contains(all, r) {
			all = append(all, r)
		}
	}
	// The last: any array producer, whose element types the call checks.
	r := all[0]
	if len(all) > 1 {
		r = w.ref("Union") + "[" + strings.Join(all, ", ") + "]"
	}
	b.WriteString(indent + "@" + w.ref("overload") + "\n" + deco + indent + "def " + name + "(" +
		params(f, make([]dlabi.DataType, len(f.wants)), false) + ") -> " + r + ": ...\n")
}

// constType is a Const's annotation: Final with its literal for a str, an
// int or a bool (a type checker reads the value), Final[float] and
// Final[Tuple[...]] for the others.
func (w *stubWriter) constType(v any) string {
	rv := reflect.ValueOf(v)
	switch kindClass(rv.Type()) {
	case "str":
		return w.ref("Final") + " = " + pyStrRepr(rv.String())
	case "bool":
		return w.ref("Final") + " = " + pyRepr(rv.Bool())
	case "int":
		if rv.CanInt() {
			return w.ref("Final") + " = " + strconv.FormatInt(rv.Int(), 10)
		}
		return w.ref("Final") + " = " + strconv.FormatUint(rv.Uint(), 10)
	case "float":
		return w.ref("Final") + "[" + w.ref("float") + "]"
	}
	elem := "Any"
	if k := kindClass(rv.Type().Elem()); k != "" {
		elem = k
	}
	return w.ref("Final") + "[" + w.ref("Tuple") + "[" + w.ref(elem) + ", ...]]"
}

// ref writes name, a name the stub imports (stubOrigins), as it can be
// written where the stub is (at its top, or in the class being written):
// as it is when nothing of the module's there binds the same name; else
// as an attribute of a private name of its module (_typing.Optional,
// _builtins.int; _numpy for np).
func (w *stubWriter) ref(name string) string {
	from, ok := stubOrigins[name]
	if !ok {
		panic("pyext: the stub imports no " + name) // a name added to stubHeader and not to stubOrigins
	}
	if !w.top[name] && !w.members[name] {
		w.plain[name] = true
		return name
	}
	if from == "numpy" {
		return w.privateName("import numpy", "numpy")
	}
	return w.privateName("import "+from, from) + "." + name
}

// class writes name, a class the stub defines (Array, ForkError, one of
// the module's, which may be named like what ref writes: a class int), as
// it can be written where the stub is: as it is, but in the body of a
// class with a member of that name through a private alias (_Plan = Plan),
// and so too a name of two leading underscores, which a class's body
// mangles (_Plan__Vec).
func (w *stubWriter) class(name string) string {
	if w.members[name] || w.members != nil && strings.HasPrefix(name, "__") && !strings.HasSuffix(name, "__") {
		if _, ok := w.private["class "+name]; !ok {
			w.aliases = append(w.aliases, name)
		}
		return w.privateName("class "+name, name)
	}
	return name
}

// helper is the name of one of the stub's own helpers (_ArrayLike,
// _DeviceLike, _DLPackProducer, _SUAIProducer): a private name, so that no
// name of the module's (a class _ArrayLike, a method of that name) is it.
func (w *stubWriter) helper(name string) string { return w.privateName("helper "+name, name) }

// privateName is the private name of key: "_" and base, with underscores
// added at its end until no name of the module's is the same.
func (w *stubWriter) privateName(key, base string) string {
	if p, ok := w.private[key]; ok {
		return p
	}
	p := "_" + strings.ReplaceAll(strings.TrimLeft(base, "_"), ".", "_")
	for w.taken[p] {
		p += "_"
	}
	w.taken[p] = true
	w.private[key] = p
	return p
}

// imports are the stub's imports of what ref wrote: plain names from
// typing and typing_extensions, numpy as np, and the modules that private
// names stand for.
func (w *stubWriter) imports() string {
	var b strings.Builder
	for _, from := range []string{"typing", "typing_extensions", "numpy.typing"} {
		var names []string
		for n := range w.plain {
			if stubOrigins[n] == from {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			slices.Sort(names)
			b.WriteString("from " + from + " import " + strings.Join(names, ", ") + "\n")
		}
	}
	if w.plain["np"] {
		b.WriteString("import numpy as np\n")
	}
	for _, mod := range []string{"builtins", "numpy", "numpy.typing", "typing", "typing_extensions"} {
		if p, ok := w.private["import "+mod]; ok {
			b.WriteString("import " + mod + " as " + p + "\n")
		}
	}
	return b.String()
}

// docOf is a function's docstring without CPython's signature prefix, as
// its __doc__ says it (function.c's function_doc).
func docOf(f *function) string {
	if _, d, ok := strings.Cut(f.doc, ")\n--\n\n"); ok {
		return d
	}
	return f.doc
}

// typeDoc is a class's docstring as its __doc__ says it: CPython reads a
// type's doc that starts with "Name(" and has ")\n--\n\n" before any
// blank line as a signature, and leaves it out (Objects/typeobject.c's
// _PyType_DocWithoutSignature). The constructor's signature is written
// so; a class without a constructor has the user's doc, which might be.
func typeDoc(c *class) string {
	if c.ctor != nil {
		return c.doc
	}
	rest, ok := strings.CutPrefix(c.doc, c.name+"(")
	if !ok {
		return c.doc
	}
	for i := 0; i < len(rest); i++ {
		if strings.HasPrefix(rest[i:], ")\n--\n\n") {
			return rest[i+6:]
		}
		if strings.HasPrefix(rest[i:], "\n\n") {
			break
		}
	}
	return c.doc
}

// writeBody ends a def: its docstring, or "...".
func writeBody(b *strings.Builder, indent, doc string) {
	if doc == "" {
		b.WriteString(" ...\n")
		return
	}
	b.WriteString("\n")
	writeDoc(b, indent, doc)
}

// writeDoc writes doc as a docstring whose value, as Python reads it
// (inspect.cleandoc, which help() and editors apply), is doc's: a
// backslash, a quote that could end the string, and control characters
// (a carriage return would be read as a newline) are escapes, and the
// lines after the first are indented as the code around them unless
// indenting could change what cleandoc makes of them (a tab, whose width
// depends on the column; a line of only whitespace); then they are written
// as they are.
func writeDoc(b *strings.Builder, indent, doc string) {
	if doc == "" {
		return
	}
	more := indent // the indent of the lines after the first
	lines := strings.Split(doc, "\n")
	for _, l := range lines[1:] {
		if strings.ContainsRune(l, '\t') || l != "" && strings.TrimFunc(l, pyWhitespace) == "" {
			more = ""
		}
	}
	var e strings.Builder
	for i, r := range doc {
		switch {
		case r == '\\':
			e.WriteString(`\\`)
		case r == '"' && (i+1 == len(doc) || doc[i+1] == '"'):
			e.WriteString(`\"`)
		case r == '\n':
			e.WriteByte('\n')
			if next := doc[i+1:]; next != "" && next[0] != '\n' {
				e.WriteString(more)
			}
		case r < 0x20 && r != '\t' || r >= 0x7f && r < 0xa0:
			fmt.Fprintf(&e, `\x%02x`, r)
		default:
			e.WriteRune(r)
		}
	}
	b.WriteString(indent + `"""` + e.String() + `"""` + "\n")
}

// pyWhitespace reports whether r may be whitespace to Python's str.strip:
// Unicode's White_Space, and the separators U+001C to U+001F.
func pyWhitespace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// params is a parameter list: self (or cls) first for a method, "*"
// before the keyword-only ones. A default is written as the text signature
// writes it (pyRepr); an array's that None does not stand for, as "...".
// wants are the parameters' element types (an overload's, or zero: any);
// numpy types a typed array parameter as the NumPy array of its element
// type, for an overload a type checker tells from the others.
func (w *stubWriter) params(ps []paramSpec, wants []dlabi.DataType, self string, numpy bool) string {
	var parts []string
	if self != "" {
		parts = append(parts, self)
	}
	star := false
	for i := range ps {
		p := &ps[i]
		if p.flags&fKwOnly != 0 && !star {
			parts = append(parts, "*")
			star = true
		}
		want := dlabi.DataType{}
		if i < len(wants) {
			want = wants[i]
		}
		var s string
		if numpy && p.isArray && want.Bits != 0 {
			s = p.name + ": " + w.numpyParam(p, want)
		} else {
			s = p.name + ": " + w.param(p, want)
		}
		switch {
		case p.hasDefault && p.isArray && p.flags&fNone == 0:
			s += " = ..."
		case p.hasDefault:
			s += " = " + pyRepr(p.deflt)
		case p.flags&fOptional != 0:
			s += " = None"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// want is the element type a parameter's Array[T] takes (zero for any,
// and for the other parameters).
func (p *paramSpec) want() dlabi.DataType { return p.elem }

// param is the Python type a parameter takes: an array's with what it
// requires of the array (its element type want, its dimensions, order,
// writability, memory) as metadata, as nanobind's stubs write it
// (Annotated[..., dict(dtype='float32', shape=(None,))]); a str chosen
// from OneOf's choices as their Literal.
func (w *stubWriter) param(p *paramSpec, want dlabi.DataType) string {
	var t string
	switch {
	case p.kind == pStr && p.choices != nil:
		q := make([]string, len(p.choices))
		for i, c := range p.choices {
			q[i] = pyStrRepr(c)
		}
		t = w.ref("Literal") + "[" + strings.Join(q, ", ") + "]"
	case p.kind == pBool:
		t = w.ref("bool")
	case p.kind == pInt || p.kind == pUint:
		t = w.ref("int")
	case p.kind == pFloat:
		t = w.ref("float")
	case p.kind == pStr:
		t = w.ref("str")
	case p.kind == pArray:
		t = w.annotated(w.helper("_ArrayLike"), p, want, true)
	case p.kind == pInstance:
		t = w.class(w.m.classes[p.class].name)
	case p.typ == reflect.TypeFor[Device]().String():
		t = w.helper("_DeviceLike")
	default:
		return w.ref("Any")
	}
	if p.flags&fNone != 0 {
		return w.ref("Optional") + "[" + t + "]"
	}
	return t
}

// numpyParam is a typed array parameter of an overload: the NumPy array of
// its element type, with the rest of what it requires as metadata.
func (w *stubWriter) numpyParam(p *paramSpec, want dlabi.DataType) string {
	t := w.annotated(w.ref("NDArray")+"["+w.ref("np")+"."+npName(want)+"]", p, want, false)
	if p.flags&fNone != 0 {
		return w.ref("Optional") + "[" + t + "]"
	}
	return t
}

// annotated is t with an array parameter's requirements as nanobind's
// metadata: dtype (when withDType and the parameter takes one element
// type), shape (None for any extent) or ndim, order, writable, memory.
// t alone when it requires nothing.
func (w *stubWriter) annotated(t string, p *paramSpec, want dlabi.DataType, withDType bool) string {
	var md []string
	if withDType && want.Bits != 0 {
		md = append(md, "dtype="+pyStrRepr(dtypeName(want)))
	}
	a := &p.array
	switch {
	case a.shapeSet:
		dims := make([]string, len(a.shape))
		for i, d := range a.shape {
			if d < 0 {
				dims[i] = "None"
			} else {
				dims[i] = strconv.FormatInt(d, 10)
			}
		}
		if len(dims) == 1 {
			dims[0] += ","
		}
		md = append(md, "shape=("+strings.Join(dims, ", ")+")")
	case a.ndimSet:
		md = append(md, "ndim="+strconv.Itoa(a.ndim))
	}
	switch {
	case a.cContig:
		md = append(md, "order='C'")
	case a.fContig:
		md = append(md, "order='F'")
	}
	if a.writable {
		md = append(md, "writable=True")
	}
	if a.memorySet {
		var kinds []string
		for _, k := range []struct {
			k MemoryKind
			s string
		}{{HostMemory, "'host'"}, {USMHost, "'usm_host'"}, {USMShared, "'usm_shared'"}, {USMDevice, "'usm_device'"}} {
			if a.memory&k.k != 0 {
				kinds = append(kinds, k.s)
			}
		}
		md = append(md, "memory=("+strings.Join(kinds, ", ")+",)")
	}
	if len(md) == 0 {
		return t
	}
	return w.ref("Annotated") + "[" + t + ", " + w.ref("dict") + "(" + strings.Join(md, ", ") + ")]"
}

// npName is NumPy's name of a DLPack element type (np.float32, np.bool_).
func npName(dt dlabi.DataType) string {
	if n := dtypeName(dt); n != "bool" {
		return n
	}
	return "bool_"
}

// results is the Python type of a function's results: None, one's type,
// or a tuple of theirs.
func (w *stubWriter) results(ts []reflect.Type) string {
	switch len(ts) {
	case 0:
		return "None"
	case 1:
		return w.result(ts[0])
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = w.result(t)
	}
	return w.ref("Tuple") + "[" + strings.Join(parts, ", ") + "]"
}

// result is the Python type of a Go result.
func (w *stubWriter) result(t reflect.Type) string {
	if t == nil || t == reflect.TypeFor[none]() {
		return "None"
	}
	if c := w.m.classOf(t); c != nil {
		return w.class(c.name)
	}
	if t.Kind() == reflect.Pointer && isScalar(t.Elem()) {
		return w.ref("Optional") + "[" + w.result(t.Elem()) + "]"
	}
	if v, ok := isSeq(t); ok {
		return w.ref("Iterator") + "[" + w.result(v) + "]"
	}
	switch n := pyResultType(t); n {
	case "Array":
		if t.Kind() == reflect.Slice { // a host Array of the slice's element type, 1-D
			if dt, ok := sliceDType(t.Elem()); ok {
				return w.ref("Annotated") + "[" + w.class("Array") + ", " + w.ref("dict") + "(dtype=" + pyStrRepr(dtypeName(dt)) + ", shape=(None,))]"
			}
		}
		return w.class("Array")
	case "_Result":
		return w.helper("_Result")
	default:
		return w.ref(n)
	}
}

// pyResultType is the name of the Python type of a Go result that is no
// object of a class: an imported name, Array, or _Result.
func pyResultType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[pybridge.Object]():
		return "Any"
	case reflect.TypeFor[*usm.Array](), reflect.TypeFor[AnyArray]():
		return "Array"
	case reflect.TypeFor[Result]():
		return "_Result" // an argument as given (of the caller's type), a new Array, or None
	}
	if t.Implements(reflect.TypeFor[arrayResult]()) {
		return "Array"
	}
	if k := kindClass(t); k != "" {
		return k
	}
	if t.Kind() == reflect.Slice {
		return "Array"
	}
	return "Any"
}

// addStub adds _stub() to the module: its stub, for usmbridge.build.
func addStub(m *Module) {
	Func0R(m, "_stub", "The module's type stub (.pyi), for python -m usmbridge.build --stubs.",
		func() (string, error) { return stubOf(m), nil })
}

// Stub returns the type stub of the module define defines (its .pyi, as
// `python -m usmbridge.build --stubs` writes it), or its definition errors
// (Check's): a Go test holds a module's Python signatures and types to what
// it means, without building it.
func Stub(name string, define func(*Module) error) (string, error) {
	m := &Module{name: name}
	if err := define(m); err != nil {
		return "", err
	}
	if err := m.err(); err != nil {
		return "", err
	}
	return stubOf(m), nil
}
