package pybridge

// Readers of Python objects that only the tests use: reference counts,
// attributes, ints, plain data converted to Go (goValue, which evalGo and
// the hostile-object tests read results with), and a SUAI parsed without
// binding.

import (
	"math"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/usm"
)

// runMode reports how the interpreter was found.
func (py *Python) runMode() interpMode { return py.mode }

// refCount returns the reference count (for leak tests).
func (g *GIL) refCount(o Object) int { return g.api().RefCount(o.p) }

// hasAttr reports whether o has the attribute (AttributeError counts as
// no; another exception fails the test's caller through the one left set).
func (g *GIL) hasAttr(o Object, name string) bool {
	n := g.py.internedName(name)
	v, r := g.api().LookupAttr(o.p, n)
	g.api().DecRef(v)
	return r > 0
}

// toInt converts a Python int (or an object with __index__) to int64.
func (g *GIL) toInt(o Object) (int64, error) {
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

// goValue converts plain data to Go: None → nil, bool, int → int64 (uint64
// above MaxInt64; larger ints are an ErrOverflow error), float → float64,
// str → string, tuple and list → []any, dict with str keys →
// map[string]any. Other objects are a usm.ErrType error. A container that
// contains itself, or nesting deeper than 64 containers, is a
// usm.ErrValue error. Lists are read as a copy taken when goValue reaches
// them, and ints by value (never through str()), so Python code that runs
// meanwhile (a dict subclass's items(), a finaliser) cannot free what goValue
// reads.
func (g *GIL) goValue(o Object) (any, error) {
	var path [maxNesting]uintptr
	return g.toGo(o.p, path[:0])
}

// toGo converts o; path holds the containers being converted, outermost
// first.
func (g *GIL) toGo(o uintptr, path []uintptr) (any, error) {
	a := g.api()
	switch o {
	case a.None:
		return nil, nil
	case a.True:
		return true, nil
	case a.False:
		return false, nil
	}
	t := a.Type(o)
	flags := a.TypeFlags(t)
	switch {
	case flags&pyapi.TPFlagsLongSubclass != 0:
		return g.pyInt(o)
	case t == a.FloatType:
		return a.FloatAsDouble(o), nil
	case flags&pyapi.TPFlagsUnicodeSubclass != 0:
		s, ok := a.UnicodeAsString(o)
		if !ok {
			return nil, g.fetch("str")
		}
		return s, nil
	case flags&(pyapi.TPFlagsTupleSubclass|pyapi.TPFlagsListSubclass|pyapi.TPFlagsDictSubclass) == 0:
		return nil, errkind.New(errkind.Type, "pybridge.ToGo", "cannot convert "+g.typeName(t)+" to Go")
	}
	for _, p := range path {
		if p == o {
			return nil, errkind.New(errkind.Value, "pybridge.ToGo", "a "+g.typeName(t)+" contains itself")
		}
	}
	if len(path) == maxNesting {
		return nil, errkind.New(errkind.Value, "pybridge.ToGo", "containers nested deeper than "+itoa(maxNesting))
	}
	path = append(path, o)
	if flags&pyapi.TPFlagsDictSubclass != 0 {
		return g.dictToGo(Object{o}, path)
	}
	// A tuple's items cannot change while it lives (the caller holds it);
	// a list is copied first.
	seq := o
	if flags&pyapi.TPFlagsListSubclass != 0 {
		if seq = a.ListAsTuple(o); seq == 0 {
			return nil, g.fetch("tuple(list)")
		}
		defer a.DecRef(seq)
	}
	n := a.SeqSize(seq)
	out := make([]any, n)
	for i := range n {
		v, err := g.toGo(a.TupleItem(seq, i), path)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// dictToGo converts a dict (or dict subclass) through tuple(d.items()),
// which holds every key and value, unchangeably, while they are converted.
func (g *GIL) dictToGo(o Object, path []uintptr) (any, error) {
	a := g.api()
	items, err := g.callMethod(o, "items", nil, nil)
	if err != nil {
		return nil, err
	}
	defer g.DecRef(items)
	tup, err := g.call(Object{a.TupleType}, []any{items}, nil)
	if err != nil {
		return nil, err
	}
	defer g.DecRef(tup)
	m := map[string]any{}
	for i := range a.SeqSize(tup.p) {
		kv := a.TupleItem(tup.p, i)
		if a.Type(kv) != a.TupleType || a.SeqSize(kv) != 2 {
			return nil, errkind.New(errkind.Type, "pybridge.ToGo", "items() of "+g.objTypeName(o)+" did not give pairs")
		}
		k := a.TupleItem(kv, 0)
		if !a.HasFlag(k, pyapi.TPFlagsUnicodeSubclass) {
			return nil, errkind.New(errkind.Type, "pybridge.ToGo", "dict key is not a str")
		}
		ks, ok := a.UnicodeAsString(k)
		if !ok {
			return nil, g.fetch("str")
		}
		v, err := g.toGo(a.TupleItem(kv, 1), path)
		if err != nil {
			return nil, err
		}
		m[ks] = v
	}
	return m, nil
}

// pyInt converts an int (or int subclass, whose value is read without
// running its code): int64, else uint64, else an ErrOverflow error.
func (g *GIL) pyInt(o uintptr) (any, error) {
	a := g.api()
	if v, ok := a.LongValue(o); ok {
		return v, nil
	}
	v, of := a.LongAsInt64Overflow(o)
	switch {
	case of == 0 && v == -1 && a.ErrOccurred() != 0:
		return nil, g.fetch("int")
	case of == 0:
		return v, nil
	case of > 0:
		if u := a.LongAsUint64(o); u != math.MaxUint64 || a.ErrOccurred() == 0 {
			return u, nil
		}
		a.ErrClear()
		return nil, errkind.New(errkind.Overflow, "pybridge", "int ≥ 2**64 does not fit in 64 bits")
	}
	return nil, errkind.New(errkind.Overflow, "pybridge", "int < -2**63 does not fit in 64 bits")
}

// parseSUAI reads obj's SUAI and parses it (usm.ParseFields): dpctl's
// checks without binding the pointer to a backend.
func (g *GIL) parseSUAI(obj Object) (usm.Interface, error) {
	s, err := g.readSUAI(obj)
	if err != nil {
		return usm.Interface{}, err
	}
	defer s.Release(g)
	return usm.ParseFields(s)
}
