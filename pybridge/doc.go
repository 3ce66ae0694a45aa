// Package pybridge connects usmbridge to CPython, numpy and dpctl without
// cgo: it binds libpython with purego (internal/pyapi) and dpctl's C
// library (internal/dpctlapi).
//
// Embed loads the libpython of a python executable (for example a virtual
// environment's) into a Go program. Every call into Python goes through
// Python.Do, which locks the OS thread and holds the GIL, so any number of
// goroutines may use the interpreter. With the GIL, Exec and Eval run
// Python code in __main__, SetMain passes Go values to it, and String and
// DecRef read and let go of what Eval returns: what an embedding program
// needs to make and inspect the arrays it exchanges.
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
// usm.Fields, the parser's reader, over the live objects: it holds a
// strong reference to every value it reads, reads tuples it holds and lists through a copy, reads ints by value (never
// through str()), and never converts a container generically, so Python
// code run meanwhile (__index__, __bool__, __getattr__, a key's __eq__, a
// finaliser) can neither free what Go reads nor make it recurse. The
// generic converters (SetMain's, and its inverse) stop at 64 levels of
// nesting and at a container that contains itself (usm.ErrValue).
//
// # The extension module
//
// The Go half of the Python package (pybridge/ext) also needs what no
// embedding program does: attaching to the interpreter that loads it,
// raising Go errors as Python exceptions, and the decisions its C fast
// paths replay. pybridge hands those to it through an internal package,
// pybridge/internal/extbridge, so they stay out of this API (RATIONALE.md,
// "The extension module reaches pybridge through an internal bridge").
package pybridge
