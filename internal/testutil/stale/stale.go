// Package stale is the use-after-free case of every backend's tests: a
// package of its own, since it imports dlpack, whose own dependencies'
// tests import testutil.
package stale

import (
	"errors"
	"fmt"
	"testing"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/usm"
)

// Access is the use-after-free case every backend runs in a child
// process: arr is a float32 array over an allocation of the backend that
// has just been freed, and fresh an array the backend allocated since
// (over the same address, where its allocator reuses it), filled with
// 1s. Every use of arr must be refused with usm.ErrClosed, and fresh must
// still hold its 1s. Before the check, the writes landed in the freed
// memory or in fresh, and the reads read it: a corrupted heap abort on
// OpenCL, fresh's elements overwritten on the cpu backend.
//
// It prints "stale array refused" when every use was refused; each use
// that was not is an error of tb, naming it.
//
// k, when not nil, is testdata/kernels.cl's fill on queue q: a launch
// with arr as its array argument must be refused too.
func Access(tb testing.TB, arr, fresh *usm.Array, k *usm.Kernel, q usm.Queue) {
	tb.Helper()
	n := 1
	for _, s := range arr.Shape {
		n *= int(s)
	}
	refused := func(what string, err error) {
		tb.Helper()
		if !errors.Is(err, usm.ErrClosed) || !errors.Is(err, usm.ErrValue) {
			tb.Errorf("%s of a freed array: %v, want an error matching usm.ErrClosed and usm.ErrValue", what, err)
		}
	}
	nines := make([]float32, n)
	for i := range nines {
		nines[i] = 9
	}
	refused("usm.CopyFromSlice", usm.CopyFromSlice(arr, nines))
	refused("usm.CopyToSlice", usm.CopyToSlice(make([]float32, n), arr))
	_, err := usm.View[float32](arr)
	refused("usm.View", err)
	_, err = usm.At[float32](arr, 0)
	refused("usm.At", err)
	_, err = usm.Values[float32](arr)
	refused("usm.Values", err)
	_, err = arr.Bytes()
	refused("Array.Bytes", err)
	if arr.DLDevice.Type == dlpack.OneAPI {
		_, err = arr.SUAI()
		refused("Array.SUAI", err)
	}
	for _, opts := range []dlpack.ExportOptions{
		{MaxVersion: &dlpack.Version{Major: 1}},
		{MaxVersion: &dlpack.Version{Major: 1}, Copy: dlpack.CopyAlways}, // the copy read the freed memory
		{MaxVersion: &dlpack.Version{Major: 1}, Device: &dlpack.Device{Type: dlpack.CPU}},
	} {
		m, err := dlpack.Export(arr, opts)
		if err == nil {
			m.Delete()
		}
		refused(fmt.Sprintf("dlpack.Export(copy=%v, device=%v)", opts.Copy, opts.Device), err)
	}
	_, err = dlpack.ViewOf(arr)
	refused("dlpack.ViewOf", err)
	if k != nil {
		_, err = k.Launch(q, usm.NDRange(n), nil, usm.ArrayArg(arr), usm.Scalar(float32(9))) // kernels.cl's fill
		refused("a kernel launch", err)
	}
	got := make([]float32, n)
	if err := usm.CopyToSlice(got, fresh); err != nil {
		tb.Fatalf("reading the fresh array: %v", err)
	}
	for i, v := range got {
		if v != 1 {
			tb.Fatalf("element %d of the array allocated after the Free is %v, want 1: a stale array wrote into it", i, v)
		}
	}
	if !tb.Failed() {
		fmt.Println("stale array refused")
	}
}
