//go:build cgo

package ffi

// With cgo (an extension module is always built with it), an Fn is called
// through a C trampoline that passes fifteen integer arguments, as
// purego's SyscallN does: a callee reads the ones it declares and ignores
// the rest (the x86-64 and arm64 C calling conventions leave the others
// in registers or on the caller's stack). It is a plain cgo call of
// scalars, so nothing escapes and nothing is allocated per call; SyscallN
// allocates its argument slice and costs about twice as much
// (RATIONALE.md, "Native calls through cgo when cgo is on").

/*
#include <stdint.h>

typedef uintptr_t (*ffi_fn15)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
			      uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
			      uintptr_t);

static uintptr_t ffi_call15(uintptr_t fn, uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3, uintptr_t a4,
			    uintptr_t a5, uintptr_t a6, uintptr_t a7, uintptr_t a8, uintptr_t a9, uintptr_t a10,
			    uintptr_t a11, uintptr_t a12, uintptr_t a13, uintptr_t a14)
{
	return ((ffi_fn15)fn)(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14);
}

typedef int32_t (*ffi_status6)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

// ffi_status6_each calls fn with each row of args in turn, n rows of six,
// until one returns a nonzero status; it returns that row's index (n if
// none did) in the high 32 bits and its status in the low ones (an out
// parameter would put a Go variable on the heap on every call).
static int64_t ffi_status6_each(uintptr_t fn, const uintptr_t *args, int32_t n)
{
	for (int32_t k = 0; k < n; k++) {
		const uintptr_t *a = args + 6 * k;
		int32_t s = ((ffi_status6)fn)(a[0], a[1], a[2], a[3], a[4], a[5]);
		if (s != 0)
			return ((int64_t)k << 32) | (uint32_t)s;
	}
	return (int64_t)n << 32;
}

// ffi_status_seq makes n calls, each a row of seven words: a function of
// six arguments and the arguments, until one returns a nonzero status; it
// returns that row's index (n if none did) and its status as
// ffi_status6_each does.
static int64_t ffi_status_seq(const uintptr_t *rows, int32_t n)
{
	for (int32_t k = 0; k < n; k++) {
		const uintptr_t *r = rows + 7 * k;
		int32_t s = ((ffi_status6)r[0])(r[1], r[2], r[3], r[4], r[5], r[6]);
		if (s != 0)
			return ((int64_t)k << 32) | (uint32_t)s;
	}
	return (int64_t)n << 32;
}

// ffi_call0_then calls f, which returns a C int, and g only if f returned
// nonzero: both results (g's 0 when it was not called). Only f's int is
// read: the bits of the register above it are not the callee's to set.
typedef struct {
	int32_t f;
	uintptr_t g;
} ffi_pair;

static ffi_pair ffi_call0_then(uintptr_t f, uintptr_t g)
{
	ffi_pair r = {((int32_t(*)(void))f)(), 0};
	if (r.f != 0)
		r.g = ((uintptr_t(*)(void))g)();
	return r;
}

// ffi_call1_use calls f(a) and, when it returns a handle (nonzero), use
// then release with it: the handle, 0 if f made none.
static uintptr_t ffi_call1_use(uintptr_t f, uintptr_t use, uintptr_t release, uintptr_t a)
{
	uintptr_t h = ((uintptr_t(*)(uintptr_t))f)(a);
	if (h != 0) {
		((void (*)(uintptr_t))use)(h);
		((void (*)(uintptr_t))release)(h);
	}
	return h;
}
*/
import "C"

import (
	"unsafe"

	"github.com/ebitengine/purego"
)

// maxArgs is what the trampoline passes; more go through SyscallN.
const maxArgs = 15

// call is Fn.Call with cgo.
func call(fn uintptr, args []uintptr) uintptr {
	if len(args) > maxArgs {
		r, _, _ := purego.SyscallN(fn, args...)
		return r
	}
	var a [maxArgs]uintptr
	copy(a[:], args)
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a[0]), C.uintptr_t(a[1]), C.uintptr_t(a[2]),
		C.uintptr_t(a[3]), C.uintptr_t(a[4]), C.uintptr_t(a[5]), C.uintptr_t(a[6]), C.uintptr_t(a[7]),
		C.uintptr_t(a[8]), C.uintptr_t(a[9]), C.uintptr_t(a[10]), C.uintptr_t(a[11]), C.uintptr_t(a[12]),
		C.uintptr_t(a[13]), C.uintptr_t(a[14])))
}

// The fixed-arity calls (fixed.go) with cgo: the same trampoline, with
// the arguments a callee does not read left zero.

func call0(fn uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

func call1(fn uintptr, a0 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

func call2(fn uintptr, a0, a1 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

func call3(fn uintptr, a0, a1, a2 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), C.uintptr_t(a2), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

func call4(fn uintptr, a0, a1, a2, a3 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), C.uintptr_t(a2), C.uintptr_t(a3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

func call5(fn uintptr, a0, a1, a2, a3, a4 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), C.uintptr_t(a2), C.uintptr_t(a3), C.uintptr_t(a4), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

func call6(fn uintptr, a0, a1, a2, a3, a4, a5 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), C.uintptr_t(a2), C.uintptr_t(a3), C.uintptr_t(a4), C.uintptr_t(a5), 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

func call7(fn uintptr, a0, a1, a2, a3, a4, a5, a6 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), C.uintptr_t(a2), C.uintptr_t(a3), C.uintptr_t(a4), C.uintptr_t(a5), C.uintptr_t(a6), 0, 0, 0, 0, 0, 0, 0, 0))
}

func call8(fn uintptr, a0, a1, a2, a3, a4, a5, a6, a7 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), C.uintptr_t(a2), C.uintptr_t(a3), C.uintptr_t(a4), C.uintptr_t(a5), C.uintptr_t(a6), C.uintptr_t(a7), 0, 0, 0, 0, 0, 0, 0))
}

func call9(fn uintptr, a0, a1, a2, a3, a4, a5, a6, a7, a8 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), C.uintptr_t(a2), C.uintptr_t(a3), C.uintptr_t(a4), C.uintptr_t(a5), C.uintptr_t(a6), C.uintptr_t(a7), C.uintptr_t(a8), 0, 0, 0, 0, 0, 0))
}

func call10(fn uintptr, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 uintptr) uintptr {
	return uintptr(C.ffi_call15(C.uintptr_t(fn), C.uintptr_t(a0), C.uintptr_t(a1), C.uintptr_t(a2), C.uintptr_t(a3), C.uintptr_t(a4), C.uintptr_t(a5), C.uintptr_t(a6), C.uintptr_t(a7), C.uintptr_t(a8), C.uintptr_t(a9), 0, 0, 0, 0, 0))
}

// status6Each is Fn.Status6Each with cgo: every call in one crossing.
func status6Each(fn uintptr, args *[MaxStatusCalls][6]uintptr, n int) (int, int32) {
	r := int64(C.ffi_status6_each(C.uintptr_t(fn), (*C.uintptr_t)(unsafe.Pointer(&args[0][0])), C.int32_t(n)))
	return int(r >> 32), int32(uint32(r))
}

// A StatusCall is the row ffi_status_seq reads, seven words: the index
// is out of range, a compile error, otherwise.
var _ = [1]struct{}{}[unsafe.Sizeof(StatusCall{})-7*unsafe.Sizeof(uintptr(0))]

// statusSeq is StatusSeq with cgo: every call in one crossing.
func statusSeq(calls []StatusCall) (int, int32) {
	r := int64(C.ffi_status_seq((*C.uintptr_t)(unsafe.Pointer(&calls[0])), C.int32_t(len(calls))))
	return int(r >> 32), int32(uint32(r))
}

// call0Then is Fn.Call0Then with cgo: both calls in one crossing.
func call0Then(f, g uintptr) (int32, uintptr) {
	r := C.ffi_call0_then(C.uintptr_t(f), C.uintptr_t(g))
	return int32(r.f), uintptr(r.g)
}

// call1Use is Fn.Call1Use with cgo: the three calls in one crossing.
func call1Use(f, use, release, a uintptr) uintptr {
	return uintptr(C.ffi_call1_use(C.uintptr_t(f), C.uintptr_t(use), C.uintptr_t(release), C.uintptr_t(a)))
}
