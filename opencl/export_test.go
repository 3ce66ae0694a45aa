package opencl

// Test hooks: raw entry points that the public API deliberately hides.

// OpenLib opens a loader from a custom list of names.
var OpenLib = openLib

// RawFinish calls clFinish on a native queue with no wrapper at all: the
// baseline of the queue sync benchmark.
func RawFinish(h uintptr) Status {
	l, _ := lib()
	return Status(int32(call(l.Finish, h)))
}

// RawRetainQueue does what SYCL's get_native(queue) does before handing a
// queue out: clRetainCommandQueue.
func RawRetainQueue(h uintptr) error {
	l, _ := lib()
	return check("clRetainCommandQueue", call(l.RetainCommandQueue, h))
}
