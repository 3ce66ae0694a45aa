package pybridge

import (
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

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
