// Package dlpack converts between usm.Array values and DLPack tensors
// (DLManagedTensorVersioned, DLPack 1.x, and the legacy DLManagedTensor)
// in C memory, without cgo.
//
// # Export
//
// Export builds the tensor in memory outside the Go heap (never a Go
// pointer handed to C) and registers it under a handle that manager_ctx
// carries. Two static deleters, one per layout, serve every tensor in the
// process: purego callbacks are a fixed resource that is never freed. A
// deleter may be called from any thread, exactly once; a repeated call is
// detected and ignored. See Export for the negotiation of max_version,
// dl_device and copy, and for the data/byte_offset convention. A copy is
// made by the array's backend; a copy of host memory no backend knows
// goes into the caller's ExportOptions.HostAllocator, since this package,
// part of the protocol core, imports no backend.
//
// ViewOf is the tensor such an export would hand out without a copy or a
// wait, checked by the same rules (one function serves both), for a
// caller that describes an array to C itself: an extension module's Array
// gets its view without a tensor built and deleted per Array.
//
// # Import
//
// Import reads a producer's tensor, validates every field before taking
// ownership, and returns a Tensor that calls the producer's deleter exactly
// once when its last reference is released.
//
// # Element types and flags
//
// Every DLPack dtype with whole-byte elements travels both ways: bool, the
// integers, float16/32/64, bfloat16, complex32/64/128 and the float8 codes
// (dtype.FromDataType); the sub-byte codes, vector types and opaque handles
// are refused with a usm.ErrBuffer error naming the DLPack dtype.
//
// Read-only is never dropped: a versioned tensor carries READ_ONLY both
// ways; a legacy DLManagedTensor, which has no flags, is imported
// read-only (it cannot say it is writable), as NumPy imports it, and a
// read-only array is refused as one, as NumPy refuses it (RATIONALE.md,
// "Read-only survives every format, or the format is refused").
//
// # Errors
//
// Errors are *Error values matching one of usm.ErrBuffer (data that cannot
// be exchanged), usm.ErrValue (an export of freed memory among them: it
// also matches usm.ErrClosed), usm.ErrType, usm.ErrOverflow (a layout
// whose byte count does not fit) or usm.ErrMemory; usm.PythonException
// names the exception the array API standard requires for each.
package dlpack
