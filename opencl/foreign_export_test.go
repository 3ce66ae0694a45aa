package opencl

// RawRetainContext does what SYCL's context::getNative() does on the
// OpenCL backend before handing the handle out: clRetainContext.
func RawRetainContext(h uintptr) error {
	l, _ := lib()
	return check("clRetainContext", call(l.RetainContext, h))
}
