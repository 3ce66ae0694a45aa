// Package usm is the centre of usmbridge: the __sycl_usm_array_interface__
// (SUAI) value and its parser, overflow-safe layout math, the interfaces
// that backends implement, and the Registry that binds pointers to the
// backends that own them.
//
// # SUAI
//
// Interface is the SUAI dict as a Go value. Parse reads the generic decoded
// form that the Python bridge and JSON hand over and applies dpctl's checks
// in dpctl's order, with the exception kinds dpctl raises. Registry.Parse
// additionally checks, at dpctl's step 6, that the pointer is a USM pointer
// of the context named by syclobj, and — where the backend can report the
// allocation's extent — that the array's bytes stay inside that allocation
// (an *ExtentError giving both ranges; no peer checks this). Map produces
// the dict back in the form dpctl emits.
//
// # Backends
//
// A Backend classifies pointers (QueryPointer: kind, device, allocation base
// and size). Optional interfaces add allocation (Allocator), copies
// (Copier), queues (QueueProvider), SYCL context/queue references
// (RefBinder) and device numbering (DLPackDevicer). Allocation is reference
// counted so that memory handed to a DLPack consumer outlives Free.
//
// # Errors
//
// Every error matches one kind with errors.Is — ErrValue, ErrType,
// ErrBuffer, ErrAttribute, ErrOverflow, ErrMemory, ErrNotAvailable,
// ErrNotSupported — and PythonException names the exception it maps to.
package usm
