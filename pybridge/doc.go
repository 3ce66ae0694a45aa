// Package pybridge connects usmbridge to CPython, numpy and dpctl without
// cgo: it binds libpython with purego (internal/pyapi). It is the Python
// boundary's Go side, for a Go program that embeds Python and for Go code
// that Python loaded (package pyext and the extension modules built with
// it); RATIONALE.md, "Three layers", says what sits below it.
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
// A copy of host memory no backend knows (a NumPy array's) goes into the
// host backend's memory (cpu.Default).
//
// # dpctl
//
// Python.Dpctl imports the dpctl module, which loads the SYCL runtime and
// dpctl's C library, and opens that library as a dpctl.Backend, the
// backend the registries of AsArray and FromDLPack hold by default. What
// is Python's stays here: reading a dpctl.SyclQueue or SyclContext
// object's ref (the syclobj of a SUAI, a __dlpack__ stream), and a cache of
// up to eight SyclQueue objects, each holding its object and the pin of
// its ref in the Backend (dpctl.Backend.PinQueue), so that the next array
// on the same queue binds in one C call.
//
// # Hostile objects
//
// Whatever a Python object does, reading it must not crash the process,
// leak, or read freed memory. The SUAI reader (suaiDict) implements
// usm.Fields, the parser's reader, over the live objects: it holds a
// strong reference to every value it reads, reads tuples it holds and
// lists through a copy, reads ints by value (never through str()), and
// never converts a container generically, so Python code run meanwhile
// (__index__, __bool__, __getattr__, a key's __eq__, a finaliser) can
// neither free what Go reads nor make it recurse. The generic converter
// (FromGo, which SetMain uses) stops at 64 levels of nesting and at a
// container that contains itself (usm.ErrValue).
//
// # Go code that Python loaded
//
// An extension module (package pyext) also needs what no embedding
// program does: the interpreter of its process (Attach), raw PyObject*s in
// and out (UnsafeObject, Object.Ptr), Python exceptions both ways
// (ErrorOf, ExceptionOf, RaisedAsItself, ReleaseError), and the DLPack steps its C half leaves
// to Go (ImportCapsule, Export, DLPackOptions, WorkQueue). They are this
// package's API like the rest, one implementation each.
package pybridge
