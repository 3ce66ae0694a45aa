package pyext

import (
	"iter"
	"reflect"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/pybridge"
)

// A Go function may return an iter.Seq[V] (or any func(yield func(V)
// bool)): Python gets an iterator over its values, each returned as a V
// result is. So a class's __iter__ is a method returning iter.Seq[V], and
// `for x in obj` runs the Go loop, one value per step. The iterator is an
// object of a class every such module has, _GoIterator, whose value pulls
// the sequence (iter.Pull) and whose Close stops it: an iterator dropped
// before its end ends the Go loop then (its deferred calls run).

// seqIter is the value of a _GoIterator object: the pull of one sequence.
type seqIter struct {
	next func(c *frame, r *result) (bool, error) // the next value, encoded; false at the end
	stop func()
}

func (it *seqIter) Close() error {
	it.stop()
	return nil
}

// iterClassName is the name of the iterators' class (reservedNames).
const iterClassName = "_GoIterator"

// isSeq reports whether t is a sequence's type, func(yield func(V) bool),
// and returns V.
func isSeq(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Func || t.NumIn() != 1 || t.NumOut() != 0 || t.IsVariadic() {
		return nil, false
	}
	y := t.In(0)
	if y.Kind() != reflect.Func || y.NumIn() != 1 || y.NumOut() != 1 || y.Out(0) != reflect.TypeFor[bool]() || y.IsVariadic() {
		return nil, false
	}
	return y.In(0), true
}

// seqEncoder returns a sequence of type t, of values of type v, as an
// iterator object (making the module's iterator class the first time).
func (m *Module) seqEncoder(t, v reflect.Type) (encoder, bool) {
	ev, ok := m.encoderOf(v)
	if !ok {
		return nil, false
	}
	c := m.iterClass()
	enc := instanceEncoder(c)
	return func(f *frame, src unsafe.Pointer, r *result) error {
		seq := reflect.NewAt(t, src).Elem()
		if seq.IsNil() {
			r.kind = rNone
			return nil
		}
		// The sequence as an iter.Seq[any]: the pull hands each value
		// back as it is, encoded as a v.
		yieldType := t.In(0)
		anySeq := func(yield func(any) bool) {
			y := reflect.MakeFunc(yieldType, func(args []reflect.Value) []reflect.Value {
				return []reflect.Value{reflect.ValueOf(yield(args[0].Interface()))}
			})
			seq.Call([]reflect.Value{y})
		}
		next, stop := iter.Pull(anySeq)
		it := &seqIter{stop: stop, next: func(c *frame, r *result) (bool, error) {
			x, ok := next()
			if !ok {
				return false, nil
			}
			p := reflect.New(v)
			if x != nil {
				p.Elem().Set(reflect.ValueOf(x))
			}
			return true, ev(c, p.UnsafePointer(), r)
		}}
		return enc(f, unsafe.Pointer(&it), r)
	}, true
}

// iterClass is the module's class of iterators, made with its first
// sequence result: __next__ pulls the next value (StopIteration at the
// end), __iter__ is the iterator itself.
func (m *Module) iterClass() *class {
	t := reflect.TypeFor[*seqIter]()
	if c := m.classOf(t); c != nil {
		return c
	}
	cls := NewClass[seqIter](m, iterClassName, "An iterator over the values of a Go sequence (iter.Seq).")
	cls.c.hidden = true
	Method0R(cls, "__iter__", "", func(it *seqIter) (*seqIter, error) { return it, nil })
	next := &function{name: cls.c.qual("__next__"), member: method(cls.c, "__next__")}
	dec := instanceDecoder(cls.c)
	next.params = []paramSpec{{name: "self", kind: dec.kind, class: dec.class, typ: dec.typ, flags: fPosOnly | fSelf}}
	next.wants, next.types = []dlabi.DataType{{}}, []string{dec.typ}
	next.results = []reflect.Type{reflect.TypeFor[pybridge.Object]()}
	next.doc = signature("__next__", next.params)
	next.call = func(c *frame, r *result) error {
		var it *seqIter
		if err := dec.into(c, 0, unsafe.Pointer(&it)); err != nil {
			return err
		}
		var more bool
		var err error
		if e := c.run(func() error { more, err = it.next(c, r); return nil }); e != nil {
			return e
		}
		if err == nil && !more {
			return &pybridge.Exception{Type: "StopIteration"}
		}
		return err
	}
	m.add(next)
	return cls.c
}
