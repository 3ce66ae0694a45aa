// Package levelzero is usmbridge's Level Zero backend: it binds Intel's
// Level Zero loader (libze_loader.so.1) without cgo, through
// internal/ffi (purego), and implements the usm backend interfaces on it.
//
// # Layers
//
//   - internal/zeapi binds the loader through internal/ffi: one typed Go
//     function per entry point, resolved once. Required symbols missing
//     from the loader make Level Zero unavailable (all of them are named
//     in the error); optional ones (zeInitDrivers,
//     zeCommandListHostSynchronize, zeMemPutIpcHandle, all absent from
//     Debian 12's loader 1.8.12) are looked up and used only when
//     present. It holds the Go mirrors of the C structs, with explicit
//     padding (purego does not align fields), which its tests compare
//     with the installed headers.
//   - Driver, Device, Context, CommandQueue, CommandList, EventPool, Event
//     and IPCMapping wrap native handles. Only this package creates them,
//     from successful native calls, so callers cannot forge a handle that
//     would crash the driver; a nil or destroyed object returns an error
//     instead of reaching C, and Close is idempotent. Handles a SYCL
//     runtime hands out enter only through the explicitly named
//     Unsafe* functions.
//   - Backend implements usm.Backend, usm.Allocator, usm.Copier and
//     usm.QueueProvider.
//
// # Errors
//
// A failed call is an *Error naming the entry point and carrying the
// ze_result_t as a Status, a numeric error type with the C names (like
// syscall.Errno). Results match usmbridge's error kinds:
// ZE_RESULT_ERROR_UNINITIALIZED, what zeInit returns when no driver is
// installed, is errkind.NotAvailable ("runtime not available", exported as
// usm.ErrNotAvailable), out-of-memory codes are usm.ErrMemory, argument
// errors usm.ErrValue.
//
// # Initialisation is once per process
//
// The loader initialises once per process and caches the result, failure
// included. Init does the same. Variables that select drivers and layers
// (ZE_ENABLE_ALT_DRIVERS, ZE_ENABLE_VALIDATION_LAYER, ...) must be in the
// environment before the first call; os.Setenv works in both cgo modes.
//
// # Synchronising SYCL's native queues
//
// sycl::get_native(queue) returns a command queue or, with immediate
// command lists (the default on recent Intel GPUs), an immediate command
// list. Context.UnsafeCommandQueue and Context.UnsafeImmediateCommandList
// wrap them; their Wait uses zeCommandQueueSynchronize, or
// zeCommandListHostSynchronize where the loader has it and a barrier
// signalling a host-visible event otherwise.
//
// # Thread safety
//
// Level Zero handles must not be used from two threads at once. Each
// wrapper serialises its own calls (events excepted: one goroutine may
// wait on an event while another signals it), and the Backend serialises
// work per device.
package levelzero
