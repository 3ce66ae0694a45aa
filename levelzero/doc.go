// Package levelzero is usmbridge's Level Zero backend: it binds Intel's
// Level Zero loader (libze_loader.so.1) without cgo, through
// its internal/zeapi and internal/ffi (purego), and implements the
// usm backend interfaces on it.
//
// # The API
//
// New initialises Level Zero and returns a Backend: every root device of
// every driver, one context per driver, and per device an immediate
// command list for copies and waits. It implements usm.Backend and
// usm.Allocator, copies (Copy) and gives queues (Queue), and shares memory
// between processes with IPC handles (GetIPCHandle, OpenIPCHandle,
// PutIPCHandle).
//
// Context and Queue are the native objects a program exchanges with a
// SYCL runtime: Native returns the ze_context_handle_t or the queue's
// handle; UnsafeBorrowContext, Context.UnsafeBorrowQueue and
// Context.UnsafeBorrowImmediateList take them in. Every object has an
// idempotent Close that waits for calls in progress; a closed object
// returns a usm.ErrValue error instead of reaching C, and a Backend's own
// context and queues are closed by the Backend.
//
// A failed call is an *Error naming the entry point and carrying its
// Status, the ze_result_t as an error (like syscall.Errno). Codes match
// usmbridge's error kinds: ZE_RESULT_ERROR_UNINITIALIZED, what zeInit
// returns when no driver is installed, is usm.ErrNotAvailable,
// out-of-memory codes are usm.ErrMemory, argument errors usm.ErrValue.
// Live counts the objects and allocations the package made that are still
// alive, for leak checks.
//
// # The binding
//
// internal/zeapi has one typed Go function per entry point, resolved once.
// Required symbols missing from the loader make Level Zero unavailable
// (the error names all of them); optional ones (zeInitDrivers,
// zeCommandListHostSynchronize, zeMemPutIpcHandle, all absent from Debian
// 12's loader 1.8.12) are looked up and used only when present. It holds
// the Go mirrors of the C structs, with explicit padding (purego does not
// align fields), which its tests compare with the installed headers.
//
// # Initialisation is once per process
//
// The loader initialises once per process and caches the result, failure
// included; New does the same. Variables that select drivers and layers
// (ZE_ENABLE_ALT_DRIVERS, ZE_ENABLE_VALIDATION_LAYER, ...) must be in the
// environment before the first call; os.Setenv works in both cgo modes.
//
// # Synchronising SYCL's native queues
//
// sycl::get_native(queue) returns a command queue or, with immediate
// command lists (the default on recent Intel GPUs), an immediate command
// list. Context.UnsafeBorrowQueue and Context.UnsafeBorrowImmediateList
// wrap them; their Wait uses zeCommandQueueSynchronize, or
// zeCommandListHostSynchronize where the loader has it and a barrier
// signalling a host-visible event otherwise (docs/native.md says why).
//
// # Thread safety
//
// Level Zero handles must not be used from two threads at once. Each
// wrapper serialises its own calls, and the Backend serialises work per
// device.
package levelzero
