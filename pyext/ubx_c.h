/*
 * ubx_c.h: what the C files of pyext's C half share with each other, with
 * Python's headers: only an extension module's build (UBX_MODULE) includes
 * it. ubx.h is the ABI with Go; this is the C half's own, one section per
 * file, in the order the files build on each other: a file calls only the
 * files of the sections above its own (CONTRIBUTING.md has the map).
 * Hidden: the names stay inside the library, so two modules in one process
 * never resolve each other's (TestTwoRuntimes). The hot helpers are static
 * inline here, so that splitting the files costs no call on a hot path.
 */
#ifndef UBX_C_H
#define UBX_C_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef Py_GIL_DISABLED
#error "pyext does not support the free-threaded build of CPython (see docs/extensions.md)"
#endif

#include "ubx.h"
#include "_cgo_export.h"

#define UBX_HIDDEN __attribute__((visibility("hidden")))

/* ---- state.c: the process-wide state -------------------------------------- */

/* The module as Go defined it (ubx_go_define), once per process. */
UBX_HIDDEN extern ubx_module_def *def;

/* The latest instance's Array type and fork error (strong references,
 * kept for the life of the process), for the paths that have no module
 * at hand: the exchange table, the fork check. */
UBX_HIDDEN extern PyTypeObject *g_array_type;
UBX_HIDDEN extern PyObject *g_fork_error;

/* Interned names, made once per process (intern_names; sub-interpreters
 * are refused). */
UBX_HIDDEN extern PyObject *s_dlpack, *s_dlpack_device, *s_suai, *s_exchange, *s_exchange_int, *s_max_version;
UBX_HIDDEN extern PyObject *s_suai_keys[UBX_SUAI_KEYS]; /* ubx_suai_keys, interned */
UBX_HIDDEN extern PyObject *s_stream, *s_dl_device, *s_copy, *s_device, *s_syclobj, *s_dtype, *s_numpy,
	*s_dpnp_tensor, *s_dpctl_memory, *s_W, *s_array_open;
/* from_dlpack's keyword names and max_version, for producers' __dlpack__. */
UBX_HIDDEN extern PyObject *kwnames_max_version, *max_version_value;

/* What the C half counts (usmbridge._stats; the module's _c_stats). */
UBX_HIDDEN extern int64_t live_exports, stray_deletes, exchange_exports, c_imports, live_c_imports, numpy_reads;

/* intern_names makes the names above once def is set: 0, or -1 with an
 * exception. */
UBX_HIDDEN int intern_names(void);

/* ---- fork.c: the fork gate ------------------------------------------------ */

/* Set in the child of every fork() after the library was loaded. */
UBX_HIDDEN extern volatile sig_atomic_t ubx_fork_flag;
/* The ForkError's message (also the ImportError's in a forked child). */
UBX_HIDDEN extern const char fork_message[];
/* fork_raise raises the fork error; 1. */
UBX_HIDDEN int fork_raise(void);

/* forked raises the fork error and returns 1 in a forked child, else 0:
 * every entry point of the module asks it first. */
static inline int forked(void)
{
	return ubx_fork_flag ? fork_raise() : 0;
}

/* ---- errors.c: errors across the boundary --------------------------------- */

/* gil_held reports whether the calling thread holds the GIL (C functions
 * Go calls refuse without it). */
UBX_HIDDEN int gil_held(const char *fn);
/* take_error moves the pending exception to *exc, for Go. */
UBX_HIDDEN void take_error(void **exc);
/* go_failed raises what Go failed with; NULL, to return. */
UBX_HIDDEN void *go_failed(void);
/* fetch_pending takes the pending exception, normalized and with its
 * traceback; chain_cause makes it the cause of the one raised since. */
UBX_HIDDEN PyObject *fetch_pending(void);
UBX_HIDDEN void chain_cause(PyObject *ev);

/* go_object is a PyObject* a Go call returned, or the error it failed with. */
static inline PyObject *go_object(void *o)
{
	return o != NULL ? (PyObject *)o : go_failed();
}

/* go_status is a Go call's status (0 or -1), its error raised. */
static inline int go_status(int r)
{
	if (r != 0)
		go_failed();
	return r;
}

/* ---- kwargs.c: the keywords of the module's own methods ------------------- */

/* parse_kw matches vectorcall keywords against names (n of them) into out. */
UBX_HIDDEN int parse_kw(const char *fname, PyObject *kwnames, PyObject *const *values, PyObject **names,
			PyObject **out, int n);

/* pair reads an exact 2-tuple of exact ints that fit in long long; 0 for
 * anything else (Go then reports, or decides). */
static inline int pair(PyObject *v, long long *x, long long *y)
{
	if (!PyTuple_CheckExact(v) || PyTuple_GET_SIZE(v) != 2)
		return 0;
	PyObject *a = PyTuple_GET_ITEM(v, 0), *b = PyTuple_GET_ITEM(v, 1);
	if (!PyLong_CheckExact(a) || !PyLong_CheckExact(b))
		return 0;
	int oa, ob;
	*x = PyLong_AsLongLongAndOverflow(a, &oa);
	*y = PyLong_AsLongLongAndOverflow(b, &ob);
	return !oa && !ob && !PyErr_Occurred();
}

/* ---- capsule.c: DLPack capsules -------------------------------------------- */

UBX_HIDDEN extern const char name_legacy[], name_versioned[], used_legacy[], used_versioned[];

/* capsule_destructor deletes the tensor of a capsule no consumer took. */
UBX_HIDDEN void capsule_destructor(PyObject *cap);
/* capsule_tensor is a fresh DLPack capsule's tensor: 1 with *p and
 * *versioned, 0 for anything else. */
UBX_HIDDEN int capsule_tensor(PyObject *cap, void **p, int *versioned);

/* ---- array.c: the Array object and its lifetime --------------------------- */

#define INLINE_NDIM 8

typedef struct {
	PyObject_HEAD
	ubx_view v;
	int64_t *dims; /* shape then strides: inline_dims, or malloc'd beyond INLINE_NDIM */
	/* What keeps the memory alive, besides Go's state (v.handle): */
	void *managed;     /* a producer's tensor this Array took: its deleter runs once, at dealloc */
	int versioned;     /* managed is a DLManagedTensorVersioned */
	Py_buffer *buffer; /* a buffer view this Array holds */
	PyObject *base;    /* an object that owns the memory */
	PyObject *syclobj; /* the SUAI syclobj the array was bound to, re-exported by its SUAI */
	PyObject *usm_nd;  /* __usm_ndarray__, made once */
	PyObject *suai;    /* the __sycl_usm_array_interface__ Go made first; each call gets a copy */
	PyObject *dev_tuple;
	PyObject *weakrefs;
	int is_view; /* made by permuted: holds nothing of its own but base, its root */
	int64_t inline_dims[2 * INLINE_NDIM]; /* last: array_alloc leaves it unwritten */
} Array;

UBX_HIDDEN Array *array_alloc(int32_t ndim);
UBX_HIDDEN void set_view(Array *a, const ubx_view *v);
UBX_HIDDEN void call_deleter(void *m, int versioned);
UBX_HIDDEN int array_clear(Array *a);
UBX_HIDDEN int array_traverse(Array *a, visitproc visit, void *arg);
UBX_HIDDEN void array_dealloc(Array *a);
UBX_HIDDEN PyObject *new_array_from_result(ubx_result *r);
UBX_HIDDEN int array_over(const void *p, int versioned, PyObject *cap, Array **out);
UBX_HIDDEN int array_over_in(const void *p, int versioned, PyObject *cap, Array **pre, Array **out);
UBX_HIDDEN void take_tensor(Array *a, void *p, int versioned);
UBX_HIDDEN PyObject *permuted(Array *a, const int32_t *perm);

/* is_array reports whether o is one of this module's Arrays. */
static inline int is_array(PyObject *o)
{
	return Py_TYPE(o)->tp_dealloc == (destructor)array_dealloc;
}

/* The element 0 address. */
static inline uintptr_t element0(const ubx_view *v)
{
	return (uintptr_t)v->t.data + (uintptr_t)v->t.byte_offset;
}

static inline int64_t itemsize_of(const ubx_view *v)
{
	return v->t.dtype.bits / 8;
}

static inline int64_t array_size_of(const ubx_view *v)
{
	int64_t n = 1;
	for (int32_t i = 0; i < v->t.ndim; i++)
		n *= v->t.shape[i]; /* fits: the import or Go checked the layout */
	return n;
}

/* ---- export.c: the tensors an Array exports ------------------------------- */

/* A block is one tensor an Array exported from its view. Blocks are malloc'd
 * in batches and never freed, only reused: a second call of a deleter reads
 * mapped memory and is counted (stray_deletes) instead of freeing twice.
 * The counts and the free list are guarded by the GIL. */
typedef struct block {
	union {
		ub_dl_managed legacy;
		ub_dl_managed_versioned versioned;
	} m;
	uint64_t magic;
	struct block *next;
} block;

UBX_HIDDEN block *export_block(Array *a, int versioned, uint32_t minor);
UBX_HIDDEN void export_live(block *b, Array *a);
UBX_HIDDEN PyObject *export_view(Array *a, int versioned, uint32_t minor);

/* ---- dlpack.c: __dlpack__ and __dlpack_device__ -------------------------- */

UBX_HIDDEN PyObject *array_dlpack(Array *a, PyObject *const *args, size_t nargsf, PyObject *kwnames);
UBX_HIDDEN PyObject *array_dlpack_device(Array *a, PyObject *unused);

/* ---- buffer.c: the buffer protocol ---------------------------------------- */

UBX_HIDDEN int array_getbuffer(Array *a, Py_buffer *view, int flags);
UBX_HIDDEN void array_releasebuffer(Array *a, Py_buffer *view);

/* ---- getset.c: the Array's attributes and repr ---------------------------- */

UBX_HIDDEN PyObject *array_shape(Array *a, void *unused);
UBX_HIDDEN PyObject *array_ndim(Array *a, void *unused);
UBX_HIDDEN PyObject *array_size(Array *a, void *unused);
UBX_HIDDEN PyObject *array_itemsize(Array *a, void *unused);
UBX_HIDDEN PyObject *array_nbytes(Array *a, void *unused);
UBX_HIDDEN PyObject *array_strides(Array *a, void *unused);
UBX_HIDDEN PyObject *array_typestr(Array *a, void *unused);
UBX_HIDDEN PyObject *array_usm_type(Array *a, void *unused);
UBX_HIDDEN PyObject *array_device(Array *a, void *unused);
UBX_HIDDEN PyObject *array_data(Array *a, void *unused);
UBX_HIDDEN PyObject *array_offset(Array *a, void *unused);
UBX_HIDDEN PyObject *array_readonly(Array *a, void *unused);
UBX_HIDDEN PyObject *array_T(Array *a, void *unused);
UBX_HIDDEN PyObject *array_mT(Array *a, void *unused);
UBX_HIDDEN Py_ssize_t array_len(Array *a);
UBX_HIDDEN PyObject *array_repr(Array *a);

/* ---- suai.c: the Array as dpctl and dpnp read it --------------------------- */

UBX_HIDDEN PyObject *array_suai(Array *a, void *unused);
UBX_HIDDEN PyObject *array_usm_ndarray(Array *a, void *unused);
UBX_HIDDEN PyObject *array_sycl_queue(Array *a, void *unused);

/* ---- numpy.c: __array__, __reduce__ ----------------------------------------- */

UBX_HIDDEN PyObject *array_array(Array *a, PyObject *const *args, size_t nargsf, PyObject *kwnames);
UBX_HIDDEN PyObject *array_reduce(Array *a, PyObject *unused);

/* ---- exchange.c: the DLPack C exchange API (producer) --------------------- */

UBX_HIDDEN extern ub_dl_exchange_api exchange_api;

/* ---- arraytype.c: the Array type ------------------------------------------ */

/* array_type_new makes the Array type of module m (named as Go defined
 * it), with the exchange table's attributes, immutable: a new reference,
 * or NULL with an exception. */
UBX_HIDDEN PyTypeObject *array_type_new(PyObject *m);

/* ---- typefacts.c: what a type defines ------------------------------------- */

enum {
	FACT_SUAI = 1,          /* __sycl_usm_array_interface__ */
	FACT_EXCHANGE = 2,      /* a DLPack C exchange table, under either name */
	FACT_DLPACK = 4,        /* a callable __dlpack__ */
	FACT_DLPACK_DEVICE = 8, /* a callable __dlpack_device__ */
	FACT_NO_STREAM = 16,    /* numpy.ndarray: never on a device with streams */
};

/* type_facts writes tp's facts (FACT_*) to *out: 0, or -1 with an
 * exception. */
UBX_HIDDEN int type_facts(PyTypeObject *tp, unsigned int *out);
/* is_numpy_ndarray reports whether tp is numpy.ndarray itself. */
UBX_HIDDEN int is_numpy_ndarray(PyTypeObject *tp);

/* ---- read_suai.c: an object's __sycl_usm_array_interface__ ---------------- */

/* read_suai reads o.__sycl_usm_array_interface__ into *out: 1; 0 when o
 * has none; -1 with an exception. suai_clear releases *out after 1. */
UBX_HIDDEN int read_suai(PyObject *o, ubx_suai *out);
UBX_HIDDEN void suai_clear(ubx_suai *s);

/* ---- hold.c: what C holds of an argument ---------------------------------- */

/* What C holds of an array argument during the call (RATIONALE.md, "One
 * owner per reference: what C holds of an argument"); hold.c says what
 * each state owns. */
typedef struct {
	int kind; /* HOLD_* */
	union {
		Py_buffer buf; /* HOLD_BUFFER */
		struct {
			void *m;
			int versioned;
		} managed;        /* HOLD_MANAGED */
		PyObject *array; /* HOLD_ARRAY: an Array, a reference the hold owns */
		PyObject *obj;   /* HOLD_OBJECT: a NumPy array, a reference the hold owns */
		ubx_suai suai;   /* HOLD_SUAI: dict is a reference the hold owns */
	} u;
	PyObject *capsule; /* a capsule C got from the argument, for Go (a reference) */
	int64_t *dims;     /* the view's dims: inline, or malloc'd */
	int64_t inline_dims[2 * INLINE_NDIM];
} hold;

enum { HOLD_NONE, HOLD_BUFFER, HOLD_MANAGED, HOLD_ARRAY, HOLD_OBJECT, HOLD_SUAI };

/* A call in progress, for ubx_hold_array: its arguments as C read them. */
typedef struct {
	ubx_value *vals;
	hold *holds;
	int32_t n;
} call_ctx;

UBX_HIDDEN void hold_release_slow(hold *h);
/* hold_array is the Array that owns an array argument's memory (a new
 * reference), made the first time; NULL with an exception. */
UBX_HIDDEN PyObject *hold_array(ubx_value *val, hold *h);

/* hold_release releases what h holds (nothing, for most arguments). */
static inline void hold_release(hold *h)
{
	if (h->kind == HOLD_NONE && h->capsule == NULL && h->dims == NULL)
		return;
	hold_release_slow(h);
}

/* hold_dims gives h room for ndim dimensions (shape and strides). */
static inline int64_t *hold_dims(hold *h, int32_t ndim)
{
	if (h->dims == NULL) {
		h->dims = ndim <= INLINE_NDIM ? h->inline_dims : malloc(sizeof(int64_t) * 2 * (size_t)ndim);
		if (h->dims == NULL)
			PyErr_NoMemory();
	}
	return h->dims;
}

/* ---- read_buffer.c: buffer-protocol arguments ----------------------------- */

/* read_buffer reads o's buffer (host memory) into val and h: 1 done, 0
 * when o has none, -1 with an exception. */
UBX_HIDDEN int read_buffer(PyObject *o, int writable, int has_dlpack, hold *h, ubx_value *val);

/* ---- read_numpy.c: NumPy arrays, read in place ----------------------------- */

/* read_numpy reads the NumPy array o in place into val (1), or leaves it
 * (0); -1 with an exception. */
UBX_HIDDEN int read_numpy(PyObject *o, hold *h, ubx_value *val);

/* ---- read_dlpack.c: capsules and host DLPack producers --------------------- */

/* take_capsule imports a fresh capsule's kDLCPU tensor into val and h: 1
 * done, 0 when Go must decide, -1 with an exception. */
UBX_HIDDEN int take_capsule(PyObject *cap, hold *h, ubx_value *val);
/* host_producer reports whether x is a host DLPack producer C takes
 * alone: 1, 0, or -1 with an exception. */
UBX_HIDDEN int host_producer(PyObject *x);
/* call_dlpack calls x.__dlpack__ as the array API's from_dlpack does. */
UBX_HIDDEN PyObject *call_dlpack(PyObject *x);

/* ---- instance.c: objects of the module's classes -------------------------- */

typedef struct {
	PyObject_HEAD
	int64_t handle; /* Go's value (values.go's table); 0 before __init__ gave it one, and once given back */
	/* The calls that read the object as an argument and have not ended
	 * (ubx_read_instance to ubx_release_instance): while there are any,
	 * the handle stays the object's and Go's value open, for the call
	 * runs on it. A clear meanwhile (cleared INSTANCE_CLEARING) ends the
	 * object's use from Python at once and gives the value back when the
	 * last call ends (INSTANCE_GONE). */
	int32_t calls;
	int32_t cleared;
	PyObject *weakrefs;
} Instance;

enum { INSTANCE_OPEN = 0, INSTANCE_CLEARING = 1, INSTANCE_GONE = 2 };

/* The module's classes, made by the first import and kept (class.c). */
UBX_HIDDEN extern PyTypeObject **class_types;
UBX_HIDDEN extern int32_t nclasses;

UBX_HIDDEN int instance_clear(Instance *o);
UBX_HIDDEN int instance_traverse(Instance *o, visitproc visit, void *arg);
UBX_HIDDEN void instance_dealloc(Instance *o);
UBX_HIDDEN extern PyMemberDef instance_members[];
/* ubx_read_instance reads an argument of class p->cls (UBX_P_INSTANCE):
 * 0, or -1 with CPython's TypeError. A value it read is the call's until
 * ubx_release_instance, which the call runs when it ends. */
UBX_HIDDEN int ubx_read_instance(const ubx_func *f, const ubx_param *p, PyObject *o, ubx_value *val);
UBX_HIDDEN void ubx_release_instance(ubx_value *val);
/* ubx_instance_adopt gives a UBX_V_NEW argument's object the value Go made
 * for it (__setstate__): 0, or -1 with an exception (the value dropped). */
UBX_HIDDEN int ubx_instance_adopt(ubx_value *val);
/* ubx_instance_result is the object of a UBX_R_INSTANCE result: into, for a
 * constructor's (which gets the value), else a new or the living one. */
UBX_HIDDEN PyObject *ubx_instance_result(const ubx_result *r, Instance *into);

/* ---- read_arg.c: an argument, by its parameter's kind ---------------------- */

UBX_HIDDEN int read_arg(const ubx_func *f, const ubx_param *p, PyObject *o, hold *h, ubx_value *val);

/* ---- call.c: binding and calling a Go function ---------------------------- */

/* call_go is a Go function's call: self is a capsule of its ubx_func. */
UBX_HIDDEN PyObject *call_go(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames);
/* call_go_into is a constructor's call (f) for the object into, which
 * __new__ made without a value: into, with its value, or NULL. */
UBX_HIDDEN PyObject *call_go_into(const ubx_func *f, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
				  Instance *into);

/* result_init readies a result on the stack for Go: the fields C reads
 * whatever Go returns are zero; the view and its dims are left unwritten,
 * since Go writes the whole view of an array it returns (fillView) and the
 * dims it has, and C reads no more than that. */
static inline void result_init(ubx_result *r)
{
	r->kind = UBX_R_NONE;
	r->arg = 0;
	r->i = 0;
	r->f = 0;
	r->s = NULL;
	r->n = 0;
	r->obj = NULL;
	r->base = NULL;
	r->syclobj = NULL;
}

/* ---- function.c: functions and methods as Python objects ------------------ */

/* What a function binds when looked up on a class or an object: nothing
 * (a function of the module, a static method), the object (a method), or
 * the class (a class method). */
enum { FN_PLAIN = 0, FN_METHOD = 1, FN_CLASSMETHOD = 2 };

/* function_make is a function of module modname (cls NULL), or a member of
 * class cls binding as binding (FN_*) says: ml's C function called with
 * self (PyCFunction's contract), as a callable that Python documents and
 * inspects as a built-in function. */
UBX_HIDDEN PyObject *function_make(PyMethodDef *ml, PyObject *self, PyObject *modname, PyTypeObject *cls,
				   int binding);

/* ---- class.c: the module's classes ---------------------------------------- */

/* add_classes makes the module's classes and adds them to m. */
UBX_HIDDEN int add_classes(PyObject *m, const ubx_module_def *def);

/* ---- fromdlpack.c: from_dlpack and asarray -------------------------------- */

UBX_HIDDEN PyObject *call_from_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames);
UBX_HIDDEN PyObject *call_asarray(PyObject *self, PyObject *obj);

#endif
