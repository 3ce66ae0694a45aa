package pyext

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// stubHeader opens every module's stub: what an array and a device
// parameter take, the module's Array type and its fork error. The names
// with a leading underscore exist only for type checkers.
const stubHeader = `from typing import Any, ClassVar, Literal, Optional, Protocol, Tuple, Union

import numpy as np
from typing_extensions import Buffer

class _DLPackProducer(Protocol):
    def __dlpack_device__(self) -> Any: ...

class _SUAIProducer(Protocol):
    @property
    def __sycl_usm_array_interface__(self) -> Any: ...

# What an array parameter takes: host memory with the buffer protocol
# (NumPy), any DLPack producer (dpnp, dpctl, jax, torch, tvm-ffi, an Array
# of a pyext module), an object with __sycl_usm_array_interface__.
_ArrayLike = Union[Buffer, _DLPackProducer, _SUAIProducer]
# What a device parameter takes: "cpu", a SYCL filter string, a DLPack
# (device_type, device_id) pair, a dpctl.SyclDevice or SyclQueue.
_DeviceLike = Union[str, Tuple[int, int], Any]

class ForkError(RuntimeError):
    """Raised by every use of the module in a child created by fork()."""

class Array:
    """A zero-copy view of host memory or SYCL USM, made by this module."""

    __dlpack_c_exchange_api__: ClassVar[Any]
    __c_dlpack_exchange_api__: ClassVar[int]

    @property
    def __sycl_usm_array_interface__(self) -> dict[str, Any]: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def dtype(self) -> Union[np.dtype[Any], str]: ...
    @property
    def strides(self) -> Tuple[int, ...]: ...
    @property
    def offset(self) -> int: ...
    @property
    def T(self) -> "Array": ...
    @property
    def mT(self) -> "Array": ...
    @property
    def sycl_queue(self) -> Any: ...
    @property
    def __usm_ndarray__(self) -> Any: ...
    @property
    def usm_type(self) -> Optional[Literal["device", "shared", "host"]]: ...
    @property
    def device(self) -> Tuple[int, int]: ...
    @property
    def data(self) -> int: ...
    @property
    def readonly(self) -> bool: ...
    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> Any: ...
    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...
`

// stubOf is the module's type stub (<name>.pyi): its functions and classes
// with the Python types of their parameters, defaults and results, and
// their docstrings. `python -m usmbridge.build --stubs` writes it.
func stubOf(m *Module) string {
	var b strings.Builder
	b.WriteString("# Type stubs of the extension module " + m.name + ", written by python -m usmbridge.build (pyext).\n")
	b.WriteString(stubHeader)
	for _, c := range m.classes {
		b.WriteString("\nclass " + c.name + ":\n")
		writeDoc(&b, "    ", c.doc)
		if c.ctor != nil {
			b.WriteString("    def __init__(" + stubParams(m, c.ctor.params, "self") + ") -> None: ...\n")
		}
		for _, p := range c.props {
			b.WriteString("    @property\n    def " + p.name + "(self) -> " + stubResult(m, p.get.result) + ":")
			writeBody(&b, "        ", p.doc)
			if p.set != nil {
				v := p.set.params[1]
				b.WriteString("    @" + p.name + ".setter\n    def " + p.name + "(self, value: " + stubParam(m, &v) + ") -> None: ...\n")
			}
		}
		eq, hash := false, false
		for _, f := range c.methods {
			params := stubParams(m, f.params[1:], "self")
			switch f.member.attr {
			case "__eq__", "__ne__":
				// Any operand: another type is NotImplemented (module.c's
				// operand_refused), as object's signature says.
				params = "self, " + f.params[1].name + ": object"
				eq = eq || f.member.attr == "__eq__"
			case "__hash__":
				hash = true
			}
			b.WriteString("    def " + f.member.attr + "(" + params + ") -> " + stubResult(m, f.result) + ":")
			writeBody(&b, "        ", docOf(f))
		}
		if eq && !hash { // class.c's make_class: __eq__ without __hash__ is unhashable
			b.WriteString("    __hash__: ClassVar[None]  # type: ignore[assignment]\n")
		}
		if c.ctor == nil && len(c.props) == 0 && len(c.methods) == 0 && c.doc == "" {
			b.WriteString("    ...\n")
		}
	}
	for _, f := range m.moduleFuncs() {
		if f.builtin != fnGo || strings.HasPrefix(f.name, "_") {
			continue
		}
		b.WriteString("\ndef " + f.name + "(" + stubParams(m, f.params, "") + ") -> " + stubResult(m, f.result) + ":")
		writeBody(&b, "    ", docOf(f))
	}
	for _, f := range m.moduleFuncs() {
		switch f.builtin {
		case fnFromDLPack:
			b.WriteString("\ndef " + f.name + "(x: _ArrayLike, /, *, device: Optional[_DeviceLike] = None, copy: Optional[bool] = None) -> Array: ...\n")
		case fnAsArray:
			b.WriteString("\ndef " + f.name + "(obj: _SUAIProducer, /) -> Array: ...\n")
		}
	}
	return b.String()
}

// docOf is a function's docstring without CPython's signature prefix.
func docOf(f *function) string {
	if _, d, ok := strings.Cut(f.doc, ")\n--\n\n"); ok {
		return d
	}
	return f.doc
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

func writeDoc(b *strings.Builder, indent, doc string) {
	if doc == "" {
		return
	}
	doc = strings.ReplaceAll(strings.ReplaceAll(doc, `\`, `\\`), `"""`, `\"\"\"`)
	lines := strings.Split(doc, "\n")
	b.WriteString(indent + `"""` + lines[0])
	for _, l := range lines[1:] {
		b.WriteString("\n")
		if l != "" {
			b.WriteString(indent + l)
		}
	}
	if strings.HasSuffix(doc, `"`) {
		b.WriteString(" ")
	}
	b.WriteString(`"""` + "\n")
}

// stubParams is a parameter list: self first for a method, "*" before the
// keyword-only ones.
func stubParams(m *Module, ps []paramSpec, self string) string {
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
		s := p.name + ": " + stubParam(m, p)
		switch {
		case p.hasDefault:
			s += " = " + stubDefault(p.deflt)
		case p.flags&fOptional != 0:
			s += " = None"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// stubParam is the Python type a parameter takes.
func stubParam(m *Module, p *paramSpec) string {
	var t string
	switch p.kind {
	case pBool:
		t = "bool"
	case pInt, pUint:
		t = "int"
	case pFloat:
		t = "float"
	case pStr:
		t = "str"
	case pArray:
		t = "_ArrayLike"
	case pInstance:
		t = m.classes[p.class].name
	default:
		t = "Any"
		if p.typ == reflect.TypeFor[Device]().String() {
			t = "_DeviceLike"
		}
	}
	if p.flags&fNone != 0 && t != "Any" {
		t = "Optional[" + t + "]"
	}
	return t
}

// stubDefault writes a default as Python source where it is a literal,
// else as "...".
func stubDefault(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case bool, nil:
		return pyRepr(x)
	case Device:
		return strconv.Quote(x.String())
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return strconv.FormatInt(rv.Int(), 10)
	case rv.CanUint():
		return strconv.FormatUint(rv.Uint(), 10)
	case rv.CanFloat():
		s := strconv.FormatFloat(rv.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	}
	return "..."
}

// stubResult is the Python type of a Go result.
func stubResult(m *Module, t reflect.Type) string {
	if t == nil || t == reflect.TypeFor[none]() {
		return "None"
	}
	if c := m.classOf(t); c != nil {
		return c.name
	}
	switch t {
	case reflect.TypeFor[pybridge.Object]():
		return "Any"
	case reflect.TypeFor[*usm.Array](), reflect.TypeFor[AnyArray]():
		return "Array"
	case reflect.TypeFor[Result]():
		return "Any" // an argument as given (of the caller's type), or a new Array
	}
	if t.Implements(reflect.TypeFor[arrayResult]()) {
		return "Array"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.String:
		return "str"
	case reflect.Slice:
		return "Array"
	}
	return "Any"
}

// addStub adds _stub() to the module: its stub, for usmbridge.build.
func addStub(m *Module) {
	Func0R(m, "_stub", "The module's type stub (.pyi), for python -m usmbridge.build --stubs.",
		func() (string, error) { return stubOf(m), nil })
}
