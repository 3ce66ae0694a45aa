// Package pybridge connects usmbridge to CPython, numpy and dpctl without
// cgo: it binds libpython with purego (internal/pyapi) and dpctl's C
// library (internal/dpctlapi).
//
// Embed loads the libpython of a python executable (for example a virtual
// environment's) into a Go program; Attach finds the interpreter of the
// Python process that loaded the Go code. Every call into Python goes
// through Python.Do, which locks the OS thread and holds the GIL, so any
// number of goroutines may use the interpreter.
//
// With the GIL, AsArray reads __sycl_usm_array_interface__ from any
// object (every syclobj form,
// dpctl's rules), FromDLPack consumes __dlpack__ from any producer, and
// ToDLPack makes "dltensor" and "dltensor_versioned" capsules of Go arrays.
// The Dpctl backend is dpctl's SYCL runtime as a usm.Backend.
//
// # Hostile objects
//
// Whatever a Python object does, reading it must not crash the process,
// leak, or read freed memory. The SUAI reader (suaiDict) implements
// suaifields.Fields (usm parser) over the live objects: it holds a strong reference to every value it reads, reads
// tuples it holds and lists through a copy, reads ints by value (never
// through str()), and never converts a container generically, so Python
// code run meanwhile (__index__, __bool__, __getattr__, a key's __eq__, a
// finaliser) can neither free what Go reads nor make it recurse. FromGo
// and its inverse, the generic converters, stop at 64 levels of nesting and at a
// container that contains itself (usm.ErrValue).
package pybridge
