package opencl

import "github.com/usmbridge/usmbridge/opencl/internal/clapi"

// Test hooks: raw entry points that the public API deliberately hides.

// OpenLib opens a loader from a custom list of names.
var OpenLib = openLib

// RawFinish calls clFinish on a native queue through the typed binding
// only: the baseline of the queue sync benchmark.
func RawFinish(h uintptr) error {
	l, _ := lib()
	return l.Finish(clapi.Queue(h))
}

// RawRetainQueue does what SYCL's get_native(queue) does before handing a
// queue out: clRetainCommandQueue.
func RawRetainQueue(h uintptr) error {
	l, _ := lib()
	return l.RetainCommandQueue(clapi.Queue(h))
}
