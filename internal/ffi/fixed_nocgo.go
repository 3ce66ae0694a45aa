//go:build !cgo

package ffi

import "github.com/ebitengine/purego"

// The fixed-arity calls without cgo: purego's SyscallN.

func call0(fn uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn)
	return r
}

func call1(fn uintptr, a0 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0)
	return r
}

func call2(fn uintptr, a0, a1 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1)
	return r
}

func call3(fn uintptr, a0, a1, a2 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1, a2)
	return r
}

func call4(fn uintptr, a0, a1, a2, a3 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1, a2, a3)
	return r
}

func call5(fn uintptr, a0, a1, a2, a3, a4 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1, a2, a3, a4)
	return r
}

func call6(fn uintptr, a0, a1, a2, a3, a4, a5 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1, a2, a3, a4, a5)
	return r
}

func call7(fn uintptr, a0, a1, a2, a3, a4, a5, a6 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1, a2, a3, a4, a5, a6)
	return r
}

func call8(fn uintptr, a0, a1, a2, a3, a4, a5, a6, a7 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1, a2, a3, a4, a5, a6, a7)
	return r
}

func call9(fn uintptr, a0, a1, a2, a3, a4, a5, a6, a7, a8 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1, a2, a3, a4, a5, a6, a7, a8)
	return r
}

func call10(fn uintptr, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9)
	return r
}

// status6Each is Fn.Status6Each without cgo: one SyscallN per call.
func status6Each(fn uintptr, args *[MaxStatusCalls][6]uintptr, n int) (int, int32) {
	for k := range n {
		a := &args[k]
		r, _, _ := purego.SyscallN(fn, a[0], a[1], a[2], a[3], a[4], a[5])
		if s := int32(uint32(r)); s != 0 {
			return k, s
		}
	}
	return n, 0
}

// statusSeq is StatusSeq without cgo: one SyscallN per call.
func statusSeq(calls []StatusCall) (int, int32) {
	for k := range calls {
		c := &calls[k]
		a := &c.Args
		r, _, _ := purego.SyscallN(uintptr(c.Fn), a[0], a[1], a[2], a[3], a[4], a[5])
		if s := int32(uint32(r)); s != 0 {
			return k, s
		}
	}
	return len(calls), 0
}

// call0Then is Fn.Call0Then without cgo: two SyscallN.
func call0Then(f, g uintptr) (int32, uintptr) {
	r, _, _ := purego.SyscallN(f)
	if int32(uint32(r)) == 0 {
		return 0, 0
	}
	r2, _, _ := purego.SyscallN(g)
	return int32(uint32(r)), r2
}

// call1Use is Fn.Call1Use without cgo: three SyscallN.
func call1Use(f, use, release, a uintptr) uintptr {
	h, _, _ := purego.SyscallN(f, a)
	if h != 0 {
		purego.SyscallN(use, h)
		purego.SyscallN(release, h)
	}
	return h
}
