package ffi

import "strconv"

// Fixed-arity calls for hot paths. Call's variadic slice escapes (its
// uintptrescapes directive keeps every argument's pointee alive by
// moving the slice to the heap), which costs one allocation per call;
// CallN takes its arguments as parameters, so with cgo a call allocates
// nothing (a kernel launch makes several native calls and must not
// allocate: docs/native.md, "Kernels"). Without cgo, purego's SyscallN
// allocates its own argument slice either way.

// Call0 is Call of 0 arguments.
//
//go:uintptrescapes
func (f Fn) Call0() uintptr { return call0(uintptr(f)) }

// Call1 is Call of 1 arguments.
//
//go:uintptrescapes
func (f Fn) Call1(a0 uintptr) uintptr { return call1(uintptr(f), a0) }

// Call2 is Call of 2 arguments.
//
//go:uintptrescapes
func (f Fn) Call2(a0, a1 uintptr) uintptr { return call2(uintptr(f), a0, a1) }

// Call3 is Call of 3 arguments.
//
//go:uintptrescapes
func (f Fn) Call3(a0, a1, a2 uintptr) uintptr { return call3(uintptr(f), a0, a1, a2) }

// Call4 is Call of 4 arguments.
//
//go:uintptrescapes
func (f Fn) Call4(a0, a1, a2, a3 uintptr) uintptr { return call4(uintptr(f), a0, a1, a2, a3) }

// Call5 is Call of 5 arguments.
//
//go:uintptrescapes
func (f Fn) Call5(a0, a1, a2, a3, a4 uintptr) uintptr { return call5(uintptr(f), a0, a1, a2, a3, a4) }

// Call6 is Call of 6 arguments.
//
//go:uintptrescapes
func (f Fn) Call6(a0, a1, a2, a3, a4, a5 uintptr) uintptr {
	return call6(uintptr(f), a0, a1, a2, a3, a4, a5)
}

// Call7 is Call of 7 arguments.
//
//go:uintptrescapes
func (f Fn) Call7(a0, a1, a2, a3, a4, a5, a6 uintptr) uintptr {
	return call7(uintptr(f), a0, a1, a2, a3, a4, a5, a6)
}

// Call8 is Call of 8 arguments.
//
//go:uintptrescapes
func (f Fn) Call8(a0, a1, a2, a3, a4, a5, a6, a7 uintptr) uintptr {
	return call8(uintptr(f), a0, a1, a2, a3, a4, a5, a6, a7)
}

// Call9 is Call of 9 arguments.
//
//go:uintptrescapes
func (f Fn) Call9(a0, a1, a2, a3, a4, a5, a6, a7, a8 uintptr) uintptr {
	return call9(uintptr(f), a0, a1, a2, a3, a4, a5, a6, a7, a8)
}

// Call10 is Call of 10 arguments.
//
//go:uintptrescapes
func (f Fn) Call10(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 uintptr) uintptr {
	return call10(uintptr(f), a0, a1, a2, a3, a4, a5, a6, a7, a8, a9)
}

// MaxStatusCalls is how many calls Status6Each makes at most.
const MaxStatusCalls = 4

// Status6Each calls f, a C function of six integer arguments that
// returns a 32-bit status (0: success), with each of the first n rows of
// args in turn, and stops at the first nonzero status: it returns that
// call's index (n if every call returned 0) and its status. With cgo the
// calls take one crossing into C between them, not one each: a query of
// several facts of one object (clGetMemAllocInfoINTEL's kind, base and
// size of an allocation) costs one transition. What the calls read or
// write through addresses in args must be C memory or Go heap memory kept
// alive until they return (runtime.KeepAlive), never a stack variable: a
// stack that grows on the way into C moves it, and the addresses, mere
// integers, do not follow.
//
//go:uintptrescapes
func (f Fn) Status6Each(args *[MaxStatusCalls][6]uintptr, n int) (int, int32) {
	if n < 0 || n > MaxStatusCalls {
		panic("ffi.Status6Each: n out of range")
	}
	return status6Each(uintptr(f), args, n)
}

// Call0Then calls f, a C function of no arguments that returns an int,
// and then g, another of no arguments, only if f returned nonzero: a
// check and the read it guards (whether the thread holds the GIL, then
// whether an exception is pending, which only a thread that holds it may
// ask) in one crossing into C with cgo. It returns f's int and g's
// result (0 where g was not called).
func (f Fn) Call0Then(g Fn) (int32, uintptr) { return call0Then(uintptr(f), uintptr(g)) }

// Call1Use calls f, a C function of one integer argument that returns a
// handle (0 for none), and, when it returned one, use and then release,
// C functions of that handle whose results are not read: a handle made,
// used and let go (an event submitted, waited for and deleted: a wait on
// a queue) in one crossing into C with cgo. It returns the handle, which
// is released already (0: f made none).
//
//go:uintptrescapes
func (f Fn) Call1Use(use, release Fn, a uintptr) uintptr {
	return call1Use(uintptr(f), uintptr(use), uintptr(release), a)
}

// StatusCall is one call of StatusSeq: Fn, a C function of up to six
// integer arguments that returns a 32-bit status (0: success), and its
// arguments (those the callee does not declare are ignored, as with
// Call).
type StatusCall struct {
	Fn   Fn
	Args [6]uintptr
}

// StatusSeq makes calls in order and stops at the first that returns a
// nonzero status: it returns that call's index (len(calls) if every call
// returned 0) and its status. With cgo the calls take one crossing into C
// between them, not one each: the native calls of a kernel launch (its
// changed arguments, the reset of its event, the append) cost one
// transition. Every call needs its function (a zero Fn panics). The rules
// of Status6Each hold for what the calls read or write through addresses
// in their arguments: C memory or Go heap memory kept alive until
// StatusSeq returns, never a stack variable. With cgo, C reads calls in
// place, which moves a slice on the stack to the heap: keep it with the
// memory its calls point to (a kernel's launch scratch).
func StatusSeq(calls []StatusCall) (int, int32) {
	for i := range calls {
		if calls[i].Fn == 0 {
			panic("ffi.StatusSeq: call " + strconv.Itoa(i) + " has no function")
		}
	}
	if len(calls) == 0 {
		return 0, 0
	}
	return statusSeq(calls)
}
