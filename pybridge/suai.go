package pybridge

import (
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// staticC returns a NUL-terminated copy of s in C memory that is never
// freed, for names the C API keeps (capsule names) or that hot paths pass.
func staticC(s string) *byte {
	p := cmem.Alloc(uintptr(len(s) + 1))
	copy(cmem.Bytes(p, uintptr(len(s))), s)
	return (*byte)(cmem.Ptr(p))
}

var (
	cSUAI             = staticC("__sycl_usm_array_interface__")
	cQueueRef         = staticC("SyclQueueRef")
	cContextRef       = staticC("SyclContextRef")
	cUsedQueueRef     = staticC("used_SyclQueueRef")
	cUsedContextRef   = staticC("used_SyclContextRef")
	cAddressofRef     = staticC("addressof_ref")
	cGetCapsule       = staticC("_get_capsule")
	suaiKeyNames      = []string{"data", "shape", "strides", "typestr", "offset", "version"}
	errNoSUAIAttrKind = errkind.Value
)

// cachedTypes are dpctl's classes, looked up once dpctl is imported.
type cachedTypes struct {
	mu      sync.Mutex
	ready   atomic.Bool
	queue   uintptr // dpctl.SyclQueue
	context uintptr // dpctl.SyclContext
	memory  uintptr // dpctl.memory._Memory
	// Cython C-API functions of dpctl (module.__pyx_capi__): the ref of a
	// SyclQueue/SyclContext in one C call instead of a Python method call.
	queueRef, contextRef uintptr
}

// dpctlTypes returns dpctl's classes if dpctl (and dpctl.memory) have been
// imported by anyone; it never imports them itself.
func (g *GIL) dpctlTypes() *cachedTypes {
	t := &g.py.types
	if t.ready.Load() {
		return t
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ready.Load() {
		return t
	}
	a := g.api()
	sys, err := g.Import("sys")
	if err != nil {
		return t
	}
	defer g.DecRef(sys)
	mods, err := g.GetAttr(sys, "modules")
	if err != nil {
		return t
	}
	defer g.DecRef(mods)
	dp := a.DictGetItemString(mods.p, "dpctl")
	mem := a.DictGetItemString(mods.p, "dpctl.memory._memory")
	if dp == 0 || mem == 0 {
		return t
	}
	get := func(m uintptr, name string) uintptr {
		v := a.GetAttrString(m, name)
		if v == 0 {
			a.ErrClear()
		}
		return v // kept for the life of the process
	}
	t.queue, t.context, t.memory = get(dp, "SyclQueue"), get(dp, "SyclContext"), get(mem, "_Memory")
	t.queueRef = g.pyxCAPI(mods.p, "dpctl._sycl_queue", "SyclQueue_GetQueueRef")
	t.contextRef = g.pyxCAPI(mods.p, "dpctl._sycl_context", "SyclContext_GetContextRef")
	if t.queue != 0 && t.context != 0 && t.memory != 0 {
		t.ready.Store(true)
	}
	return t
}

// suaiKeyObjects returns str objects for the SUAI keys (suaiKeyNames, then
// "syclobj"), made once per interpreter: looking a key object up skips the
// temporary str that PyDict_GetItemString builds on every call.
func (g *GIL) suaiKeyObjects() ([]uintptr, error) {
	py, a := g.py, g.api()
	py.keysMu.Lock()
	defer py.keysMu.Unlock()
	if py.keys != nil {
		return py.keys, nil
	}
	keys := make([]uintptr, 0, len(suaiKeyNames)+1)
	for _, n := range append(suaiKeyNames[:len(suaiKeyNames):len(suaiKeyNames)], "syclobj") {
		k := a.UnicodeFromString(n)
		if k == 0 {
			for _, k := range keys {
				a.DecRef(k)
			}
			return nil, g.fetch("pybridge.ReadSUAI")
		}
		keys = append(keys, k) // kept for the life of the interpreter
	}
	py.keys = keys
	return keys, nil
}

// suaiGetters returns the itemgetters of suaiValues, made once per
// interpreter (zeros if that failed: every lookup is then a PyDict_GetItem).
func (g *GIL) suaiGetters(keys []uintptr) [2]uintptr {
	py := g.py
	py.keysMu.Lock()
	gt, done := py.getters, py.gettersDone
	py.keysMu.Unlock()
	if done {
		return gt
	}
	gt = g.makeGetters(keys) // outside the lock: it runs Python code
	py.keysMu.Lock()
	defer py.keysMu.Unlock()
	if py.gettersDone { // made meanwhile
		for _, f := range gt {
			g.api().DecRef(f)
		}
		return py.getters
	}
	py.getters, py.gettersDone = gt, true // kept for the life of the interpreter
	return gt
}

func (g *GIL) makeGetters(keys []uintptr) (gt [2]uintptr) {
	op, err := g.Import("operator")
	if err != nil {
		return gt
	}
	defer g.DecRef(op)
	ig, err := g.GetAttr(op, "itemgetter")
	if err != nil {
		return gt
	}
	defer g.DecRef(ig)
	var all, noOffset []any
	for i, k := range keys {
		all = append(all, Object{k})
		if i != suaiOffset {
			noOffset = append(noOffset, Object{k})
		}
	}
	for i, args := range [][]any{all, noOffset} {
		f, err := g.Call(ig, args, nil)
		if err != nil {
			g.DecRef(Object{gt[0]})
			return [2]uintptr{}
		}
		gt[i] = f.p
	}
	return gt
}

// suaiOffset is the index of "offset" in suaiKeyNames.
const suaiOffset = 4

// suaiValues returns the values of the SUAI keys (suaiKeyNames, then
// "syclobj") in d, 0 where absent, fetched with one itemgetter call (two C
// calls with the tuple's release, instead of seven PyDict_GetItem); the
// tuple, kept in s, keeps them alive. It does so for an exact dict of the
// usual sizes; ok is false for other dicts and where the getter raises (a
// key is missing), and the caller then looks the keys up one by one, as
// before, so the values are the same either way.
func (g *GIL) suaiValues(s *SUAI, d uintptr, keys []uintptr) (vals [7]uintptr, ok bool) {
	a := g.api()
	if a.Type(d) == a.DictType {
		gt, n := g.suaiGetters(keys), a.DictLen(d)
		getter, skip := gt[0], -1
		if n == len(keys)-1 {
			getter, skip = gt[1], suaiOffset
		} else if n < len(keys)-1 {
			getter = 0
		}
		if getter != 0 {
			if t := a.CallOneArg(getter, d); t != 0 {
				s.keep = append(s.keep, t)
				j := 0
				for i := range vals {
					if i != skip {
						vals[i] = a.TupleItem(t, j)
						j++
					}
				}
				return vals, true
			}
			a.ErrClear()
		}
	}
	return vals, false
}

// pyxCAPI returns the C function a Cython module exports under name in its
// __pyx_capi__ dict (a capsule named by the function's signature), or 0.
func (g *GIL) pyxCAPI(modules uintptr, module, name string) uintptr {
	a := g.api()
	m := a.DictGetItemString(modules, module)
	if m == 0 {
		return 0
	}
	capi := a.GetAttrString(m, "__pyx_capi__")
	if capi == 0 {
		a.ErrClear()
		return 0
	}
	defer a.DecRef(capi)
	c := a.DictGetItemString(capi, name)
	if c == 0 || a.Type(c) != a.CapsuleType {
		return 0
	}
	fn := a.CapsuleGetPointer(c, (*byte)(cmem.Ptr(a.CapsuleGetName(c))))
	if fn == 0 {
		a.ErrClear()
	}
	return fn // the module, and so the function, lives for the process
}

// opaque stands for a Python value of no type usm.Parse understands; its
// Go type name appears in Parse's messages.
type opaque struct{ typ string }

func (o opaque) String() string { return "<" + o.typ + ">" }

// SUAI is a parsed-to-generic-form __sycl_usm_array_interface__ dict read
// from a live object. Release it (with the GIL) when parsing is done: it
// keeps the dict, and so any capsules and queues in it, alive.
type SUAI struct {
	Map      map[string]any
	keep     []uintptr
	Inverted bool       // data[1] was ignored (a dpctl.memory object, suai.md §6)
	buf      [2]uintptr // keep's first elements, in the same allocation
	vals     [6]any     // backing of the data, shape and strides []any (see value)
	used     int        // of vals
}

// Release drops the references the SUAI holds.
func (s *SUAI) Release(g *GIL) {
	for _, o := range s.keep {
		g.api().DecRef(o)
	}
	s.keep = nil
}

// ReadSUAI reads obj.__sycl_usm_array_interface__ into the generic form
// that usm.Parse and usm.Registry.Parse take. Values become Go values (ints
// int64/uint64, tuples and lists []any, str string, None nil); "syclobj"
// becomes a filter string, a syclobj.QueueRef or ContextRef (for exact
// dpctl.SyclQueue and dpctl.SyclContext objects), or a syclobj
// CapsuleSource for "SyclQueueRef"/"SyclContextRef" capsules and objects
// with _get_capsule: the capsule is taken (renamed to used_*) when the
// registry resolves it, at dpctl's step 6, and only if it still has its
// fresh name. The CapsuleSource calls Python, so parse while holding the
// GIL. An object of dpctl.memory reports writable memory as read-only; its
// flag is ignored (suai.md §6).
//
// A missing attribute is a usm.ErrValue error, as in dpctl; an exception
// raised by the attribute's getter propagates.
func (g *GIL) ReadSUAI(obj Object) (*SUAI, error) {
	a := g.api()
	d := a.GetAttrC(obj.p, cSUAI)
	if d == 0 {
		if a.ErrGivenMatches(a.ErrOccurred(), a.Exc["AttributeError"]) {
			a.ErrClear()
			return nil, errkind.New(errNoSUAIAttrKind, "pybridge.ReadSUAI", "argument of type "+g.TypeName(obj)+" does not expose `__sycl_usm_array_interface__`")
		}
		return nil, g.fetch("pybridge.ReadSUAI")
	}
	s := &SUAI{}
	s.buf[0] = d
	s.keep = s.buf[:1]
	if !a.HasFlag(d, pyapi.TPFlagsDictSubclass) {
		s.Release(g)
		return nil, errkind.New(errkind.Value, "pybridge.ReadSUAI", "argument of type "+g.TypeName(obj)+" does not correctly expose `__sycl_usm_array_interface__` (not a dict)")
	}
	m := make(map[string]any, 7)
	keys, err := g.suaiKeyObjects()
	if err != nil {
		s.Release(g)
		return nil, err
	}
	// Without the getter's tuple the values are borrowed from the dict:
	// each is looked up just before its conversion, which may run Python
	// code (__index__) that changes the dict.
	vals, got := g.suaiValues(s, d, keys)
	for i, name := range suaiKeyNames {
		v := vals[i]
		if !got {
			v = a.DictGetItem(d, keys[i])
		}
		if v != 0 {
			m[name] = g.value(s, v)
		}
	}
	so := vals[len(suaiKeyNames)]
	if !got {
		so = a.DictGetItem(d, keys[len(suaiKeyNames)])
	}
	if so != 0 {
		m["syclobj"] = g.syclobjValue(s, so)
	}
	// dpctl.memory's data[1] means "writable" and is always True.
	if g.isDpctlMemory(obj, m) {
		if data, ok := m["data"].([]any); ok && len(data) == 2 {
			m["data"] = []any{data[0], false}
			s.Inverted = true
		}
	}
	s.Map = m
	return s, nil
}

// knownTypestrs are the typestrs dpctl and NumPy produce, boxed once.
var knownTypestrs = func() map[string]any {
	m := map[string]any{}
	for _, o := range []string{"|", "<", ">", "="} {
		for _, k := range []string{"b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"} {
			m[o+k] = o + k
		}
	}
	return m
}()

const maxTypestrLen = 4

// value converts a SUAI field value: tuples and lists as []any (from s's
// buffer while it lasts); a str of a known typestr as the same Go value
// every time; other plain data as in ToGo; ints above 64 bits as a
// decimal json-like number string usm.Parse reports as overflow; objects
// with __index__ (NumPy integers) as ints; anything else opaque.
func (g *GIL) value(s *SUAI, v uintptr) any {
	a := g.api()
	t := a.Type(v)
	if t == a.UnicodeType {
		if x, ok := knownTypestr(a, v); ok {
			return x
		}
	} else if fl := a.TypeFlags(t); fl&(pyapi.TPFlagsTupleSubclass|pyapi.TPFlagsListSubclass) != 0 {
		n := a.SeqSize(v)
		out := s.slice(n)
		for i := range n {
			if fl&pyapi.TPFlagsTupleSubclass != 0 {
				out[i] = g.value(s, a.TupleItem(v, i))
			} else {
				out[i] = g.value(s, a.ListItem(v, i))
			}
		}
		return out
	}
	if x, err := g.ToGo(Object{v}); err == nil {
		return x
	} else if isKind(err, errkind.Overflow) {
		str, _ := g.String(Object{v})
		return bigInt(str)
	}
	if idx := a.NumberIndex(v); idx != 0 {
		defer a.DecRef(idx)
		if x, err := g.ToGo(Object{idx}); err == nil {
			return x
		}
		str, _ := g.String(Object{idx})
		return bigInt(str)
	}
	a.ErrClear()
	return opaque{g.TypeName(Object{v})}
}

// knownTypestr returns the boxed knownTypestrs value equal to the exact
// str v, without copying it.
func knownTypestr(a *pyapi.API, v uintptr) (any, bool) {
	c, _, ok := a.ASCII(v) // the pointer PyUnicode_AsUTF8 would return
	if !ok {
		if c = a.UnicodeUTF8(v); c == 0 {
			a.ErrClear()
			return nil, false
		}
	}
	n := 0 // up to a NUL, as pyapi.GoString reads
	for n <= maxTypestrLen && *(*byte)(cmem.Ptr(c + uintptr(n))) != 0 {
		n++
	}
	if n > maxTypestrLen {
		return nil, false
	}
	x, ok := knownTypestrs[string(cmem.Bytes(c, uintptr(n)))]
	return x, ok
}

// slice returns n elements of s's buffer, or new ones once it is used up.
func (s *SUAI) slice(n int) []any {
	if s.used+n > len(s.vals) {
		return make([]any, n)
	}
	out := s.vals[s.used : s.used+n : s.used+n]
	s.used += n
	return out
}

// syclobjValue converts the "syclobj" entry (see ReadSUAI).
func (g *GIL) syclobjValue(s *SUAI, so uintptr) any {
	a := g.api()
	t := a.Type(so)
	if t == a.UnicodeType {
		str, ok := a.UnicodeAsString(so)
		if !ok {
			a.ErrClear()
			return opaque{"str"}
		}
		return str
	}
	if t == a.CapsuleType {
		return syclobj.FromCapsuleFunc(func() (syclobj.Obj, error) { return g.takeRefCapsule(so) })
	}
	ty := g.dpctlTypes()
	if ty.queue != 0 && t == ty.queue {
		// A queue dpctl is loaded for may be cached (see queueCache): its
		// ref is then known, and BindRef needs one C call.
		d := g.py.loadedDpctl()
		if d != nil {
			if ref, ok := d.queues.lookupObj(so); ok {
				return syclobj.UnsafeQueueRef(ref)
			}
		}
		var ref uintptr
		if ty.queueRef != 0 {
			ref = ffi.Call(ty.queueRef, so)
		} else if addr, ok := g.addressofRef(so); ok {
			ref = addr
		} else {
			return opaque{g.typeName(t)}
		}
		if d != nil {
			d.noteQueue(g, so, ref)
		}
		return syclobj.UnsafeQueueRef(ref)
	}
	if ty.context != 0 && t == ty.context && ty.contextRef != 0 {
		return syclobj.UnsafeContextRef(ffi.Call(ty.contextRef, so))
	}
	if ty.queue != 0 && t == ty.context {
		addr, ok := g.addressofRef(so)
		if !ok {
			return opaque{g.typeName(t)}
		}
		return syclobj.UnsafeContextRef(addr)
	}
	if a.HasAttrString(so, "_get_capsule") {
		return syclobj.FromCapsuleFunc(func() (syclobj.Obj, error) {
			m := a.GetAttrC(so, cGetCapsule)
			if m == 0 {
				return nil, g.fetch("_get_capsule")
			}
			c := a.CallObject(m, 0)
			a.DecRef(m)
			if c == 0 {
				return nil, g.fetch("_get_capsule")
			}
			s.keep = append(s.keep, c)
			if a.Type(c) != a.CapsuleType {
				return nil, errkind.New(errkind.Value, "_get_capsule", "returned "+g.TypeName(Object{c})+", not a capsule")
			}
			return g.takeRefCapsule(c)
		})
	}
	return opaque{g.typeName(t)}
}

// addressofRef returns so.addressof_ref() (a SyclQueue or SyclContext
// whose module exports no C-API function); ok is false if the call failed.
func (g *GIL) addressofRef(so uintptr) (uintptr, bool) {
	a := g.api()
	r := a.CallObject(a.GetAttrC(so, cAddressofRef), 0)
	if r == 0 {
		return 0, false
	}
	// (the bound method's reference leaks only on the error path above)
	p, _ := g.ToGo(Object{r})
	a.DecRef(r)
	addr, _ := p.(int64)
	return uintptr(addr), true
}

// takeRefCapsule takes a fresh "SyclQueueRef" or "SyclContextRef" capsule:
// it reads the reference and renames the capsule to used_*, as dpctl does.
// The capsule still owns the reference (its destructor deletes it under
// either name), so the reference is borrowed while the capsule lives.
func (g *GIL) takeRefCapsule(c uintptr) (syclobj.Obj, error) {
	a := g.api()
	name := pyapi.GoString(a.CapsuleGetName(c))
	switch name {
	case "SyclQueueRef":
		p := a.CapsuleGetPointer(c, cQueueRef)
		if p == 0 {
			return nil, g.fetch("SyclQueueRef capsule")
		}
		a.CapsuleSetName(c, cUsedQueueRef)
		return syclobj.UnsafeQueueRef(p), nil
	case "SyclContextRef":
		p := a.CapsuleGetPointer(c, cContextRef)
		if p == 0 {
			return nil, g.fetch("SyclContextRef capsule")
		}
		a.CapsuleSetName(c, cUsedContextRef)
		return syclobj.UnsafeContextRef(p), nil
	}
	return nil, errkind.New(errkind.Value, "syclobj capsule", "capsule named "+quote(name)+" (want a fresh \"SyclQueueRef\" or \"SyclContextRef\"; capsules are single-use)")
}

// isDpctlMemory reports whether obj is a dpctl.memory object, or a SUAI of
// exactly the shape those objects produce (1-D "|u1", strides None, no
// offset key, syclobj a dpctl.SyclQueue, data[1] True). The shape, known
// in Go, is checked first; isinstance only when it does not decide.
func (g *GIL) isDpctlMemory(obj Object, m map[string]any) bool {
	ty := g.dpctlTypes()
	if ty.memory == 0 {
		return false
	}
	return memoryShaped(m) || g.isMemoryInstance(obj.p, ty.memory)
}

func memoryShaped(m map[string]any) bool {
	if _, hasOffset := m["offset"]; hasOffset || m["typestr"] != "|u1" || m["strides"] != nil {
		return false
	}
	shape, ok := m["shape"].([]any)
	if !ok || len(shape) != 1 {
		return false
	}
	_, isQueue := m["syclobj"].(syclobj.QueueRef)
	return isQueue
}

// usmNdarrayTypes are the tp_name of dpctl's and dpnp's usm_ndarray: static
// extension types, never dpctl.memory objects, that do not override
// __class__, so their instances need no isinstance call (~0.25 µs).
var usmNdarrayTypes = map[string]bool{
	"dpnp.tensor._usmarray.usm_ndarray":  true,
	"dpctl.tensor._usmarray.usm_ndarray": true,
}

// isMemoryInstance is isinstance(o, mem); an error counts as false.
func (g *GIL) isMemoryInstance(o, mem uintptr) bool {
	a := g.api()
	t := a.Type(o)
	if t == mem {
		return true
	}
	// Only an immutable (static or extension) type can be trusted by name:
	// a Python class may call itself anything.
	if a.TypeFlags(t)&pyapi.TPFlagsImmutableType != 0 && usmNdarrayTypes[pyapi.TypeObjectName(t)] {
		return false
	}
	return g.isInstance(o, mem)
}

func (g *GIL) isInstance(o, cls uintptr) bool {
	a := g.api()
	r := a.IsInstance(o, cls)
	if r < 0 {
		a.ErrClear()
	}
	return r == 1
}

func isKind(err error, k *errkind.Kind) bool {
	e, ok := err.(*errkind.Error)
	return ok && e.Kind == k
}

func quote(s string) string { return "\"" + s + "\"" }

// AsArray reads obj's SUAI and binds it with reg (nil: the registry of the
// interpreter's dpctl, which is imported if needed). The array's Owner
// keeps obj alive.
func (g *GIL) AsArray(obj Object, reg *usm.Registry) (*usm.Array, error) {
	arr, _, err := g.asArray(obj, reg, false)
	return arr, err
}

// AsArrayKeepSyclobj is AsArray that also returns the SUAI's syclobj when
// it is a dpctl.SyclQueue or dpctl.SyclContext (nil otherwise), so that a
// re-export can name the same queue or context.
func (g *GIL) AsArrayKeepSyclobj(obj Object, reg *usm.Registry) (*usm.Array, *Ref, error) {
	return g.asArray(obj, reg, true)
}

func (g *GIL) asArray(obj Object, reg *usm.Registry, keepSyclobj bool) (*usm.Array, *Ref, error) {
	if reg == nil {
		d, err := g.dpctlUnderGIL()
		if err != nil {
			return nil, nil, err
		}
		reg = d.reg
	}
	s, err := g.ReadSUAI(obj)
	if err != nil {
		return nil, nil, err
	}
	defer s.Release(g)
	arr, err := reg.Parse(s.Map)
	if err != nil {
		return nil, nil, err
	}
	arr.Owner = g.py.newRef(obj)
	var so *Ref
	if keepSyclobj {
		keys, _ := g.suaiKeyObjects() // made by ReadSUAI already
		if p := g.api().DictGetItem(s.keep[0], keys[len(suaiKeyNames)]); p != 0 {
			if ty := g.dpctlTypes(); ty.queue != 0 && (g.api().Type(p) == ty.queue || g.api().Type(p) == ty.context) {
				so = g.py.newRef(Object{p})
			}
		}
	}
	return arr, so, nil
}

// dpctlUnderGIL is Python.Dpctl for a caller that holds the GIL (the GIL
// is re-entrant per thread, so this is safe).
func (g *GIL) dpctlUnderGIL() (*Dpctl, error) { return g.py.Dpctl() }

// bigInt is an integer beyond 64 bits in decimal; usm.Parse reads it as a
// json.Number and reports it as an overflow.
func bigInt(s string) any { return jsonNumber(s) }
