package pyext

// A call of a Go function, Go's side (call.c is C's): C binds and reads the
// arguments, and calls ubx_go_call once, with the GIL; the frame (frame.go)
// decodes them for the Go function and encodes its result. cgoHalf is what
// the frame needs of C during the call.

// #include <stdlib.h>
// #include "ubx.h"
// void *ubx_hold_array(void *call, int32_t i, void **exc);
// void ubx_hold_leak(void *call, int32_t i);
// void *ubx_save_thread(void);
// void ubx_restore_thread(void *ts);
import "C"

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
)

// cgoHalf is the C half as a call sees it.
type cgoHalf struct{}

func (cgoHalf) holdArray(call uintptr, i int) (uintptr, error) {
	var exc unsafe.Pointer
	p := uintptr(C.ubx_hold_array(cmem.Ptr(call), C.int32_t(i), &exc))
	if p == 0 {
		return 0, errorOf(exc)
	}
	return p, nil
}

func (cgoHalf) leakHold(call uintptr, i int) { C.ubx_hold_leak(cmem.Ptr(call), C.int32_t(i)) }

func (cgoHalf) saveThread() uintptr { return uintptr(C.ubx_save_thread()) }

func (cgoHalf) restoreThread(ts uintptr) { C.ubx_restore_thread(cmem.Ptr(ts)) }

func (cgoHalf) cString(s string) (uintptr, int64) {
	p := C.malloc(C.size_t(len(s) + 1))
	copy(unsafe.Slice((*byte)(p), len(s)), s)
	*(*byte)(unsafe.Add(p, len(s))) = 0
	return uintptr(p), int64(len(s))
}

func (cgoHalf) results(n int) []result {
	p := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(result{})))
	if p == nil {
		panic("pyext: out of C memory")
	}
	return unsafe.Slice((*result)(p), n)
}

func (cgoHalf) free(p uintptr) { C.free(cmem.Ptr(p)) }

//export ubx_go_call
func ubx_go_call(index C.int32_t, vals *C.ubx_value, n C.int32_t, res *C.ubx_result, call unsafe.Pointer) C.int {
	functionCalls++ // with the GIL
	f := ext.mod.funcs[index]
	c := getFrame()
	c.fn, c.c, c.py, c.call = f, cgoHalf{}, ext.py, uintptr(call)
	c.vals = unsafe.Slice((*value)(unsafe.Pointer(vals)), int(n))
	c.begin(int(n))
	r := (*result)(unsafe.Pointer(res))
	var err error
	func() {
		defer boundary.Recover(f.name, &err)
		boundary.Check(f.name)
		err = c.settle(r, f.call(c, r))
	}()
	c.adoptFresh(err == nil)
	c.end()
	// What the call's goroutines released without the GIL (kept views,
	// Python objects) goes now, as the call returns, rather than when the
	// releaser gets the GIL.
	ext.py.DropReleased()
	if err != nil {
		raise(err)
		return -1
	}
	return 0
}
