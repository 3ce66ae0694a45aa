// Package usm is the centre of usmbridge: the __sycl_usm_array_interface__
// (SUAI) value and its parser, overflow-safe layout math, the interfaces
// that backends implement, and the Registry that binds pointers to the
// backends that own them.
//
// # SUAI
//
// Interface is the SUAI dict as a Go value. The parser applies dpctl's
// checks in dpctl's order, with the exception kinds dpctl raises, reading
// each field once, with the type it expects: Parse reads a dict of Go
// values, ParseJSON reads JSON text, pybridge reads live Python objects,
// and any other source implements Fields for ParseFields: one parser. No container is converted or walked
// generically, so values that contain themselves are just values of the
// wrong type. A malformed field is a *MalformedError naming it.
//
// Registry.Parse and pybridge's readers additionally check, at dpctl's
// step 6, that the pointer is a USM pointer of the context named by
// syclobj, and — where the backend can report the allocation's extent —
// that the array's bytes stay inside that allocation (an *ExtentError
// giving both ranges; no peer checks this). Map produces the dict back in
// the form dpctl emits.
//
// # Backends
//
// A Backend classifies pointers (QueryPointer: kind, device, allocation base
// and size); an Allocator also allocates, and hands its memory out as an
// Allocation made by NewAllocation. The module's backends are cpu, opencl,
// levelzero and dpctl; one written elsewhere is used the same way. What
// else a backend offers the registry and the typed copies (host copies, a
// default queue per device, SYCL context/queue references, its own DLPack
// device numbering) is found by method name; Backend's documentation
// lists the methods. Allocation is reference counted so that memory
// handed to a DLPack consumer outlives Free.
//
// A Queue is waited on; Order makes a consumer queue wait for a producer
// queue on the device where the producer's runtime accepts the consumer,
// and on the host only where nothing else is possible.
//
// # Errors
//
// Every error matches one kind with errors.Is — ErrValue, ErrType,
// ErrBuffer, ErrAttribute, ErrOverflow, ErrMemory, ErrNotAvailable,
// ErrNotSupported — and PythonException names the exception it maps to.
package usm
