/*
 * ubx.h: the ABI between pyext's C half (its .c files; what they share
 * among themselves is ubx_c.h) and its Go half (the cgo files of package
 * pyext): the one contract between the two. No Python.h here: Go includes
 * this file, and pyext must build without Python's headers. abi_test.go
 * holds every struct to Go's mirror of it (internal/dlabi for the DLPack
 * structs).
 *
 * The DLPack structs are the 1.x C ABI (dlpack.h), written from the
 * specification.
 */
#ifndef UBX_H
#define UBX_H

#include <stddef.h>
#include <stdint.h>

/* ---- DLPack ------------------------------------------------------------ */

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

#define UB_DL_CPU 1
#define UB_DL_ONEAPI 14
#define UB_DL_FLAG_READ_ONLY 1ULL
#define UB_DL_FLAG_IS_COPIED 2ULL

/* The DLPack C exchange API table, DLPackExchangeAPI of dlpack.h 1.3. Every
 * function returns 0, or -1 with a Python exception set; the allocator
 * reports through SetError instead. */
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

/* ---- arrays ------------------------------------------------------------- */

/* The largest ndim imported or exported (dlpack.MaxNdim). */
#define UBX_MAX_NDIM 64

/*
 * ubx_view is an array as both halves see it: its DLPack tensor in the form
 * dlpack.Export gives it (data at element 0 and byte_offset 0, unless a
 * stride is negative: then data is the lowest byte the array touches and
 * byte_offset leads to element 0; strides in elements, always set for
 * ndim > 0; shape and strides NULL for a 0-d array), its flags, and what C
 * may do with it without Go. An export copies it. shape and strides point
 * into memory the holder of the view owns (an Array's own dims).
 */
typedef struct {
	ub_dl_tensor t;
	uint64_t flags;   /* UB_DL_FLAG_READ_ONLY, UB_DL_FLAG_IS_COPIED */
	int64_t handle;   /* Go's state of the array (its queue, its Go owner); 0: none */
	int32_t usm_kind; /* usm.Kind of the memory: 0 unknown (not USM), 1 host, 2 device, 3 shared */
	int32_t wait;     /* 1: an export without a stream, and the SUAI, wait on the array's queue first (Go) */
	int32_t no_sync;  /* 1: __dlpack__(stream=-1) is accepted (kDLOneAPI arrays) */
	int32_t go_export; /* 1: every export is Go's (Go refuses them, or must do more than copy the view) */
} ubx_view;

/* ubx_import_host reads a producer's kDLCPU tensor (m, versioned or legacy)
 * into v as dlpack.Import followed by dlpack.Export would give it, with
 * shape and strides written to dims (2*max_ndim entries; a tensor of more
 * dimensions, up to UBX_MAX_NDIM, is left to Go): 1 when it
 * accepts the tensor, 0 when Go must decide (a refusal, another device, a
 * dtype in doubt). It reads the tensor only; the caller owns it either way.
 * Go's dlpack.Import is the rule: FuzzHostImport holds the two equal. */
int ubx_import_host(const void *m, int versioned, ubx_view *v, int64_t *dims, int32_t max_ndim);

/* The element size of each DLPack dtype Go accepts, filled by Go when the
 * module is made (dlpack's dtype rules): [code][bits/8], lanes 1; 0 where
 * Go refuses. Codes and sizes beyond the table are refused. */
#define UBX_DTYPE_CODES 32
#define UBX_DTYPE_BYTES 17
extern uint8_t ubx_dtype_size[UBX_DTYPE_CODES][UBX_DTYPE_BYTES];

/* dlpack's top of user space (dlabi.MaxUserAddress): no tensor's bytes may
 * reach above it. Filled by Go with the table above. */
extern uint64_t ubx_max_user_address;

/* The buffer-protocol format of each DLPack dtype (lanes 1), by
 * [code][bits/8], as Go's bufferFormat gives it; NULL where there is none
 * (Go's buffer path then says why). Filled by Go with the tables above. */
extern const char *ubx_buffer_format[UBX_DTYPE_CODES][UBX_DTYPE_BYTES];

/* An object's __sycl_usm_array_interface__ as C read it, for Go
 * (pybridge.SUAIDict, whose rules read it): dict, the attribute's value
 * (NULL: reading it raised AttributeError, which C cleared);
 * when looked is 1, dict is exactly a dict and vals its value at each of
 * ubx_suai_keys (NULL where the key is absent), looked up as dpctl's
 * dict.get does. C holds a reference to each until Go returns. */
#define UBX_SUAI_KEYS 7
typedef struct {
	void *dict;
	void *vals[UBX_SUAI_KEYS];
	int32_t looked;
	int32_t pad;
} ubx_suai;

/* The keys of ubx_suai.vals, in order (pybridge.SUAIKeys), filled by Go
 * with the tables above. */
extern const char *ubx_suai_keys[UBX_SUAI_KEYS];

/* ---- functions Python calls --------------------------------------------- */

/* Parameter kinds: what C reads an argument as before Go sees it. */
enum {
	UBX_P_OBJECT = 0, /* any object, passed as is */
	UBX_P_INT,        /* an int (__index__), int64 */
	UBX_P_FLOAT,      /* a float or an int, double */
	UBX_P_BOOL,       /* True or False only */
	UBX_P_STR,        /* a str, UTF-8 */
	UBX_P_ARRAY,      /* an array: C reads host memory, Go the rest */
	UBX_P_UINT,       /* an int (__index__) in 0 ... 2**64-1, its bits in i */
	UBX_P_INSTANCE,   /* an object of class number cls of the module (class.c) */
};

/* Parameter flags. */
enum {
	UBX_F_OPTIONAL = 1, /* may be omitted (Go supplies the default) */
	UBX_F_NONE = 2,     /* None is accepted (the Go value is its zero) */
	UBX_F_KWONLY = 4,   /* keyword only */
	UBX_F_WRITABLE = 8, /* an array the function writes to (buffers: ask for a writable view) */
	UBX_F_POSONLY = 16, /* positional only */
	UBX_F_SELF = 32,    /* a method's receiver (a wrong object is a descriptor's TypeError) */
	UBX_F_CLS = 64,     /* a class method's receiver: the class it is called on (UBX_P_OBJECT) */
	UBX_F_NEW = 128,    /* with UBX_F_SELF, __setstate__'s: an object without a value gets a new one (UBX_V_NEW) */
};

typedef struct {
	const char *name;
	int32_t kind;
	int32_t flags;
	int32_t cls; /* UBX_P_INSTANCE: the class's number */
	int32_t pad;
} ubx_param;

/* Built-in functions the C half implements itself (with Go's rules behind
 * it), which a module adds under a name of its choice. */
enum {
	UBX_FN_GO = 0,          /* a Go function (pyext.Func*) */
	UBX_FN_FROM_DLPACK = 1, /* from_dlpack(x, /, *, device=None, copy=None) */
	UBX_FN_ASARRAY = 2,     /* asarray(obj, /) over __sycl_usm_array_interface__ */
};

typedef struct {
	const char *name;
	const char *doc; /* with CPython's "name(sig)\n--\n\n" prefix */
	const ubx_param *params;
	int32_t nparams;
	int32_t builtin; /* UBX_FN_* */
	int32_t index;   /* Go's index of the function */
	int32_t release_gil;
} ubx_func;

/* The module as Go defines it (pyext.Module), in memory that lives as long
 * as the process. */
typedef struct {
	const char *doc;
	const char *array_name;      /* the Array type's qualified name, e.g. "usmbridge.Array" */
	const char *fork_error_name; /* the fork error's, e.g. "usmbridge.ForkError" */
	const ubx_func *funcs;
	int32_t nfuncs;
	/* The DLPack version an export answers max_version=(1, k) with, for
	 * k < UBX_MINOR_SLOTS, and a larger request (dlabi.NegotiateVersion). */
	uint32_t minor_for[8];
	uint32_t minor_newer;
	uint32_t major;
	uint32_t max_major, max_minor; /* the max_version from_dlpack asks producers for */
	const struct ubx_class *classes; /* the module's classes (class.c) */
	int32_t nclasses;
	int32_t nexcs;
	struct ubx_exc *excs; /* the module's own exceptions (module.c makes them; Go raises them) */
	const struct ubx_const *consts; /* the module's attributes */
	int32_t nconsts;
	int32_t pad;
} ubx_module_def;

/* An exception class of the module (pyext.NewException): C makes it once
 * per process, derived from exception base_exc of the module's (>= 0) or
 * from the built-in exception named base, and sets type, which Go raises. */
typedef struct ubx_exc {
	const char *name; /* qualified: "stats.Error" */
	const char *doc;
	const char *base;
	int32_t base_exc;
	int32_t pad;
	void *type; /* the class (a strong reference, kept), once made */
} ubx_exc;

/* An attribute of the module (pyext.Module.Const): value is a strong
 * reference Go made, kept for the life of the process. */
typedef struct ubx_const {
	const char *name;
	void *value;
} ubx_const;

/* A property of a class: its getter (self) and setter (self, value) are Go
 * functions as any other (set NULL: read-only). */
typedef struct {
	const char *name;
	const char *doc;
	const ubx_func *get;
	const ubx_func *set;
} ubx_prop;

/* A class of the module (pyext.NewClass): objects that hold a Go value by
 * handle. Its functions' names are qualified ("Plan.run"), their first
 * parameter the receiver; the constructor's name is the class's. */
typedef struct ubx_class {
	const char *name; /* qualified: "saxpy.Plan" */
	const char *doc;  /* with the constructor's "Plan(sig)\n--\n\n" prefix */
	const ubx_func *ctor; /* NULL: Python cannot make objects of the class */
	const ubx_func *methods;
	const ubx_prop *props;
	int32_t nmethods;
	int32_t nprops;
	int32_t hidden; /* 1: pyext's own class (iterators), not an attribute of the module */
	int32_t pad;
} ubx_class;

#define UBX_MINOR_SLOTS 8

/* Value kinds of an argument. */
enum {
	UBX_V_MISSING = 0, /* omitted: Go uses the parameter's default */
	UBX_V_NONE,
	UBX_V_INT,
	UBX_V_FLOAT,
	UBX_V_BOOL,
	UBX_V_STR,
	UBX_V_ARRAY,  /* v: C read it (host memory, or one of this module's Arrays) */
	UBX_V_OBJECT, /* obj: Go reads it (an array C did not read, or an object parameter) */
	UBX_V_INSTANCE, /* i: the handle of the Go value an object of a class holds; obj the object */
	UBX_V_SUAI,     /* suai: the argument's __sycl_usm_array_interface__, as C read it; obj the object */
	UBX_V_NEW,      /* obj: an object without a value whose __setstate__ makes one; i: its handle, which Go sets */
};

typedef struct {
	int32_t kind;
	int32_t pad;
	int64_t i;     /* INT, BOOL */
	double f;      /* FLOAT */
	const char *s; /* STR: UTF-8, valid for the call */
	int64_t n;     /* STR: its length */
	void *obj;     /* the argument as given (borrowed) */
	ubx_view v;    /* ARRAY; its memory lives as long as the call */
	const ubx_suai *suai; /* SUAI; lives as long as the call */
} ubx_value;

/* Result kinds. */
enum {
	UBX_R_NONE = 0,
	UBX_R_INT,
	UBX_R_FLOAT,
	UBX_R_BOOL,
	UBX_R_STR,    /* s (malloc'd by Go, C frees it), n */
	UBX_R_ARRAY,  /* a new Array over v (its dims: dims below), base (a new reference or NULL) */
	UBX_R_OBJECT, /* obj, a new reference */
	UBX_R_ARG,    /* argument number arg, as given */
	UBX_R_ARG_ARRAY, /* an Array over argument number arg's memory (C reads it) */
	UBX_R_UINT,      /* i as an unsigned 64-bit int */
	UBX_R_INSTANCE,  /* the object of class number arg holding Go value handle i: new (n 0), or alive (n 1) */
	UBX_R_TUPLE,     /* a tuple of the n results at obj (calloc'd by Go: C makes each, then frees them) */
};

typedef struct {
	int32_t kind;
	int32_t arg;
	int64_t i;
	double f;
	char *s;
	int64_t n;
	void *obj;
	void *base;    /* ARRAY: a Python object the Array holds (keeps the memory alive), new reference */
	void *syclobj; /* ARRAY: the SUAI syclobj it was bound to (re-exported), new reference */
	ubx_view v;
	int64_t dims[2 * UBX_MAX_NDIM];
} ubx_result;

/* ---- fork ---------------------------------------------------------------- */

/* 1 in a child created by fork() after this library was loaded: nothing
 * there may enter Go (fork.c). */
int ubx_forked(void);

/* fork_skip counts a release a forked child skipped rather than enter Go;
 * C only, hidden (fork.c). ubx_fork_skips is the count (module.c's
 * _fork_skips, and Go's tests). */
__attribute__((visibility("hidden"))) void fork_skip(void);
long ubx_fork_skips(void);

/* ubx_gate wraps a Go callback that C code may call (a DLPack deleter, a
 * capsule destructor) so that it is not entered in a forked child; 0 when
 * its slots are used up. */
uintptr_t ubx_gate(uintptr_t go_fn);

#endif
