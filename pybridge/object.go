package pybridge

import (
	"math"
	"reflect"
	"strconv"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
)

// Object is a PyObject* seen through a GIL. Functions that return an
// Object return a new reference unless their comment says "borrowed";
// give it back with GIL.DecRef. The zero Object is NULL.
type Object struct{ p uintptr }

// Ptr returns the raw PyObject*.
func (o Object) Ptr() uintptr { return o.p }

// IsNil reports a NULL object.
func (o Object) IsNil() bool { return o.p == 0 }

// UnsafeObject wraps a raw PyObject* (for example one received from
// Python through ctypes). The caller guarantees it is a live object.
func UnsafeObject(p uintptr) Object { return Object{p} }

func typeObjectName(t uintptr) string { return pyapi.TypeObjectName(t) }

// IncRef adds a reference.
func (g *GIL) IncRef(o Object) {
	if o.p != 0 {
		g.api().IncRef(o.p)
	}
}

// DecRef drops a reference; NULL is ignored.
func (g *GIL) DecRef(o Object) {
	if o.p != 0 {
		g.api().DecRef(o.p)
	}
}

// RefCount returns the reference count (for leak tests).
func (g *GIL) RefCount(o Object) int { return g.api().RefCount(o.p) }

// None returns a new reference to None.
func (g *GIL) None() Object { g.api().IncRef(g.api().None); return Object{g.api().None} }

// IsNone reports whether o is None.
func (g *GIL) IsNone(o Object) bool { return o.p == g.api().None }

// TypeName returns o's type as module.qualname ("int", "dpctl.SyclQueue").
func (g *GIL) TypeName(o Object) string { return g.typeName(g.api().Type(o.p)) }

// Import imports a module.
func (g *GIL) Import(name string) (Object, error) {
	m := g.api().Import(name)
	if m == 0 {
		return Object{}, g.fetch("import " + name)
	}
	return Object{m}, nil
}

// GetAttr returns o.name.
func (g *GIL) GetAttr(o Object, name string) (Object, error) {
	v := g.api().GetAttrString(o.p, name)
	if v == 0 {
		return Object{}, g.fetch("getattr " + name)
	}
	return Object{v}, nil
}

// SetAttr sets o.name = v.
func (g *GIL) SetAttr(o Object, name string, v Object) error {
	if g.api().SetAttrString(o.p, name, v.p) != 0 {
		return g.fetch("setattr " + name)
	}
	return nil
}

// HasAttr reports whether o has the attribute (errors count as no).
func (g *GIL) HasAttr(o Object, name string) bool { return g.api().HasAttrString(o.p, name) }

// Call calls fn(*args, **kwargs). args and kwargs values are Objects (not
// consumed) or Go values converted with FromGo.
func (g *GIL) Call(fn Object, args []any, kwargs map[string]any) (Object, error) {
	a := g.api()
	t := a.TupleNew(len(args))
	if t == 0 {
		return Object{}, g.fetch("call")
	}
	defer a.DecRef(t)
	for i, v := range args {
		o, err := g.FromGo(v)
		if err != nil {
			return Object{}, err
		}
		a.TupleSetItem(t, i, o.p) // steals
	}
	var kw uintptr
	if len(kwargs) > 0 {
		kw = a.DictNew()
		defer a.DecRef(kw)
		for k, v := range kwargs {
			o, err := g.FromGo(v)
			if err != nil {
				return Object{}, err
			}
			rc := a.DictSetItemString(kw, k, o.p)
			a.DecRef(o.p)
			if rc != 0 {
				return Object{}, g.fetch("call")
			}
		}
	}
	r := a.Call(fn.p, t, kw)
	if r == 0 {
		return Object{}, g.fetch("")
	}
	return Object{r}, nil
}

// CallMethod calls o.name(*args, **kwargs).
func (g *GIL) CallMethod(o Object, name string, args []any, kwargs map[string]any) (Object, error) {
	m, err := g.GetAttr(o, name)
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(m)
	return g.Call(m, args, kwargs)
}

// Main returns the __main__ module's dict (borrowed reference semantics are
// avoided: a new reference).
func (g *GIL) Main() (Object, error) {
	m, err := g.Import("__main__")
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(m)
	return g.GetAttr(m, "__dict__")
}

func (g *GIL) builtin(name string) (Object, error) {
	b, err := g.Import("builtins")
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(b)
	return g.GetAttr(b, name)
}

// Exec runs statements in __main__'s namespace.
func (g *GIL) Exec(code string) error {
	ex, err := g.builtin("exec")
	if err != nil {
		return err
	}
	defer g.DecRef(ex)
	ns, err := g.Main()
	if err != nil {
		return err
	}
	defer g.DecRef(ns)
	r, err := g.Call(ex, []any{code, ns}, nil)
	g.DecRef(r)
	return err
}

// Eval evaluates an expression in __main__'s namespace.
func (g *GIL) Eval(expr string) (Object, error) {
	ev, err := g.builtin("eval")
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(ev)
	ns, err := g.Main()
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(ns)
	return g.Call(ev, []any{expr, ns}, nil)
}

// FromGo converts a Go value to a new Python object: nil → None, Object
// (a new reference to the same object), bool, integers, floats, string,
// []byte (bytes are not supported: a TypeError), slices and arrays →
// tuple, map[string]any → dict.
func (g *GIL) FromGo(v any) (Object, error) {
	a := g.api()
	var r uintptr
	switch x := v.(type) {
	case nil:
		return g.None(), nil
	case Object:
		if x.p == 0 {
			return g.None(), nil
		}
		a.IncRef(x.p)
		return x, nil
	case bool:
		r = a.BoolFromLong(x)
	case int:
		r = a.LongFromInt64(int64(x))
	case int64:
		r = a.LongFromInt64(x)
	case int32:
		r = a.LongFromInt64(int64(x))
	case uint64:
		r = a.LongFromUint64(x)
	case uint32:
		r = a.LongFromUint64(uint64(x))
	case uintptr:
		r = a.LongFromUint64(uint64(x))
	case float64:
		r = a.FloatFromDouble(x)
	case string:
		r = a.UnicodeFromString(x)
	case []any:
		return g.tupleOf(len(x), func(i int) any { return x[i] })
	case []int64:
		return g.tupleOf(len(x), func(i int) any { return x[i] })
	case map[string]any:
		d := a.DictNew()
		if d == 0 {
			return Object{}, g.fetch("dict")
		}
		for k, val := range x {
			o, err := g.FromGo(val)
			if err != nil {
				a.DecRef(d)
				return Object{}, err
			}
			rc := a.DictSetItemString(d, k, o.p)
			a.DecRef(o.p)
			if rc != 0 {
				a.DecRef(d)
				return Object{}, g.fetch("dict")
			}
		}
		return Object{d}, nil
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			return g.tupleOf(rv.Len(), func(i int) any { return rv.Index(i).Interface() })
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			r = a.LongFromInt64(rv.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			r = a.LongFromUint64(rv.Uint())
		default:
			return Object{}, errkind.New(errkind.Type, "pybridge.FromGo", "cannot convert "+rv.Type().String()+" to Python")
		}
	}
	if r == 0 {
		return Object{}, g.fetch("pybridge.FromGo")
	}
	return Object{r}, nil
}

func (g *GIL) tupleOf(n int, at func(int) any) (Object, error) {
	a := g.api()
	t := a.TupleNew(n)
	if t == 0 {
		return Object{}, g.fetch("tuple")
	}
	for i := 0; i < n; i++ {
		o, err := g.FromGo(at(i))
		if err != nil {
			a.DecRef(t)
			return Object{}, err
		}
		a.TupleSetItem(t, i, o.p)
	}
	return Object{t}, nil
}

// Int converts a Python int (or an object with __index__) to int64.
func (g *GIL) Int(o Object) (int64, error) {
	a := g.api()
	if !a.HasFlag(o.p, pyapi.TPFlagsLongSubclass) {
		idx := a.NumberIndex(o.p)
		if idx == 0 {
			return 0, g.fetch("int")
		}
		defer a.DecRef(idx)
		o = Object{idx}
	}
	if v, ok := a.LongValue(o.p); ok {
		return v, nil
	}
	v := a.LongAsInt64(o.p)
	if v == -1 && a.ErrOccurred() != 0 {
		return 0, g.fetch("int")
	}
	return v, nil
}

// String returns str(o).
func (g *GIL) String(o Object) (string, error) {
	a := g.api()
	s := a.Str(o.p)
	if s == 0 {
		return "", g.fetch("str")
	}
	defer a.DecRef(s)
	r, ok := a.UnicodeAsString(s)
	if !ok {
		return "", g.fetch("str")
	}
	return r, nil
}

// ToGo converts plain data to Go: None → nil, bool, int → int64 (uint64
// above MaxInt64; larger ints are an ErrOverflow error), float → float64,
// str → string, tuple and list → []any, dict with str keys →
// map[string]any. Other objects are a usm.ErrType error.
func (g *GIL) ToGo(o Object) (any, error) {
	a := g.api()
	switch {
	case o.p == a.None:
		return nil, nil
	case o.p == a.True:
		return true, nil
	case o.p == a.False:
		return false, nil
	}
	t := a.Type(o.p)
	flags := a.TypeFlags(t)
	switch {
	case flags&pyapi.TPFlagsLongSubclass != 0:
		return g.pyInt(o)
	case t == a.FloatType:
		return a.FloatAsDouble(o.p), nil
	case flags&pyapi.TPFlagsUnicodeSubclass != 0:
		s, ok := a.UnicodeAsString(o.p)
		if !ok {
			return nil, g.fetch("str")
		}
		return s, nil
	case flags&(pyapi.TPFlagsTupleSubclass|pyapi.TPFlagsListSubclass) != 0:
		n := a.SeqSize(o.p)
		out := make([]any, n)
		for i := range n {
			var it uintptr
			if flags&pyapi.TPFlagsTupleSubclass != 0 {
				it = a.TupleItem(o.p, i)
			} else {
				it = a.ListItem(o.p, i)
			}
			v, err := g.ToGo(Object{it})
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case flags&pyapi.TPFlagsDictSubclass != 0:
		items, err := g.CallMethod(o, "items", nil, nil)
		if err != nil {
			return nil, err
		}
		defer g.DecRef(items)
		lst, err := g.Call(Object{a.ListType}, []any{items}, nil)
		if err != nil {
			return nil, err
		}
		defer g.DecRef(lst)
		m := map[string]any{}
		for i := range a.ListSize(lst.p) {
			kv := a.ListGetItem(lst.p, i)
			k, err := g.ToGo(Object{a.TupleGetItem(kv, 0)})
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, errkind.New(errkind.Type, "pybridge.ToGo", "dict key is not a str")
			}
			v, err := g.ToGo(Object{a.TupleGetItem(kv, 1)})
			if err != nil {
				return nil, err
			}
			m[ks] = v
		}
		return m, nil
	}
	return nil, errkind.New(errkind.Type, "pybridge.ToGo", "cannot convert "+g.typeName(t)+" to Go")
}

// pyInt converts an int: int64, else uint64, else an ErrOverflow error.
func (g *GIL) pyInt(o Object) (any, error) {
	a := g.api()
	if v, ok := a.LongValue(o.p); ok {
		return v, nil
	}
	v := a.LongAsInt64(o.p)
	if v != -1 || a.ErrOccurred() == 0 {
		return v, nil
	}
	a.ErrClear()
	u := a.LongAsUint64(o.p)
	if u != math.MaxUint64 || a.ErrOccurred() == 0 {
		return u, nil
	}
	a.ErrClear()
	s, _ := g.String(o)
	return nil, errkind.New(errkind.Overflow, "pybridge", "int "+s+" does not fit in 64 bits")
}

// itoa is strconv.Itoa, kept short for messages.
func itoa(i int) string { return strconv.Itoa(i) }

// SetMain binds name to v in __main__ (v is not consumed; Go values are
// converted with FromGo).
func (g *GIL) SetMain(name string, v any) error {
	ns, err := g.Main()
	if err != nil {
		return err
	}
	defer g.DecRef(ns)
	o, err := g.FromGo(v)
	if err != nil {
		return err
	}
	defer g.DecRef(o)
	if g.api().DictSetItemString(ns.p, name, o.p) != 0 {
		return g.fetch("SetMain")
	}
	return nil
}
