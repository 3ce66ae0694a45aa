package pyext

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/pybridge"
)

// A Go function may return an iter.Seq[V] (or any func(yield func(V)
// bool)): Python gets an iterator over its values, each returned as a V
// result is. So a class's __iter__ is a method returning iter.Seq[V], and
// `for x in obj` runs the Go loop, one value per step. The iterator is an
// object of a class every such module has, _GoIterator, whose value runs
// the sequence in a goroutine of its own, a step per __next__, and whose
// Close stops it: an iterator dropped before its end ends the Go loop then
// (yield returns false; its deferred calls run).
//
// Not iter.Pull: its coroutine must be resumed on the OS thread that made
// it when that thread is locked, as every thread calling Go from C is, and
// Python hands an iterator from thread to thread (the runtime's fatal
// "coro: OS thread locking must match locking at coroutine creation"). A
// goroutine and two channels serve any thread; __next__ waits for it
// without the GIL, so that the sequence may call back into Python (Do),
// and a second thread's __next__ meanwhile is refused as Python refuses a
// generator already executing (ValueError), never waited for with the GIL.

// seqIter is the value of a _GoIterator object: one sequence, pulled.
type seqIter struct {
	mu   sync.Mutex // one step at a time
	pull *puller
	enc  func(c *frame, v any, r *result) error // a value as the sequence's V is returned
}

func (it *seqIter) Close() error {
	it.mu.Lock()
	defer it.mu.Unlock()
	it.pull.stop()
	return nil
}

// puller runs a sequence in a goroutine, one value per request: next asks
// for the next value and waits for it; stop makes the sequence's yield
// return false. Between two calls of next the goroutine waits in yield for
// the next request (or has ended). next and stop are not called at once
// (seqIter.mu).
type puller struct {
	seq      func(yield func(any) bool)
	req      chan bool // true: the next value; false: stop
	resp     chan any  // the values; closed when the sequence has returned
	started  bool
	finished bool
	stopped  atomic.Bool // set before stop's request: a yield after it returns false at once
	panicked any         // what the sequence panicked with, read once resp is closed
}

func newPuller(seq func(yield func(any) bool)) *puller {
	return &puller{seq: seq, req: make(chan bool), resp: make(chan any)}
}

func (p *puller) run() {
	defer func() {
		if v := recover(); v != nil {
			p.panicked = v
		}
		close(p.resp)
	}()
	if !<-p.req {
		return
	}
	p.seq(func(v any) bool {
		if p.stopped.Load() {
			return false
		}
		p.resp <- v
		return <-p.req
	})
}

// next is the sequence's next value, or false at its end; a panic of the
// sequence is its error (once).
func (p *puller) next(fn string) (any, bool, error) {
	if p.finished {
		return nil, false, nil
	}
	if !p.started {
		p.started = true
		go p.run()
	}
	p.req <- true
	v, ok := <-p.resp
	if !ok {
		p.finished = true
		if p.panicked != nil {
			return nil, false, userPanic(fn, p.panicked)
		}
		return nil, false, nil
	}
	return v, true, nil
}

// stop ends the sequence: its yield returns false, and the goroutine ends
// when the sequence returns (stop does not wait for that: a sequence that
// went on after yield said stop would hold the caller, and the GIL).
func (p *puller) stop() {
	if p.finished {
		return
	}
	p.finished = true
	if !p.started {
		return
	}
	p.stopped.Store(true)
	p.req <- false // the goroutine waits in yield for it
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
	encodeV := func(f *frame, x any, r *result) error {
		p := reflect.New(v)
		if x != nil {
			p.Elem().Set(reflect.ValueOf(x))
		}
		return ev(f, p.UnsafePointer(), r)
	}
	return func(f *frame, src unsafe.Pointer, r *result) error {
		seq := reflect.NewAt(t, src).Elem()
		if seq.IsNil() {
			r.kind = rNone
			return nil
		}
		// The sequence as one of any: each value is handed on as it is,
		// and encoded as a v.
		yieldType := t.In(0)
		anySeq := func(yield func(any) bool) {
			y := reflect.MakeFunc(yieldType, func(args []reflect.Value) []reflect.Value {
				return []reflect.Value{reflect.ValueOf(yield(args[0].Interface()))}
			})
			seq.Call([]reflect.Value{y})
		}
		it := &seqIter{pull: newPuller(anySeq), enc: encodeV}
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
	next := &function{name: cls.c.qual("__next__"), member: method(cls.c, "__next__"), releaseGIL: true}
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
		if !it.mu.TryLock() {
			return ValueError("the Go sequence's iterator is already executing (another thread's next)")
		}
		defer it.mu.Unlock()
		var v any
		var more bool
		if err := c.run(func() (err error) { v, more, err = it.pull.next(c.fn.name); return }); err != nil {
			return err // without the GIL: the sequence may call Python (Do)
		}
		if !more {
			return &pybridge.Exception{Type: "StopIteration"}
		}
		return it.enc(c, v, r)
	}
	m.add(next)
	return cls.c
}
