package pybridge

import (
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/internal/suaikeys"
	"github.com/usmbridge/usmbridge/usm"
)

var (
	cSUAI             = staticC("__sycl_usm_array_interface__")
	cQueueRef         = staticC("SyclQueueRef")
	cContextRef       = staticC("SyclContextRef")
	cUsedQueueRef     = staticC("used_SyclQueueRef")
	cUsedContextRef   = staticC("used_SyclContextRef")
	cAddressofRef     = staticC("addressof_ref")
	errNoSUAIAttrKind = errkind.Value
)

// The SUAI keys, in the order of the values suaiValues fetches and C
// hands over (internal/suaikeys).
const (
	keyData    = suaikeys.Data
	keyShape   = suaikeys.Shape
	keyStrides = suaikeys.Strides
	keyTypestr = suaikeys.Typestr
	keyOffset  = suaikeys.Offset
	keyVersion = suaikeys.Version
	keySyclobj = suaikeys.Syclobj
	numKeys    = suaikeys.N
)

var suaiKeyNames = suaikeys.Names

// SUAIDict is an object's __sycl_usm_array_interface__ as a caller that
// read the attribute itself found it, for ArrayFromSUAI and
// ReadSUAIArrayInto (pyext's C half, for an array argument and for
// asarray). Dict is the attribute's value. When Looked, Dict is exactly a
// dict (not a subclass) and Values holds its value at each of the keys
// "data", "shape", "strides", "typestr", "offset", "version" and
// "syclobj", in that order, looked up as dpctl's dict.get does (PyDict_GetItemWithError; a
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
