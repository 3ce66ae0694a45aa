// Package usm is the centre of usmbridge: the __sycl_usm_array_interface__
// (SUAI) value and its parser, overflow-safe layout math, the interfaces
// that backends implement, the Registry that binds pointers to the
// backends that own them, and the array a Go program holds.
//
// # Arrays that own their memory
//
// NDArray[T] is one value that owns an array's memory, queue and layout,
// with one idempotent Close: Empty allocates one on a Device (which
// Registry.Devices lists and Registry.Device names by a filter
// selector), Adopt takes over an Array another library produced. Its
// views (Slice, Reshape, Transpose) share the memory and close with it;
// Elements, Raw, At, Set, CopyTo and CopyFrom read and write it; Arg
// passes it to a Kernel; Array describes it to the lower-level API below.
// A closed array refuses every use with ErrClosed.
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
// Every error usmbridge makes matches one kind with errors.Is — ErrValue,
// ErrType, ErrBuffer, ErrAttribute, ErrOverflow, ErrMemory,
// ErrNotAvailable, ErrNotSupported — and PythonException names the
// exception it maps to. Using an array whose memory is gone (a closed
// NDArray, an Array whose allocation was freed) is ErrClosed, of kind
// ErrValue.
package usm
