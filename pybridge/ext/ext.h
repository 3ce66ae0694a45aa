/*
 * ext.h: what the Go half (main.go) and the C half (ext.c) of the
 * usmbridge extension module share. No Python.h here: Go includes this
 * file, and Go must build without Python's headers.
 *
 * The DLPack structs are the 1.x C ABI (dlpack.h), written from the
 * specification; layout_test.go checks them against internal/dlabi.
 */
#ifndef USMBRIDGE_EXT_H
#define USMBRIDGE_EXT_H

#include <stdint.h>

typedef struct {
	int32_t device_type;
	int32_t device_id;
} ub_dl_device;

typedef struct {
	uint8_t code;
	uint8_t bits;
	uint16_t lanes;
} ub_dl_dtype;

typedef struct {
	void *data;
	ub_dl_device device;
	int32_t ndim;
	ub_dl_dtype dtype;
	int64_t *shape;
	int64_t *strides;
	uint64_t byte_offset;
} ub_dl_tensor;

typedef struct ub_dl_managed {
	ub_dl_tensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct ub_dl_managed *self);
} ub_dl_managed;

typedef struct {
	uint32_t major;
	uint32_t minor;
} ub_dl_version;

typedef struct ub_dl_managed_versioned {
	ub_dl_version version;
	void *manager_ctx;
	void (*deleter)(struct ub_dl_managed_versioned *self);
	uint64_t flags;
	ub_dl_tensor dl_tensor;
} ub_dl_managed_versioned;

/*
 * The DLPack C exchange API table, DLPackExchangeAPI of dlpack.h 1.3
 * (pybridge.ExchangeAPI in Go; layout_test.go holds the two together).
 * Every function returns 0, or -1 with a Python exception set; the
 * allocator reports through SetError instead.
 */
typedef struct ub_dl_exchange_header {
	ub_dl_version version;
	struct ub_dl_exchange_header *prev_api;
} ub_dl_exchange_header;

typedef struct {
	ub_dl_exchange_header header;
	int (*managed_tensor_allocator)(ub_dl_tensor *prototype, ub_dl_managed_versioned **out, void *error_ctx,
					void (*SetError)(void *error_ctx, const char *kind, const char *message));
	int (*managed_tensor_from_py_object_no_sync)(void *py_object, ub_dl_managed_versioned **out);
	int (*managed_tensor_to_py_object_no_sync)(ub_dl_managed_versioned *tensor, void **out_py_object);
	int (*dltensor_from_py_object_no_sync)(void *py_object, ub_dl_tensor *out);
	int (*current_work_stream)(int32_t device_type, int32_t device_id, void **out_current_stream);
} ub_dl_exchange_api;

/*
 * ub_template is a DLPack export of an array that C may repeat without
 * asking Go: Go fills it once (ub_template_fill) from dlpack.Export's own
 * result, so the layout rules (data at element 0, byte_offset under
 * negative strides, flags) have one implementation. shape and strides
 * point into one malloc'd block of 2*ndim int64 that the array owns; the
 * exported tensors point at it too, since each keeps the array alive.
 *
 * An array with a queue has a template too, made without waiting on the
 * queue: __dlpack__ may repeat it for stream None only where Go's export
 * would not wait (dlpack_fast: arrays without a queue), and for
 * stream=-1, the array API's "do not synchronize", where Go accepts that
 * stream (no_sync_ok: kDLOneAPI arrays; for kDLCPU it is Go's
 * RuntimeError). The C exchange API repeats it after waiting on the
 * array's queue where Go says so (exchange_wait).
 */
/* Requests max_version=(1, k) for k below this are answered from
 * ub_template.minor_for; a larger k goes to Go. */
#define UB_MINOR_SLOTS 8

typedef struct {
	ub_dl_tensor tensor;
	uint64_t flags;         /* of a versioned export */
	uint32_t minor;         /* the minor of a versioned export for max_version >= (2, 0), and of the exchange API's */
	uint32_t minor_for[UB_MINOR_SLOTS]; /* the minor for max_version=(1, k) (dlabi.NegotiateVersion) */
	int32_t legacy_ok;      /* 0: a legacy export must be refused (read-only) */
	int32_t no_sync_ok;     /* 1: stream=-1 may be answered from the template */
	int32_t dlpack_fast;    /* 1: __dlpack__ may replay it (Export would not wait) */
	int32_t exchange_wait;  /* 1: a no-sync exchange must first wait (ub_wait) */
} ub_template;

/*
 * ub_ledger is exportledger.Ledger (internal/exportledger), the export record Go owns
 * and C shares: the two block states and the one set of export counters,
 * which Go's exports and C's replays both update (atomically). Go makes it
 * once, in memory that lives as long as the process; C gets its address
 * from ub_ledger_addr at module init.
 */
typedef struct {
	uint64_t live_magic;
	uint64_t free_magic;
	int64_t live_exports;
	int64_t stray_deletes;
	int64_t exchange_exports; /* tensors handed out by the C exchange API */
	int64_t replayed_live;    /* C's live exports: changed only with the GIL held */
} ub_ledger;


/*
 * ub_wait_plan is how C waits on an array's queue as usm.Array.Wait does,
 * without entering Go: Go fills it once (ub_wait_plan_fill) for a dpctl
 * queue, from pybridge's waitPlan; C then calls
 * event_delete(event_wait(barrier(ref))) in that order. ref 0: the array has
 * no queue, nothing to wait for. The array's Go state keeps the queue
 * alive while C may use the plan.
 */
typedef struct {
	uintptr_t ref;          /* DPCTLSyclQueueRef, or 0 */
	uintptr_t barrier;      /* DPCTLQueue_SubmitBarrier */
	uintptr_t event_wait;   /* DPCTLEvent_Wait */
	uintptr_t event_delete; /* DPCTLEvent_Delete */
} ub_wait_plan;

/* A producer's DLPack deleter that Go's release left for C to call,
 * exactly once (internal/hooks.ReleaseDeferred); fn 0: nothing to call. */
typedef struct {
	uintptr_t fn;
	uintptr_t arg;
} ub_deleter_call;

/*
 * Releases C replays. When Go imports a fresh tensor whose producer's
 * deleter is a C function and nothing but the new array holds it, Go hands
 * C that deleter (ub_import_host's crelease); when asarray makes an array,
 * Go hands C the Python references the array holds (ub_asarray_read's
 * drop: the producer object, and the syclobj it was bound to), which
 * nothing else holds either. While Go has not seen the array's handle
 * again, the array's tp_dealloc calls the deleter or drops the references
 * itself and leaves the handle here, and Go finishes the bookkeeping
 * (counts, handle table) on its next entry, before anything else. Guarded
 * by the GIL.
 */
#define UB_RELEASED_MAX 64
extern int64_t ub_released[UB_RELEASED_MAX];
extern int32_t ub_nreleased;

/*
 * Host imports C replays. When Go accepts a fresh kDLCPU tensor in
 * ub_import_host and lets C call its producer's deleter, it also writes
 * down the decision (ub_host_layouts) for a box of tensors around it: every
 * field Import read but the data pointer and the shape, a bound for each
 * extent (0..shape_max[i]), and the data pointers Import accepts for every
 * shape in the box (data_lo..data_hi, from dlpack's own checks, which hold
 * for the whole box: hooks.AcceptedData). from_dlpack's fast path then
 * compares the next tensor with these; one inside a box is Go's decision
 * again, and C makes the array without entering Go. Such an array is
 * "pending": it has no handle, C holds the tensor and the deleter Go
 * approved, and its deallocator calls that deleter once. The first use
 * that needs Go (any property, an export, the SUAI, the C exchange table)
 * imports the tensor into Go then (ub_adopt_host), with all of Go's checks
 * again: a producer that changed its tensor in between gets Go's error
 * there, never a view of what it changed. Anything not in the table goes to Go, which decides.
 * Go writes the table, C reads it, both only with the GIL held.
 */
#define UB_HOST_LAYOUTS 8
#define UB_HOST_LAYOUT_NDIM 4

typedef struct {
	int32_t used;         /* 1: the entry holds a decision */
	int32_t versioned;    /* DLManagedTensorVersioned (1) or DLManagedTensor (0) */
	uintptr_t deleter;    /* the producer's deleter, which Go lets C call */
	ub_dl_version version; /* versioned only */
	uint64_t flags;       /* versioned only */
	ub_dl_device device;
	ub_dl_dtype dtype;
	int32_t ndim;         /* at most UB_HOST_LAYOUT_NDIM */
	int32_t has_strides;  /* 0: strides NULL */
	int64_t shape_max[UB_HOST_LAYOUT_NDIM]; /* each extent may be 0..shape_max[i] */
	int64_t strides[UB_HOST_LAYOUT_NDIM];
	uint64_t byte_offset;
	uintptr_t data_lo, data_hi; /* the data pointers Go accepts, inclusive */
} ub_host_layout;

extern ub_host_layout ub_host_layouts[UB_HOST_LAYOUTS];

/* The arrays made that way: all so far, the ones still pending, and the
 * ones whose deallocator released them without Go ever seeing them (Go
 * adds them to its counts in _stats). Guarded by the GIL. */
extern int64_t ub_host_replays, ub_host_pending, ub_host_pending_releases;

/*
 * SUAI reads C replays. usmbridge.asarray(obj) reads
 * obj.__sycl_usm_array_interface__ in C and, for an exact dict, calls the
 * operator.itemgetter Go names for a dict of its size (ub_suai_getters:
 * entry i for i items, the last for that many or more; 0 for none), the
 * calls Go's reader would make through purego. ub_asarray_read then reads
 * the values from that tuple with all of Go's rules; a getter that raised
 * (a key is missing) is cleared, and Go looks the keys up one by one.
 */
#define UB_SUAI_GETTERS 8

/* Fast-path states of an array's template and wait plan. */
enum { UB_TEMPLATE_UNKNOWN = 0, UB_TEMPLATE_READY = 1, UB_TEMPLATE_NONE = -1 };

/*
 * fork. The Go runtime does not survive fork() without exec(): in a child
 * of a process that had loaded this library, entering Go can hang for
 * ever. ext.c registers a pthread_atfork child handler when the library is
 * loaded; it sets ub_forked, and from then on nothing in the child enters
 * Go: the module's functions and methods raise usmbridge.ForkError, and
 * deallocators, capsule destructors and deleters leak what they would
 * have released through Go.
 *
 * ub_gate is how Go callbacks that C code calls (DLPack deleters, capsule
 * destructors, made with purego) get the same check: Go passes the entry
 * point of each callback it makes and hands out the returned C function
 * instead, which calls Go only while ub_forked is 0. It returns 0 when its
 * slots are used up (Go then hands out its own entry point). Go calls it
 * under one lock, before any callback is handed out.
 */
uintptr_t ub_gate(uintptr_t go_fn);

#endif
