package pybridge

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/usm"
)

// Object is a PyObject* seen through a GIL. Functions that return an
// Object return a new reference unless their comment says "borrowed";
// give it back with GIL.DecRef. The zero Object is NULL.
type Object struct{ p uintptr }

// isNil reports a NULL object.
func (o Object) isNil() bool { return o.p == 0 }

func typeObjectName(t uintptr) string { return pyapi.TypeObjectName(t) }

// DecRef drops a reference; NULL is ignored.
func (g *GIL) DecRef(o Object) {
	if o.p != 0 {
		g.api().DecRef(o.p)
	}
}

// none returns a new reference to none.
func (g *GIL) none() Object { g.api().IncRef(g.api().None); return Object{g.api().None} }

// isNone reports whether o is None.
func (g *GIL) isNone(o Object) bool { return o.p == g.api().None }

// objTypeName returns o's type as module.qualname ("int", "dpctl.SyclQueue").
func (g *GIL) objTypeName(o Object) string { return g.typeName(g.api().Type(o.p)) }

// importModule imports a module.
func (g *GIL) importModule(name string) (Object, error) {
	m := g.api().Import(name)
	if m == 0 {
		return Object{}, g.fetch("import " + name)
	}
	return Object{m}, nil
}

// getAttr returns o.name.
func (g *GIL) getAttr(o Object, name string) (Object, error) {
	v := g.api().GetAttrString(o.p, name)
	if v == 0 {
		return Object{}, g.fetch("getattr " + name)
	}
	return Object{v}, nil
}

// call calls fn(*args, **kwargs). args and kwargs values are Objects (not
// consumed) or Go values converted with fromGo; the keywords are passed in
// the order of their names, so that fn sees the same call every time.
func (g *GIL) call(fn Object, args []any, kwargs map[string]any) (Object, error) {
	a := g.api()
	t := a.TupleNew(len(args))
	if t == 0 {
		return Object{}, g.fetch("call")
	}
	defer a.DecRef(t)
	for i, v := range args {
		o, err := g.fromGo(v)
		if err != nil {
			return Object{}, err
		}
		a.TupleSetItem(t, i, o.p) // steals
	}
	var kw uintptr
	if len(kwargs) > 0 {
		var err error
		if kw, err = g.dictOf(kwargs, 0); err != nil {
			return Object{}, err
		}
		defer a.DecRef(kw)
	}
	r := a.Call(fn.p, t, kw)
	if r == 0 {
		return Object{}, g.fetch("")
	}
	return Object{r}, nil
}

// callMethod calls o.name(*args, **kwargs).
func (g *GIL) callMethod(o Object, name string, args []any, kwargs map[string]any) (Object, error) {
	m, err := g.getAttr(o, name)
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(m)
	return g.call(m, args, kwargs)
}

// mainDict returns the __main__ module's dict (borrowed reference semantics are
// avoided: a new reference).
func (g *GIL) mainDict() (Object, error) {
	m, err := g.importModule("__main__")
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(m)
	return g.getAttr(m, "__dict__")
}

func (g *GIL) builtin(name string) (Object, error) {
	b, err := g.importModule("builtins")
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(b)
	return g.getAttr(b, name)
}

// Exec runs statements in __main__'s namespace.
func (g *GIL) Exec(code string) error {
	ex, err := g.builtin("exec")
	if err != nil {
		return err
	}
	defer g.DecRef(ex)
	ns, err := g.mainDict()
	if err != nil {
		return err
	}
	defer g.DecRef(ns)
	r, err := g.call(ex, []any{code, ns}, nil)
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
	ns, err := g.mainDict()
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(ns)
	return g.call(ev, []any{expr, ns}, nil)
}

// fromGo is FromGo.
func (g *GIL) fromGo(v any) (Object, error) { return g.fromGoAt(v, 0) }

// fromGoAt converts v, which is depth containers deep.
func (g *GIL) fromGoAt(v any, depth int) (Object, error) {
	a := g.api()
	var r uintptr
	switch x := v.(type) {
	case nil:
		return g.none(), nil
	case Object:
		if x.p == 0 {
			return g.none(), nil
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
		return g.tupleOf(len(x), depth, func(i int) any { return x[i] })
	case []int64:
		return g.tupleOf(len(x), depth, func(i int) any { return x[i] })
	case map[string]any:
		d, err := g.dictOf(x, depth)
		return Object{d}, err
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			return g.tupleOf(rv.Len(), depth, func(i int) any { return rv.Index(i).Interface() })
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			r = a.LongFromInt64(rv.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			r = a.LongFromUint64(rv.Uint())
		default:
			return Object{}, errkind.New(errkind.Type, "pybridge.fromGo", "cannot convert "+rv.Type().String()+" to Python")
		}
	}
	if r == 0 {
		return Object{}, g.fetch("pybridge.fromGo")
	}
	return Object{r}, nil
}

// errTooDeep is fromGo's error for a value nested beyond maxNesting.
func errTooDeep() error {
	return errkind.New(errkind.Value, "pybridge.fromGo", "value nested deeper than "+itoa(maxNesting)+" containers (does it contain itself?)")
}

// dictOf returns a new dict of m, a container depth deep, with the keys
// inserted in sorted order.
func (g *GIL) dictOf(m map[string]any, depth int) (uintptr, error) {
	if depth == maxNesting {
		return 0, errTooDeep()
	}
	a := g.api()
	d := a.DictNew()
	if d == 0 {
		return 0, g.fetch("dict")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		o, err := g.fromGoAt(m[k], depth+1)
		if err != nil {
			a.DecRef(d)
			return 0, err
		}
		rc := a.DictSetItemString(d, k, o.p)
		a.DecRef(o.p)
		if rc != 0 {
			a.DecRef(d)
			return 0, g.fetch("dict")
		}
	}
	return d, nil
}

func (g *GIL) tupleOf(n, depth int, at func(int) any) (Object, error) {
	if depth == maxNesting {
		return Object{}, errTooDeep()
	}
	a := g.api()
	t := a.TupleNew(n)
	if t == 0 {
		return Object{}, g.fetch("tuple")
	}
	for i := 0; i < n; i++ {
		o, err := g.fromGoAt(at(i), depth+1)
		if err != nil {
			a.DecRef(t)
			return Object{}, err
		}
		a.TupleSetItem(t, i, o.p)
	}
	return Object{t}, nil
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

// maxNesting bounds how deep fromGo (and the tests' goValue) follows
// containers (each level is a Go call): deeper values, and values that
// contain themselves, are a usm.ErrValue error instead of a stack overflow.
const maxNesting = 64

// asInt returns v itself if it is an int (an int subclass or a bool
// included), else the int v.__index__() returns (owned: the caller drops
// it). __index__ may run any Python code, so v must be held by the caller.
// An object without __index__ is a *usm.ReadError of kind ErrType; an
// exception __index__ raises propagates.
func (g *GIL) asInt(v uintptr) (o uintptr, owned bool, err error) {
	a := g.api()
	if a.HasFlag(v, pyapi.TPFlagsLongSubclass) {
		return v, false, nil
	}
	if !a.IndexCheck(v) {
		return 0, false, &usm.ReadError{Kind: errkind.Type, Found: g.objTypeName(Object{v})}
	}
	if o = a.NumberIndex(v); o == 0 {
		return 0, false, g.fetch("__index__")
	}
	return o, true, nil
}

// intValue reads v as Python's operator.index does, by value (never
// through str()): see asInt. overflow is -1 or +1, with the value's sign,
// when it is outside int64.
func (g *GIL) intValue(v uintptr) (x int64, overflow int, err error) {
	a := g.api()
	if x, ok := a.LongValue(v); ok {
		return x, 0, nil
	}
	o, owned, err := g.asInt(v)
	if err != nil {
		return 0, 0, err
	}
	if owned {
		defer a.DecRef(o)
	}
	return g.longValue(o)
}

// longValue reads an int (or int subclass), running no Python code.
func (g *GIL) longValue(o uintptr) (x int64, overflow int, err error) {
	a := g.api()
	x, overflow = a.LongAsInt64Overflow(o)
	if overflow == 0 && x == -1 && a.ErrOccurred() != 0 {
		return 0, 0, g.fetch("int")
	}
	return x, overflow, nil
}

// readInt is intValue with a value outside int64 as a
// *usm.ReadError of kind ErrOverflow.
func (g *GIL) readInt(v uintptr) (int64, error) {
	x, of, err := g.intValue(v)
	switch {
	case err != nil:
		return 0, err
	case of > 0:
		return 0, &usm.ReadError{Kind: errkind.Overflow, Found: "≥ 2**63"}
	case of < 0:
		return 0, &usm.ReadError{Kind: errkind.Overflow, Found: "< -2**63"}
	}
	return x, nil
}

// readPointer reads v as an address (a C size_t), as dpctl converts
// data[0]: as intValue, with a negative value or one above 2**64-1 a
// *usm.ReadError of kind ErrOverflow.
func (g *GIL) readPointer(v uintptr) (uint64, error) {
	a := g.api()
	if x, ok := a.LongValue(v); ok && x >= 0 {
		return uint64(x), nil
	}
	o, owned, err := g.asInt(v)
	if err != nil {
		return 0, err
	}
	if owned {
		defer a.DecRef(o)
	}
	x, of, err := g.longValue(o)
	switch {
	case err != nil:
		return 0, err
	case of < 0:
		return 0, &usm.ReadError{Kind: errkind.Overflow, Found: "negative value < -2**63"}
	case of == 0 && x < 0:
		return 0, &usm.ReadError{Kind: errkind.Overflow, Found: "negative value " + strconv.FormatInt(x, 10)}
	case of == 0:
		return uint64(x), nil
	}
	u := a.LongAsUint64(o)
	if u == math.MaxUint64 && a.ErrOccurred() != 0 {
		a.ErrClear()
		return 0, &usm.ReadError{Kind: errkind.Overflow, Found: "a value ≥ 2**64"}
	}
	return u, nil
}

// truth is Python's bool(v): True, False, None and exact small ints are
// read in memory; anything else through PyObject_IsTrue (which may run
// __bool__ or __len__: v must be held by the caller).
func (g *GIL) truth(v uintptr) (bool, error) {
	a := g.api()
	switch v {
	case a.True:
		return true, nil
	case a.False, a.None:
		return false, nil
	}
	if x, ok := a.LongValue(v); ok {
		return x != 0, nil
	}
	switch a.IsTrue(v) {
	case 1:
		return true, nil
	case 0:
		return false, nil
	}
	return false, g.fetch("bool")
}

// itoa is strconv.Itoa, kept short for messages.
func itoa(i int) string { return strconv.Itoa(i) }

// SetMain binds name to v in __main__: v converted as FromGo converts it
// (an Object is bound itself, and stays the caller's reference). This is
// how an embedding program passes values to the Python code it runs with
// Exec and Eval.
func (g *GIL) SetMain(name string, v any) error {
	ns, err := g.mainDict()
	if err != nil {
		return err
	}
	defer g.DecRef(ns)
	o, err := g.fromGo(v)
	if err != nil {
		return err
	}
	defer g.DecRef(o)
	if g.api().DictSetItemString(ns.p, name, o.p) != 0 {
		return g.fetch("SetMain")
	}
	return nil
}

func (g *GIL) reprOf(o Object) string {
	a := g.api()
	r := a.Repr(o.p)
	if r == 0 {
		a.ErrClear()
		return "<" + g.objTypeName(o) + ">"
	}
	defer a.DecRef(r)
	s, ok := a.UnicodeAsString(r)
	if !ok { // a lone surrogate: the message shows the type instead
		a.ErrClear()
		return "<" + g.objTypeName(o) + ">"
	}
	return s
}

// internedNames holds the str objects internedName made, and the objects
// keepObject keeps, per interpreter; each lives as long as its
// interpreter.
var internedNames struct {
	sync.Mutex
	m map[*Python]map[string]uintptr
}

// internedObject returns the object kept under key (keepObject), or 0.
func (py *Python) internedObject(key string) uintptr {
	internedNames.Lock()
	defer internedNames.Unlock()
	return internedNames.m[py][key]
}

// keepObject keeps o, a new reference, under key for the life of the
// process, and returns the object kept there: o, or the one another
// caller kept first (o is then released).
func (py *Python) keepObject(key string, o uintptr) uintptr {
	internedNames.Lock()
	defer internedNames.Unlock()
	if old, ok := internedNames.m[py][key]; ok {
		py.api.DecRef(o)
		return old
	}
	if internedNames.m == nil {
		internedNames.m = map[*Python]map[string]uintptr{}
	}
	if internedNames.m[py] == nil {
		internedNames.m[py] = map[string]uintptr{}
	}
	internedNames.m[py][key] = o
	return o
}

// internedName returns a str object for name, made once per interpreter
// and kept for its life; 0 with an exception if it cannot be made. The
// caller holds the GIL.
func (py *Python) internedName(name string) uintptr {
	internedNames.Lock()
	defer internedNames.Unlock()
	if o, ok := internedNames.m[py][name]; ok {
		return o
	}
	o := py.api.UnicodeFromString(name)
	if o == 0 {
		return 0
	}
	if internedNames.m == nil {
		internedNames.m = map[*Python]map[string]uintptr{}
	}
	if internedNames.m[py] == nil {
		internedNames.m[py] = map[string]uintptr{}
	}
	internedNames.m[py][name] = o
	return o
}

// UnsafeObject wraps a PyObject* that C code handed over, for a caller that
// holds the GIL and keeps the object alive while it uses the Object (a
// borrowed reference). 0 is the NULL object.
func UnsafeObject(p uintptr) Object { return Object{p} }

// Ptr returns the object's PyObject* (0 for NULL), for C code. The Object
// does not give up its reference: who owns it is the caller's business.
func (o Object) Ptr() uintptr { return o.p }

// Hold returns a strong reference to o as a usm.Owner: Release drops it,
// from any goroutine (taking the GIL). It keeps memory o owns alive for an
// array whose Owner it is.
func (g *GIL) Hold(o Object) usm.Owner { return g.newRef(o) }

// FromGo converts a Go value to a new Python object: nil → None, an
// Object → a new reference to it, bool → bool, signed and unsigned
// integers of every size → int, float64 → float, string → str, slices and
// arrays of any element type ([]byte included) → tuple, map[string]any →
// dict (keys inserted in sorted order). Other types (float32, structs,
// other maps) are a usm.ErrType error, and a value nested deeper than 64
// containers (one that contains itself, say) a usm.ErrValue error. The
// caller owns the result (DecRef).
func (g *GIL) FromGo(v any) (Object, error) { return g.fromGo(v) }

// GetAttr returns o.name (a new reference); an exception the lookup
// raises is the error.
func (g *GIL) GetAttr(o Object, name string) (Object, error) { return g.getAttr(o, name) }

// IsNone reports whether o is None.
func (g *GIL) IsNone(o Object) bool { return g.isNone(o) }

// AsString returns the text of o when o is a str (or a subclass); false
// for anything else, which String would convert with str().
func (g *GIL) AsString(o Object) (string, bool) {
	a := g.api()
	if o.p == 0 || !a.HasFlag(o.p, pyapi.TPFlagsUnicodeSubclass) {
		return "", false
	}
	s, ok := a.UnicodeAsString(o.p)
	if !ok {
		a.ErrClear()
	}
	return s, ok
}

// Call calls fn(*args) and returns the result (a new reference); an
// exception fn raises is the error, as the same object (Raise gives it
// back to Python unchanged).
func (g *GIL) Call(fn Object, args ...Object) (Object, error) {
	a := g.api()
	t := a.TupleNew(len(args))
	if t == 0 {
		return Object{}, g.fetch("call")
	}
	defer a.DecRef(t)
	for i, o := range args {
		a.IncRef(o.p)
		a.TupleSetItem(t, i, o.p) // steals
	}
	r := a.Call(fn.p, t, 0)
	if r == 0 {
		return Object{}, g.fetch("")
	}
	return Object{r}, nil
}

// staticC returns a NUL-terminated copy of s in C memory that is never
// freed, for names the C API keeps (capsule names) or that hot paths pass.
func staticC(s string) *byte {
	p := cmem.Alloc(uintptr(len(s) + 1))
	copy(cmem.Bytes(p, uintptr(len(s))), s)
	return (*byte)(cmem.Ptr(p))
}

func quote(s string) string { return "\"" + s + "\"" }
