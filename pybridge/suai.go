package pybridge

import (
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/dpctl"
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
	errNoSUAIAttrKind = errkind.Value
)

// The SUAI keys, in the order of the values suaiValues fetches.
const (
	keyData = iota
	keyShape
	keyStrides
	keyTypestr
	keyOffset
	keyVersion
	keySyclobj
	numKeys
)

var suaiKeyNames = [numKeys]string{"data", "shape", "strides", "typestr", "offset", "version", "syclobj"}

// SUAIKeys are the keys of __sycl_usm_array_interface__ in the order of
// SUAIDict.Values.
func SUAIKeys() [numKeys]string { return suaiKeyNames }

// SUAIDict is an object's __sycl_usm_array_interface__ as a caller that
// read the attribute itself found it, for ArrayFromSUAI and
// ReadSUAIArray. Dict is the attribute's value. When Looked, Dict is
// exactly a dict (not a subclass) and Values holds its value at each of
// SUAIKeys, looked up as dpctl's dict.get does (PyDict_GetItemWithError; a
// zero Object where a key is absent): the values are then read as they
// are, without another lookup. Otherwise (a dict subclass, or no dict at
// all) Values is unused and Dict is read as ReadArray reads it. Every
// reference is borrowed: the caller holds Dict and each value until the
// call returns (a reference of its own to each value, not the dict's:
// reading them may run Python code that changes the dict).
type SUAIDict struct {
	Dict   Object
	Values [numKeys]Object
	Looked bool

	// fields is where an exact dict's values are read (suaiOf): a caller
	// that keeps its SUAIDict for the next array reads it without an
	// allocation.
	fields suaiDict
}

// suaiOf is readSUAIDictOf for what the caller read: the values of an
// exact dict it looked up are taken as they are (borrowed), anything else
// is read as readSUAIDictOf reads it.
func (g *GIL) suaiOf(obj Object, d *SUAIDict) (*suaiDict, error) {
	a := g.api()
	if d.Looked && a.Type(d.Dict.p) == a.DictType {
		s := &d.fields
		*s = suaiDict{g: g, obj: obj.p, dict: d.Dict.p, borrowed: true}
		for i, v := range d.Values {
			s.vals[i] = v.p
		}
		return s, nil
	}
	a.IncRef(d.Dict.p)
	return g.readSUAIDictOf(obj, d.Dict)
}

// keyIndex returns the index of a SUAI key, or -1.
func keyIndex(key string) int {
	switch key {
	case "data":
		return keyData
	case "shape":
		return keyShape
	case "strides":
		return keyStrides
	case "typestr":
		return keyTypestr
	case "offset":
		return keyOffset
	case "version":
		return keyVersion
	case "syclobj":
		return keySyclobj
	}
	return -1
}

// cachedTypes are dpctl's classes, looked up once dpctl is imported.
type cachedTypes struct {
	mu    sync.Mutex
	ready atomic.Bool
	dpctlClasses
}

// noDpctlTypes is what dpctlTypes returns before dpctl is imported: no
// classes (t's fields are written once, under its lock, and are read only
// once t is ready).
var noDpctlTypes cachedTypes

type dpctlClasses struct {
	queue   uintptr // dpctl.SyclQueue
	context uintptr // dpctl.SyclContext
	memory  uintptr // dpctl.memory._Memory
	// memoryAttr is _Memory's __sycl_usm_array_interface__ descriptor:
	// the attribute of every type whose dicts come from dpctl.memory.
	memoryAttr uintptr
	// Cython C-API functions of dpctl (module.__pyx_capi__): the ref of a
	// SyclQueue/SyclContext in one C call instead of a Python method call.
	queueRef, contextRef ffi.Fn
	queueMake            ffi.Fn // SyclQueue_Make: a new SyclQueue over a copy of a ref
}

// dpctlTypes returns dpctl's classes if dpctl (and dpctl.memory) have been
// imported by anyone; it never imports them itself. The lookups run
// without the lock: they may run Python code, which may let another
// thread take the GIL and come here too, and that thread would wait for
// the lock while holding the GIL.
func (g *GIL) dpctlTypes() *cachedTypes {
	t := &g.py.types
	if t.ready.Load() {
		return t
	}
	c, ok := g.lookupDpctlClasses()
	if !ok {
		return &noDpctlTypes
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ready.Load() {
		t.dpctlClasses = c // kept for the life of the process
		t.ready.Store(true)
	}
	return t
}

// lookupDpctlClasses finds dpctl's classes in sys.modules; ok is false
// until dpctl and dpctl.memory are imported.
func (g *GIL) lookupDpctlClasses() (c dpctlClasses, ok bool) {
	a := g.api()
	sys, err := g.importModule("sys")
	if err != nil {
		a.ErrClear()
		return c, false
	}
	defer g.DecRef(sys)
	mods, err := g.getAttr(sys, "modules")
	if err != nil {
		return c, false
	}
	defer g.DecRef(mods)
	// Strong references: the lookups below may run a module's __getattr__.
	dp, mem := a.DictGetItemString(mods.p, "dpctl"), a.DictGetItemString(mods.p, "dpctl.memory._memory")
	if dp == 0 || mem == 0 {
		return c, false
	}
	a.IncRef(dp)
	defer a.DecRef(dp)
	a.IncRef(mem)
	defer a.DecRef(mem)
	get := func(m uintptr, name string) uintptr {
		if m == 0 {
			return 0
		}
		v := a.GetAttrString(m, name)
		if v == 0 {
			a.ErrClear()
		}
		return v
	}
	c.queue, c.context, c.memory = get(dp, "SyclQueue"), get(dp, "SyclContext"), get(mem, "_Memory")
	c.memoryAttr = get(c.memory, "__sycl_usm_array_interface__")
	c.queueRef = g.pyxCAPI(mods.p, "dpctl._sycl_queue", "SyclQueue_GetQueueRef")
	c.contextRef = g.pyxCAPI(mods.p, "dpctl._sycl_context", "SyclContext_GetContextRef")
	c.queueMake = g.pyxCAPI(mods.p, "dpctl._sycl_queue", "SyclQueue_Make")
	if c.queue == 0 || c.context == 0 || c.memory == 0 || c.memoryAttr == 0 {
		for _, o := range []uintptr{c.queue, c.context, c.memory, c.memoryAttr} {
			a.DecRef(o)
		}
		return dpctlClasses{}, false
	}
	return c, true
}

// suaiKeyObjects returns str objects for the SUAI keys (suaiKeyNames),
// made once per interpreter: looking a key object up skips the temporary
// str that PyDict_GetItemString builds on every call.
func (g *GIL) suaiKeyObjects() ([]uintptr, error) {
	py, a := g.py, g.api()
	py.keysMu.Lock()
	defer py.keysMu.Unlock()
	if py.keys != nil {
		return py.keys, nil
	}
	name := a.UnicodeFromString("__sycl_usm_array_interface__")
	if name == 0 {
		return nil, g.fetch("pybridge.ReadSUAI")
	}
	keys := make([]uintptr, 0, numKeys)
	for _, n := range suaiKeyNames {
		k := a.UnicodeFromString(n)
		if k == 0 {
			for _, k := range keys {
				a.DecRef(k)
			}
			a.DecRef(name)
			return nil, g.fetch("pybridge.ReadSUAI")
		}
		keys = append(keys, k) // kept for the life of the interpreter
	}
	py.keys = keys
	py.suaiName.Store(name) // kept for the life of the interpreter
	return keys, nil
}

// suaiAttrName returns the str "__sycl_usm_array_interface__", made once
// per interpreter (with the keys): reading the attribute by a C string
// made a str on every read, and hashed it.
func (g *GIL) suaiAttrName() (uintptr, error) {
	if n := g.py.suaiName.Load(); n != 0 {
		return n, nil
	}
	if _, err := g.suaiKeyObjects(); err != nil {
		return 0, err
	}
	return g.py.suaiName.Load(), nil
}

// suaiGetters returns the itemgetters of suaiValues, made once per
// interpreter (zeros if that failed: every lookup is then a
// PyDict_GetItemWithError).
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
	op, err := g.importModule("operator")
	if err != nil {
		return gt
	}
	defer g.DecRef(op)
	ig, err := g.getAttr(op, "itemgetter")
	if err != nil {
		return gt
	}
	defer g.DecRef(ig)
	var all, noOffset []any
	for i, k := range keys {
		all = append(all, Object{k})
		if i != keyOffset {
			noOffset = append(noOffset, Object{k})
		}
	}
	for i, args := range [][]any{all, noOffset} {
		f, err := g.call(ig, args, nil)
		if err != nil {
			g.DecRef(Object{gt[0]})
			return [2]uintptr{}
		}
		gt[i] = f.p
	}
	return gt
}

// suaiValues fetches the values of all SUAI keys of s.dict with one
// itemgetter call (two C calls with the tuple's release, instead of seven
// lookups) into s.vals; the tuple, kept in s.got, holds them. It does so
// for an exact dict of the usual sizes; it reports false for other dicts
// and where the getter raises (a key is missing), and the caller then
// looks the keys up one by one, so the values are the same either way.
func (g *GIL) suaiValues(s *suaiDict, keys []uintptr) (bool, error) {
	a := g.api()
	d := s.dict
	if a.Type(d) != a.DictType {
		return false, nil
	}
	n := a.DictLen(d)
	getter := g.suaiGetterFor(keys, n)
	if getter == 0 {
		return false, nil
	}
	t := a.CallOneArg(getter, d)
	if t == 0 {
		// A KeyError is the answer "some key is absent", which the lookup
		// of each key then tells apart; anything else (a key's __eq__ that
		// raised) is the dict's own exception, as dpctl's dict.get raises
		// it, not a reason to look again.
		if !a.ErrGivenMatches(a.ErrOccurred(), a.Exc["KeyError"]) {
			return false, g.fetch("__sycl_usm_array_interface__")
		}
		a.ErrClear()
		return false, nil
	}
	s.got = t
	s.takeValues(t, n)
	return true, nil
}

// suaiGetterFor is the itemgetter suaiValues calls for an exact dict of n
// items, or 0 for none: a dict of all the keys but offset (which is
// optional) has a getter of its own, smaller dicts cannot have every key.
func (g *GIL) suaiGetterFor(keys []uintptr, n int) uintptr {
	gt := g.suaiGetters(keys)
	switch {
	case n == numKeys-1:
		return gt[1]
	case n < numKeys-1:
		return 0
	}
	return gt[0]
}

// takeValues sets s.vals from t, what suaiGetterFor(keys, n) returned for
// s.dict (t keeps them alive).
func (s *suaiDict) takeValues(t uintptr, n int) {
	a := s.g.api()
	skip := -1
	if n == numKeys-1 {
		skip = keyOffset
	}
	j := 0
	for i := range s.vals {
		if i != skip {
			s.vals[i] = a.TupleItem(t, j)
			j++
		}
	}
}

// pyxCAPI returns the C function a Cython module exports under name in its
// __pyx_capi__ dict (a capsule named by the function's signature), or 0.
func (g *GIL) pyxCAPI(modules uintptr, module, name string) ffi.Fn {
	a := g.api()
	m := a.DictGetItemString(modules, module)
	if m == 0 {
		return 0
	}
	a.IncRef(m) // getattr below may run the module's __getattr__
	defer a.DecRef(m)
	capi := a.GetAttrString(m, "__pyx_capi__")
	if capi == 0 {
		a.ErrClear()
		return 0
	}
	defer a.DecRef(capi)
	if a.Type(capi) != a.DictType {
		return 0
	}
	c := a.DictGetItemString(capi, name)
	if c == 0 || a.Type(c) != a.CapsuleType {
		return 0
	}
	fn := a.CapsuleGetPointer(c, (*byte)(cmem.Ptr(a.CapsuleGetName(c))))
	if fn == 0 {
		a.ErrClear()
	}
	return ffi.Fn(fn) // the module, and so the function, lives for the process
}

// suaiDict is the __sycl_usm_array_interface__ dict of one object, read for
// usm's parser: it implements usm.Fields over the live Python
// objects.
// Every value it reads is held by a strong reference it owns, and a list
// is read as a tuple copy it owns, so Python code that runs meanwhile
// (__index__, __bool__, a property, __getattr__, a finaliser) may change
// or free the dict and its lists without changing what is read or
// freeing it. Containers are read only as far as the parser asks, never
// converted generically, so a container that holds itself is just a
// value of the wrong type. Its methods need the GIL; Release it (with the
// GIL) when parsing is done.
type suaiDict struct {
	// Inverted reports that data[1] was true and was ignored: the dict
	// came from dpctl.memory, whose True means "writable" (see
	// RATIONALE.md).
	Inverted bool

	g        *GIL
	obj      uintptr          // the object read (the caller's reference), or 0
	dict     uintptr          // owned
	got      uintptr          // the itemgetter's tuple (owned), holding vals; 0 if vals are owned one by one
	vals     [numKeys]uintptr // the dict's values at the keys, 0 where absent
	seqs     [3]uintptr       // tuples Data and Len read (owned): data, shape, strides
	keep     []uintptr        // a _get_capsule method and the capsules it returned (owned)
	released bool
	// sources is what a capsule source of the syclobj (a closure the
	// registry may call after the parse, from the Array's Interface)
	// checks instead of s: s may be storage the next dict is read into
	// (SUAIDict.fields). Made with the first source; Release marks it.
	sources *sourceState
	// borrowed: dict and vals are the caller's (suaiOf), which keeps
	// them alive until after Release.
	borrowed bool
}

var _ usm.Fields = (*suaiDict)(nil)

// Release drops the references the SUAI holds; a capsule source in the
// syclobj it read stops working.
func (s *suaiDict) Release(g *GIL) {
	if s == nil || s.released {
		return
	}
	s.released = true
	if s.sources != nil {
		s.sources.released = true
	}
	a := g.api()
	for i, t := range s.seqs {
		a.DecRef(t)
		s.seqs[i] = 0
	}
	switch {
	case s.borrowed:
	case s.got != 0:
		a.DecRef(s.got)
	default:
		for _, v := range s.vals {
			a.DecRef(v)
		}
	}
	s.vals, s.got = [numKeys]uintptr{}, 0
	for _, c := range s.keep {
		a.DecRef(c)
	}
	s.keep = nil
	if !s.borrowed {
		a.DecRef(s.dict)
	}
	s.dict = 0
}

// readSUAI reads obj.__sycl_usm_array_interface__ (once) and the dict's
// values at the SUAI keys, as dpctl's parser does before checking them,
// and returns them for usm.ParseFields or Registry.ParseFields.
// "syclobj" is read as a filter string, a syclobj.QueueRef or ContextRef
// (exact dpctl.SyclQueue and dpctl.SyclContext objects), or a capsule
// source (syclobj.FromCapsule) for "SyclQueueRef"/"SyclContextRef" capsules and
// objects with _get_capsule: the capsule is taken (renamed to used_*) when
// the registry resolves it, at dpctl's step 6, and only if it still has its
// fresh name. The capsule source calls Python, so parse while holding the
// GIL and before Release.
//
// Integers are read as numbers (int, int subclasses and bool by value,
// other objects through __index__), never through str(). When the dict
// comes from dpctl.memory's own property, data[1] is ignored (see
// SUAI.Inverted).
//
// A missing attribute is a usm.ErrValue error, as in dpctl; an exception
// raised by the attribute's getter, or while looking a key up, propagates.
func (g *GIL) readSUAI(obj Object) (*suaiDict, error) {
	a := g.api()
	name, err := g.suaiAttrName()
	if err != nil {
		return nil, err
	}
	d := a.GetAttr(obj.p, name)
	if d == 0 {
		return nil, g.suaiAttrError(obj)
	}
	if !a.HasFlag(d, pyapi.TPFlagsDictSubclass) {
		a.DecRef(d)
		return nil, g.notASUAIDict(obj)
	}
	s, err := g.readSUAIDict(d)
	if err != nil {
		return nil, err
	}
	s.obj = obj.p
	return s, nil
}

// suaiAttrError is readSUAI's error when reading the attribute raised
// (the exception is still set): a missing attribute is a usm.ErrValue
// error, as in dpctl; anything else the getter raised propagates.
func (g *GIL) suaiAttrError(obj Object) error {
	a := g.api()
	if a.ErrGivenMatches(a.ErrOccurred(), a.Exc["AttributeError"]) {
		a.ErrClear()
		return g.noSUAIError(obj)
	}
	return g.fetch("pybridge.ReadSUAI")
}

// noSUAIError is the error for an object without the attribute: a
// ValueError, as dpctl raises.
func (g *GIL) noSUAIError(obj Object) error {
	return errkind.New(errNoSUAIAttrKind, "pybridge.ReadSUAI", "argument of type "+g.objTypeName(obj)+" does not expose `__sycl_usm_array_interface__`")
}

// readSUAIDictOf is readSUAI for a caller that read obj's attribute itself:
// d (whose reference it takes over) is the attribute's value.
func (g *GIL) readSUAIDictOf(obj, d Object) (*suaiDict, error) {
	if !g.api().HasFlag(d.p, pyapi.TPFlagsDictSubclass) {
		g.api().DecRef(d.p)
		return nil, g.notASUAIDict(obj)
	}
	s, err := g.readSUAIDict(d.p)
	if err != nil {
		return nil, err
	}
	s.obj = obj.p
	return s, nil
}

func (g *GIL) notASUAIDict(obj Object) error {
	return errkind.New(errkind.Value, "pybridge.ReadSUAI", "argument of type "+g.objTypeName(obj)+" does not correctly expose `__sycl_usm_array_interface__` (not a dict)")
}

// readSUAIDict reads the SUAI dict d (a dict or dict subclass), taking
// over the caller's reference to it.
func (g *GIL) readSUAIDict(d uintptr) (*suaiDict, error) {
	s := &suaiDict{g: g, dict: d}
	keys, err := g.suaiKeyObjects()
	if err == nil {
		var ok bool
		if ok, err = g.suaiValues(s, keys); err == nil && !ok {
			err = s.lookUpEach(keys)
		}
	}
	if err != nil {
		s.Release(g)
		return nil, err
	}
	return s, nil
}

// lookUpEach takes the value of each key of s.dict into s.vals (owned),
// as dpctl's dict.get: PyDict_GetItemWithError, which a subclass's
// __getitem__ does not override. Each value is taken at once: looking up
// the next key may run Python code (a key's __eq__).
func (s *suaiDict) lookUpEach(keys []uintptr) error {
	g := s.g
	a := g.api()
	for i, k := range keys {
		v := a.DictGetItemWithError(s.dict, k)
		if v == 0 {
			if a.ErrOccurred() != 0 {
				return g.fetch("__sycl_usm_array_interface__[" + quote(suaiKeyNames[i]) + "]")
			}
			continue
		}
		a.IncRef(v)
		s.vals[i] = v
	}
	return nil
}

// value returns the value at key (0: absent).
func (s *suaiDict) value(key string) uintptr {
	if i := keyIndex(key); i >= 0 {
		return s.vals[i]
	}
	return 0
}

// Int implements usm.Fields.
func (s *suaiDict) Int(key string) (int64, bool, error) {
	v := s.value(key)
	if v == 0 {
		return 0, false, nil
	}
	i, err := s.g.readInt(v)
	return i, true, err
}

// Data implements usm.Fields.
func (s *suaiDict) Data() (uint64, bool, error) {
	g, a := s.g, s.g.api()
	v := s.vals[keyData]
	if v == 0 || v == a.None {
		return 0, false, &usm.ReadError{Kind: errkind.Value}
	}
	t, err := s.snapshot(v, keyData)
	if err != nil {
		return 0, false, err
	}
	if t == 0 { // not a tuple or list: dpctl's "not data or len(data) != 2"
		truthy, err := g.truth(v)
		if err != nil {
			return 0, false, err
		}
		if !truthy {
			return 0, false, &usm.ReadError{Kind: errkind.Value}
		}
		n := a.Length(v)
		if n < 0 {
			if !a.ErrGivenMatches(a.ErrOccurred(), a.Exc["TypeError"]) {
				return 0, false, g.fetch("len(data)")
			}
			a.ErrClear()
			return 0, false, &usm.ReadError{Kind: errkind.Type, Index: -1, Found: g.objTypeName(Object{v})}
		}
		if n != 2 {
			return 0, false, &usm.ReadError{Kind: errkind.Value}
		}
		return 0, false, &usm.ReadError{Kind: errkind.Type, Found: "an item of " + g.objTypeName(Object{v})}
	}
	if a.SeqSize(t) != 2 {
		return 0, false, &usm.ReadError{Kind: errkind.Value}
	}
	ptr, err := g.readPointer(a.TupleItem(t, 0))
	if err != nil {
		return 0, false, err
	}
	ro, err := g.truth(a.TupleItem(t, 1))
	if err != nil {
		return 0, false, err
	}
	if ro {
		inverted, err := s.fromDpctlMemory()
		if err != nil {
			return 0, false, err
		}
		if inverted {
			ro, s.Inverted = false, true
		}
	}
	return ptr, ro, nil
}

// fromDpctlMemory reports whether the dict came from dpctl.memory's own
// __sycl_usm_array_interface__ property: the attribute of the object's
// type (found by the same lookup that found the dict) is _Memory's
// descriptor, which only _Memory and its subclasses can have. A class
// that stores a dict of the same shape, or calls itself _Memory through
// __class__, does not count. What a metaclass raises looking the
// attribute up, other than AttributeError, is the error.
func (s *suaiDict) fromDpctlMemory() (bool, error) {
	if s.obj == 0 {
		return false, nil
	}
	g, a := s.g, s.g.api()
	ty := g.dpctlTypes()
	if ty.memoryAttr == 0 {
		return false, nil // dpctl.memory is not imported: no object is one
	}
	t := a.Type(s.obj)
	// Only an immutable (static or extension) type can be trusted by name:
	// a Python class may call itself anything.
	if a.TypeFlags(t)&pyapi.TPFlagsImmutableType != 0 && usmNdarrayTypes[pyapi.TypeObjectName(t)] {
		return false, nil
	}
	a.IncRef(t) // the lookup may run a metaclass's code, which may reassign obj.__class__
	attr := a.GetAttrC(t, cSUAI)
	a.DecRef(t)
	if attr == 0 {
		if !a.ErrGivenMatches(a.ErrOccurred(), a.Exc["AttributeError"]) {
			return false, g.fetch("__sycl_usm_array_interface__")
		}
		a.ErrClear()
		return false, nil
	}
	a.DecRef(attr) // the descriptor lives in _Memory's type dict
	return attr == ty.memoryAttr, nil
}

// usmNdarrayTypes are the tp_name of dpctl's and dpnp's usm_ndarray: static
// extension types, never dpctl.memory objects, so reading their dicts needs
// no attribute lookup.
var usmNdarrayTypes = map[string]bool{
	"dpnp.tensor._usmarray.usm_ndarray":  true,
	"dpctl.tensor._usmarray.usm_ndarray": true,
}

// snapshot returns a tuple holding what the tuple or list v holds now, and
// keeps it in s.seqs[slot]: v itself for a tuple (whose items cannot
// change), a copy for a list (PyList_AsTuple, which runs no Python code).
// Subclasses are read the same way: their __len__, __getitem__ and
// __iter__ are not called. It returns 0 for any other value.
func (s *suaiDict) snapshot(v uintptr, slot int) (uintptr, error) {
	a := s.g.api()
	var t uintptr
	switch fl := a.TypeFlags(a.Type(v)); {
	case fl&pyapi.TPFlagsTupleSubclass != 0:
		a.IncRef(v)
		t = v
	case fl&pyapi.TPFlagsListSubclass != 0:
		if t = a.ListAsTuple(v); t == 0 {
			return 0, s.g.fetch("tuple(list)")
		}
	default:
		return 0, nil
	}
	a.DecRef(s.seqs[slot]) // read twice: the newer read wins
	s.seqs[slot] = t
	return t, nil
}

// seqSlot maps "data", "shape" and "strides" to their s.seqs slot.
func seqSlot(key string) int {
	switch i := keyIndex(key); i {
	case keyData, keyShape, keyStrides:
		return i
	}
	return -1
}

// Len implements usm.Fields.
func (s *suaiDict) Len(key string) (int, bool, error) {
	a := s.g.api()
	slot := seqSlot(key)
	if slot < 0 {
		return 0, false, nil
	}
	v := s.vals[slot]
	if v == 0 || v == a.None {
		return 0, false, nil
	}
	t, err := s.snapshot(v, slot)
	if err != nil {
		return 0, false, err
	}
	if t == 0 {
		return 0, false, &usm.ReadError{Kind: errkind.Value, Found: s.g.objTypeName(Object{v})}
	}
	return a.SeqSize(t), true, nil
}

// Elem implements usm.Fields.
func (s *suaiDict) Elem(key string, i int) (int64, error) {
	a := s.g.api()
	var t uintptr
	if slot := seqSlot(key); slot >= 0 {
		t = s.seqs[slot]
	}
	if t == 0 || i < 0 || i >= a.SeqSize(t) {
		return 0, errkind.New(errkind.Value, "pybridge.SUAI.Elem", key+"["+itoa(i)+"] was not read by Len")
	}
	return s.g.readInt(a.TupleItem(t, i))
}

// knownTypestrs are the typestrs dpctl and NumPy produce, as strings made
// once, so that reading one allocates nothing.
var knownTypestrs = func() map[string]string {
	m := map[string]string{}
	for _, o := range []string{"|", "<", ">", "="} {
		for _, k := range []string{"b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"} {
			m[o+k] = o + k
		}
	}
	return m
}()

const maxTypestrLen = 4

// Typestr implements usm.Fields: a str or str subclass, every
// character of it (an embedded NUL is kept, and refused by the parser).
func (s *suaiDict) Typestr() (string, error) {
	g, a := s.g, s.g.api()
	v := s.vals[keyTypestr]
	if v == 0 || v == a.None {
		return "", &usm.ReadError{Kind: errkind.Value, Found: "None"}
	}
	if !a.HasFlag(v, pyapi.TPFlagsUnicodeSubclass) {
		return "", &usm.ReadError{Kind: errkind.Value, Found: g.objTypeName(Object{v}) + " value"}
	}
	c, n, ok := a.UnicodeUTF8AndSize(v)
	if !ok { // a lone surrogate: no typestr, and no UTF-8 to show
		a.ErrClear()
		return "", &usm.ReadError{Kind: errkind.Value, Found: "a str that is not valid UTF-8"}
	}
	b := cmem.Bytes(c, uintptr(n))
	if n <= maxTypestrLen {
		if x, ok := knownTypestrs[string(b)]; ok {
			return x, nil
		}
	}
	return string(b), nil
}

// Syclobj implements usm.Fields.
func (s *suaiDict) Syclobj() (syclobj.Obj, error) {
	g, a := s.g, s.g.api()
	so := s.vals[keySyclobj]
	if so == 0 || so == a.None {
		return nil, nil
	}
	t := a.Type(so)
	if t == a.UnicodeType { // dpctl: type(x) is str
		str, ok := a.UnicodeAsString(so)
		if !ok {
			a.ErrClear()
			return nil, &usm.ReadError{Kind: errkind.Value, Found: "a str that is not valid UTF-8"}
		}
		o, err := syclobj.ParseSelector(str)
		if err != nil {
			return nil, &usm.ReadError{Kind: errkind.Value, Found: "str", Err: err}
		}
		return o, nil
	}
	if t == a.CapsuleType {
		src := s.sourceState()
		return syclobj.FromCapsule(func() (syclobj.Obj, error) {
			if src.released {
				return nil, errReleased()
			}
			o, err := g.takeRefCapsule(so)
			if err != nil {
				return nil, &usm.ReadError{Kind: errkind.Value, Found: "the capsule", Err: err}
			}
			return o, nil
		}), nil
	}
	ty := g.dpctlTypes()
	if ty.queue != 0 && t == ty.queue {
		// A queue dpctl is loaded for may be cached (see queueCache): its
		// ref is then known, and BindRef needs one C call.
		d := g.py.loadedDpctl()
		if d != nil {
			if o, ok := g.py.dpQueues.lookupObj(so); ok {
				return o, nil
			}
		}
		var ref uintptr
		if ty.queueRef != 0 {
			ref = ty.queueRef.Call1(so)
		} else {
			var err error
			if ref, err = g.addressofRef(so); err != nil {
				return nil, err
			}
		}
		if d != nil {
			g.py.noteQueue(g, d, so, ref)
		}
		return syclobj.UnsafeQueueRef(ref), nil
	}
	if ty.context != 0 && t == ty.context {
		if ty.contextRef != 0 {
			return syclobj.UnsafeContextRef(ty.contextRef.Call1(so)), nil
		}
		ref, err := g.addressofRef(so)
		if err != nil {
			return nil, err
		}
		return syclobj.UnsafeContextRef(ref), nil
	}
	// dpctl asks hasattr(syclobj, "_get_capsule"): only AttributeError
	// means "no"; any other exception of the lookup is the caller's.
	n := g.py.internedName("_get_capsule")
	if n == 0 {
		return nil, g.fetch("_get_capsule")
	}
	m, found := a.LookupAttr(so, n)
	if found < 0 {
		return nil, g.fetch("_get_capsule")
	}
	if found > 0 {
		s.keep = append(s.keep, m) // the bound method, called when the registry binds
		src := s.sourceState()
		return syclobj.FromCapsule(func() (syclobj.Obj, error) {
			if src.released {
				return nil, errReleased()
			}
			c := a.CallObject(m, 0)
			if c == 0 {
				return nil, g.fetch("_get_capsule()") // its own exception, as dpctl raises it
			}
			s.keep = append(s.keep, c)
			if a.Type(c) != a.CapsuleType {
				return nil, &usm.ReadError{Kind: errkind.Value, Found: "_get_capsule() returned " + g.objTypeName(Object{c}) + ", not a capsule"}
			}
			o, err := g.takeRefCapsule(c)
			if err != nil {
				return nil, &usm.ReadError{Kind: errkind.Value, Found: "_get_capsule()", Err: err}
			}
			return o, nil
		}), nil
	}
	return nil, &usm.ReadError{Kind: errkind.Value, Found: g.objTypeName(Object{so})}
}

// sourceState is what capsule sources of s check (see suaiDict.sources).
type sourceState struct{ released bool }

func (s *suaiDict) sourceState() *sourceState {
	if s.sources == nil {
		s.sources = &sourceState{}
	}
	return s.sources
}

func errReleased() error {
	return errkind.New(errkind.Value, "pybridge.SUAI", "the syclobj's capsule source was used after SUAI.Release")
}

// addressofRef returns so.addressof_ref() (a SyclQueue or SyclContext
// whose module exports no C-API function). A failure is the exception the
// lookup or the call raised.
func (g *GIL) addressofRef(so uintptr) (uintptr, error) {
	a := g.api()
	m := a.GetAttrC(so, cAddressofRef)
	if m == 0 {
		return 0, g.fetch("addressof_ref")
	}
	r := a.CallObject(m, 0)
	a.DecRef(m)
	if r == 0 {
		return 0, g.fetch("addressof_ref()")
	}
	defer a.DecRef(r)
	p, err := g.readPointer(r)
	if err != nil {
		return 0, errkind.Wrap(errkind.Type, "pybridge.SUAI", "its addressof_ref() did not return an address", err)
	}
	return uintptr(p), nil
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
	return nil, errkind.New(errkind.Value, "pybridge.SUAI", "its capsule is named "+errkind.Quote(name)+" (want a fresh \"SyclQueueRef\" or \"SyclContextRef\"; capsules are single-use)")
}

func quote(s string) string { return "\"" + s + "\"" }

// AsArray reads obj's SUAI and binds it with reg (nil: the registry of the
// interpreter's dpctl, which is imported if needed). The array's Owner
// keeps obj alive.
func (g *GIL) AsArray(obj Object, reg *usm.Registry) (*usm.Array, error) {
	s, err := g.readSUAI(obj)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		d, err := g.dpctlUnderGIL()
		if err != nil {
			s.Release(g)
			return nil, err
		}
		reg = d.Registry()
	}
	arr, _, err := g.bindSUAI(obj, s, reg, false)
	return arr, err
}

// bindSUAI is the rest of asArray, with s read from obj: it binds s with
// reg and releases s. The array's Owner holds obj; a NULL obj is a caller
// that keeps the object alive itself (no Owner). With keepSyclobj, so is
// the syclobj when it is a dpctl.SyclQueue or SyclContext (a new
// reference the caller owns), else zero.
func (g *GIL) bindSUAI(obj Object, s *suaiDict, reg *usm.Registry, keepSyclobj bool) (arr *usm.Array, so Object, err error) {
	return g.bindSUAIInto(obj, s, reg, keepSyclobj, nil, nil)
}

// bindSUAIInto is bindSUAI writing the Array to *dst with its Shape and
// Strides in dims (usm.Registry.ParseFieldsInto); a nil dst is
// bindSUAI's own allocation (usm.Registry.ParseFields).
func (g *GIL) bindSUAIInto(obj Object, s *suaiDict, reg *usm.Registry, keepSyclobj bool, dst *usm.Array, dims []int64) (arr *usm.Array, so Object, err error) {
	defer s.Release(g)
	if dst == nil {
		arr, err = reg.ParseFields(s)
	} else {
		arr, err = dst, reg.ParseFieldsInto(s, dst, dims)
	}
	if err != nil {
		return nil, Object{}, err
	}
	if !obj.isNil() {
		arr.Owner = g.py.newRef(obj)
	}
	if p := s.vals[keySyclobj]; keepSyclobj && p != 0 {
		if ty := g.dpctlTypes(); ty.queue != 0 && (g.api().Type(p) == ty.queue || g.api().Type(p) == ty.context) {
			g.api().IncRef(p)
			so = Object{p}
		}
	}
	return arr, so, nil
}

// dpctlUnderGIL is Python.Dpctl for a caller that holds the GIL. Until
// dpctl is loaded it waits with the GIL released: the import may be under
// way on another thread (inside Dpctl's sync.Once), and that import runs
// Python code that needs the GIL to finish. Waiting on the Once with the
// GIL held would deadlock both. loadDpctl takes the GIL again for itself
// (PyGILState_Ensure restores this thread's saved state).
func (g *GIL) dpctlUnderGIL() (*dpctl.Backend, error) {
	if d := g.py.loadedDpctl(); d != nil {
		return d, nil
	}
	a := g.api()
	ts := a.SaveThread()
	defer a.RestoreThread(ts)
	return g.py.Dpctl()
}
