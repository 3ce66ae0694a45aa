package pybridge

import "strings"

// Calls of Python methods with keyword arguments in one C call
// (PyObject_VectorcallMethod), with the tuple of keyword names made once
// per set of names and kept for the life of the process (as the str
// objects of internedName are): FromDLPack's __dlpack__ call made its
// bound method, a tuple and a dict of its keywords on every call before.

// kwnames returns the tuple of the str objects of names (kept; a borrowed
// reference), or 0 with an exception set.
func (g *GIL) kwnames(names []string) uintptr {
	key := "\x00kwnames:" + strings.Join(names, ",")
	if o := g.py.internedObject(key); o != 0 {
		return o
	}
	a := g.api()
	t := a.TupleNew(len(names))
	if t == 0 {
		return 0
	}
	for i, n := range names {
		s := g.py.internedName(n)
		if s == 0 {
			a.DecRef(t)
			return 0
		}
		a.IncRef(s)
		a.TupleSetItem(t, i, s) // steals the reference just taken
	}
	return g.py.keepObject(key, t)
}

// callMethodKw calls x.name(**kw), kw the names and the values (borrowed
// references) in order; a new reference, or the exception it raised.
func (g *GIL) callMethodKw(x Object, name string, names []string, vals []uintptr) (Object, error) {
	n := g.py.internedName(name)
	if n == 0 {
		return Object{}, g.fetch(name)
	}
	var kw uintptr
	if len(names) > 0 {
		if kw = g.kwnames(names); kw == 0 {
			return Object{}, g.fetch(name)
		}
	}
	args := make([]uintptr, 1, 1+len(vals))
	args[0] = x.p
	args = append(args, vals...)
	r := g.api().VectorcallMethod(n, args, 1, kw)
	if r == 0 {
		return Object{}, g.fetch("")
	}
	return Object{r}, nil
}
