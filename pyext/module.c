/*
 * module.c: the C half of every extension module built with pyext (the
 * usmbridge package's own usmbridge._ext among them). It owns what Python
 * sees: the module, its functions, the Array type and its protocols, and
 * the DLPack C exchange table. Go (pyext's cgo files) holds the rules and
 * the Go functions; C reads arguments, makes objects and calls Go once per
 * call, with the GIL held.
 *
 * What C decides itself, Go decides too, and a test holds the two equal:
 *  - a host (kDLCPU) DLPack tensor is imported here (dlimport.c), as NumPy's
 *    from_dlpack does: one capsule, one owner, one call of the producer's
 *    deleter, when the Array goes (FuzzHostImport holds it to dlpack.Import);
 *  - an Array's exports copy its view, which is dlpack.Export's form of the
 *    array (Go fills it for the arrays Go makes); anything but a plain
 *    export (a stream queue, a copy, another device, every error) is Go's.
 * Everything else (USM, __sycl_usm_array_interface__, queues) is Go's.
 *
 * It is compiled only when UBX_MODULE is defined (the build of a module
 * defines it and points at Python's headers); otherwise it only has the
 * fork gate, so that pyext builds, vets and tests without Python.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ubx.h"

/* ---- fork ------------------------------------------------------------ */

/* Set in the child of every fork() after this library was loaded; never
 * cleared. The Go runtime does not survive fork() without exec(): in such
 * a child nothing may enter Go. Registered by a constructor, at dlopen. */
static volatile sig_atomic_t forked_flag;

/* Releases a forked child skipped rather than enter Go: what it leaked. */
static long fork_skips;

void fork_skip(void)
{
	__atomic_fetch_add(&fork_skips, 1, __ATOMIC_RELAXED);
}

static void on_fork_child(void)
{
	forked_flag = 1;
}

__attribute__((constructor)) static void register_fork_handler(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
}

int ubx_forked(void)
{
	return forked_flag;
}

/* Gates for Go callbacks: gate_i calls gate_target[i] unless forked. */
#define UBX_GATE_SLOTS 8
static void (*gate_target[UBX_GATE_SLOTS])(void *);
#define UBX_GATE(i)                             \
	static void gate_##i(void *arg)         \
	{                                       \
		if (forked_flag)                \
			fork_skip();            \
		else                            \
			gate_target[i](arg);    \
	}
UBX_GATE(0) UBX_GATE(1) UBX_GATE(2) UBX_GATE(3) UBX_GATE(4) UBX_GATE(5) UBX_GATE(6) UBX_GATE(7)
static void (*const gate_fns[UBX_GATE_SLOTS])(void *) = {
	gate_0, gate_1, gate_2, gate_3, gate_4, gate_5, gate_6, gate_7,
};
static int gate_count;

uintptr_t ubx_gate(uintptr_t go_fn)
{
	if (gate_count == UBX_GATE_SLOTS)
		return 0;
	gate_target[gate_count] = (void (*)(void *))go_fn;
	return (uintptr_t)gate_fns[gate_count++];
}

#ifndef UBX_MODULE

/* Without Python: what Go calls during a call exists, and is never called. */
void *ubx_hold_array(void *call, int32_t i, void **exc) { return NULL; }
void ubx_hold_leak(void *call, int32_t i) {}
void ubx_set_error(void *exc) {}
void *ubx_save_thread(void) { return NULL; }
void ubx_restore_thread(void *ts) {}
int ubx_fill_buffer(void *arr, void *view, int flags, const char *format, void **exc) { return -1; }
long ubx_fork_skips(void) { return fork_skips; }

#else

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#ifdef Py_GIL_DISABLED
#error "pyext does not support the free-threaded build of CPython (see docs/extensions.md)"
#endif

#include "_cgo_export.h"
#include "ubx_c.h"

long ubx_fork_skips(void) { return fork_skips; }

/* ---- module state ------------------------------------------------------ */

typedef struct {
	PyTypeObject *array_type;
	PyObject *fork_error;
} modstate;

/* The latest instance's Array type and fork error (strong references, kept
 * for the life of the process), for the paths that have no module at hand:
 * the exchange table, the fork check. Sub-interpreters are refused, so
 * there is one interpreter; a module made again (after it left
 * sys.modules) replaces them, and Arrays of the old type keep theirs. */
static PyTypeObject *g_array_type;
static PyObject *g_fork_error;

/* The module as Go defined it (ubx_go_define), once per process. */
static ubx_module_def *def;
static char *module_name;
static struct PyModuleDef moddef;

/* Interned names, made once per process (sub-interpreters are refused). */
static PyObject *s_dlpack, *s_dlpack_device, *s_suai, *s_exchange, *s_exchange_int, *s_max_version;
static PyObject *s_suai_keys[UBX_SUAI_KEYS]; /* ubx_suai_keys, interned */
static PyObject *s_stream, *s_dl_device, *s_copy, *s_device, *s_syclobj, *s_dtype, *s_numpy, *s_dpnp_tensor, *s_dpctl_memory, *s_W, *s_array_open;
static PyObject *kwnames_max_version, *max_version_value;

static const char fork_message[] =
	"this module cannot be used in a process created by fork() from one that had already loaded it: "
	"the Go runtime inside it does not survive fork() without exec(). "
	"Start worker processes with the 'spawn' or 'forkserver' method (multiprocessing.get_context('spawn')); "
	"a forkserver must not load the module itself. Objects inherited from the parent are leaked, not freed.";


/* forked raises the fork error and returns 1 in a forked child, else 0. */
static int forked(void)
{
	if (!forked_flag)
		return 0;
	PyErr_SetString(g_fork_error != NULL ? g_fork_error : PyExc_RuntimeError, fork_message);
	return 1;
}

/* gil_held reports whether the calling thread holds the GIL, for the C
 * functions Go calls that touch Python objects: each is refused without it
 * (RATIONALE.md, "No Python call without a thread state"), with a message
 * on standard error, since no exception can be set without a thread state.
 * A build with UBX_ABORT_WITHOUT_GIL (the sanitizer build) aborts instead,
 * so that a test that reaches one fails loudly. */
static int gil_held(const char *fn)
{
	if (PyGILState_Check())
		return 1;
#ifdef UBX_ABORT_WITHOUT_GIL
	fprintf(stderr, "pyext: %s called without the GIL\n", fn);
	abort();
#else
	fprintf(stderr, "pyext: %s called without the GIL (refused)\n", fn);
	return 0;
#endif
}

/* ---- errors from Go ------------------------------------------------------ */

/* The exception a Go function failed with (ubx_set_error), raised by C once
 * Go has returned: a new reference, or NULL. Guarded by the GIL: Go sets it
 * with the GIL held, and C takes it before anything else runs. */
static PyObject *go_error;

void ubx_set_error(void *exc)
{
	if (!gil_held("ubx_set_error"))
		return; /* the exception is leaked: it cannot be dropped without the GIL */
	Py_XSETREF(go_error, exc);
}

/* take_error moves the pending exception to *exc (for Go, which calls C
 * and gets the failure as an error: pybridge's ErrorOf). */
static void take_error(void **exc)
{
	PyObject *t, *v, *tb;
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	if (v != NULL && tb != NULL)
		PyException_SetTraceback(v, tb);
	Py_XDECREF(t);
	Py_XDECREF(tb);
	*exc = v;
}

/* go_failed raises what Go failed with; NULL, to return. */
void *go_failed(void)
{
	PyObject *e = go_error;
	go_error = NULL;
	if (e != NULL) {
		PyObject *t = (PyObject *)Py_TYPE(e);
		PyObject *tb = PyException_GetTraceback(e);
		Py_INCREF(t);
		PyErr_Restore(t, e, tb);
	} else if (!PyErr_Occurred()) {
		PyErr_SetString(PyExc_SystemError, "a Go function failed without setting an exception");
	}
	return NULL;
}

/* go_object is a PyObject* a Go call returned, or the error it failed with. */
static PyObject *go_object(void *o)
{
	return o != NULL ? (PyObject *)o : go_failed();
}

/* go_status is a Go call's status (0 or -1), its error raised. */
static int go_status(int r)
{
	if (r != 0)
		go_failed();
	return r;
}

/* ---- exported tensors ---------------------------------------------------- */

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

#define BLOCK_LIVE 0x75626c6976652121ULL /* "ublive!!" */
#define BLOCK_FREE 0x75626672656521ULL
#define BLOCK_BATCH 64

static block *free_blocks;

/* What the C half counts (usmbridge._stats). */
static int64_t live_exports, stray_deletes, exchange_exports, c_imports, live_c_imports, numpy_reads;

static block *block_get(void)
{
	if (free_blocks == NULL) {
		block *b = calloc(BLOCK_BATCH, sizeof(block));
		if (b == NULL)
			return NULL;
		for (int i = 0; i < BLOCK_BATCH; i++) {
			b[i].magic = BLOCK_FREE;
			b[i].next = free_blocks;
			free_blocks = &b[i];
		}
	}
	block *b = free_blocks;
	free_blocks = b->next;
	return b;
}

/* block_release ends an export: the block goes back to the list and the
 * Array reference the tensor held is dropped. After interpreter shutdown
 * it leaks both rather than touch Python, as NumPy's deleter does. */
static void block_release(block *b, PyObject *owner)
{
	if (!Py_IsInitialized())
		return;
	PyGILState_STATE st = PyGILState_Ensure();
	if (b->magic != BLOCK_LIVE) {
		stray_deletes++;
	} else {
		b->magic = BLOCK_FREE;
		b->next = free_blocks;
		free_blocks = b;
		live_exports--;
		Py_DECREF(owner);
	}
	PyGILState_Release(st);
}

static void delete_legacy(ub_dl_managed *m)
{
	block_release((block *)m, (PyObject *)m->manager_ctx);
}

static void delete_versioned(ub_dl_managed_versioned *m)
{
	block_release((block *)m, (PyObject *)m->manager_ctx);
}

static const char name_legacy[] = "dltensor", name_versioned[] = "dltensor_versioned";
static const char used_legacy[] = "used_dltensor", used_versioned[] = "used_dltensor_versioned";

/* The capsule rule: a capsule that still has its fresh name was never
 * consumed, so its destructor deletes the tensor; a consumer that takes the
 * tensor renames it used_*. */
static void capsule_destructor(PyObject *cap)
{
	/* A capsule often dies while an exception is on its way out (a
	 * consumer that refused the tensor raised, then dropped it): that
	 * exception is not the destructor's to clear. */
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	const char *name = PyCapsule_GetName(cap);
	if (name != NULL && strcmp(name, name_versioned) == 0) {
		ub_dl_managed_versioned *m = PyCapsule_GetPointer(cap, name);
		if (m != NULL && m->deleter != NULL)
			m->deleter(m);
	} else if (name != NULL && strcmp(name, name_legacy) == 0) {
		ub_dl_managed *m = PyCapsule_GetPointer(cap, name);
		if (m != NULL && m->deleter != NULL)
			m->deleter(m);
	}
	/* A destructor has no caller to raise to: what went wrong is reported
	 * as CPython reports an exception in __del__. */
	if (PyErr_Occurred())
		PyErr_WriteUnraisable(cap);
	PyErr_Restore(et, ev, tb);
}

/* ---- the Array type ------------------------------------------------------ */

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

static int is_array(PyObject *o);

/* array_alloc makes an Array with room for ndim dimensions; the caller
 * fills v (dims are the Array's). */
static Array *array_alloc(int32_t ndim)
{
	Array *a = PyObject_GC_New(Array, g_array_type);
	if (a == NULL)
		return NULL;
	memset((char *)a + sizeof(PyObject), 0, offsetof(Array, inline_dims) - sizeof(PyObject));
	a->dims = a->inline_dims;
	if (ndim > INLINE_NDIM) {
		a->dims = malloc(sizeof(int64_t) * 2 * (size_t)ndim);
		if (a->dims == NULL) {
			a->dims = a->inline_dims;
			Py_DECREF(a);
			PyErr_NoMemory();
			return NULL;
		}
	}
	return a;
}

static int array_over(const void *p, int versioned, PyObject *cap, Array **out);
static int array_over_in(const void *p, int versioned, PyObject *cap, Array **pre, Array **out);
static void take_tensor(Array *a, void *p, int versioned);

/* set_view copies v into a, shape and strides into a's dims, and starts
 * tracking a. */
static void set_view(Array *a, const ubx_view *v)
{
	a->v = *v;
	int32_t n = v->t.ndim;
	if (n > 0) {
		memcpy(a->dims, v->t.shape, sizeof(int64_t) * (size_t)n);
		memcpy(a->dims + n, v->t.strides, sizeof(int64_t) * (size_t)n);
		a->v.t.shape = a->dims;
		a->v.t.strides = a->dims + n;
	} else {
		a->v.t.shape = a->v.t.strides = NULL;
	}
	PyObject_GC_Track(a);
}

/* call_deleter runs a producer's deleter once. The deleter may be Python
 * code (a ctypes callback, a producer written in Python): an exception on
 * its way out (a call that failed, then released its arguments) is set
 * aside while it runs, so that the caller's exception is the one raised
 * and the deleter runs as it would at any other time. */
static void call_deleter(void *m, int versioned)
{
	PyObject *et = NULL, *ev = NULL, *tb = NULL;
	int pending = PyErr_Occurred() != NULL;
	if (pending)
		PyErr_Fetch(&et, &ev, &tb);
	if (versioned) {
		ub_dl_managed_versioned *t = m;
		if (t->deleter != NULL)
			t->deleter(t);
	} else {
		ub_dl_managed *t = m;
		if (t->deleter != NULL)
			t->deleter(t);
	}
	if (pending)
		PyErr_Restore(et, ev, tb);
}

static int array_clear(Array *a)
{
	Py_CLEAR(a->base);
	Py_CLEAR(a->syclobj);
	Py_CLEAR(a->usm_nd);
	Py_CLEAR(a->suai);
	Py_CLEAR(a->dev_tuple);
	return 0;
}

static int array_traverse(Array *a, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(a));
	/* The exporter of the buffer view the Array holds: its reference is the
	 * Array's, so a cycle through it is found (memoryview does the same). It
	 * is released at deallocation, not by array_clear: the Array's memory
	 * stays valid for as long as anything can reach the Array. */
	if (a->buffer != NULL)
		Py_VISIT(a->buffer->obj);
	Py_VISIT(a->base);
	Py_VISIT(a->syclobj);
	Py_VISIT(a->usm_nd);
	Py_VISIT(a->suai);
	Py_VISIT(a->dev_tuple);
	return 0;
}

static void array_dealloc(Array *a)
{
	PyTypeObject *tp = Py_TYPE(a);
	PyObject_GC_UnTrack(a);
	/* A chain of Arrays each holding the next (an Array over another's
	 * export, nested a hundred thousand deep) is freed by CPython's
	 * trashcan, which defers deallocations beyond a depth instead of
	 * recursing on the C stack. */
	Py_TRASHCAN_BEGIN(a, array_dealloc)
	if (a->weakrefs != NULL)
		PyObject_ClearWeakRefs((PyObject *)a);
	/* Releasing may run Python code (a producer's deleter, __del__ of the
	 * base); keep the exception being raised, if any, out of its way. */
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	if (a->v.handle != 0) {
		if (forked_flag)
			fork_skip(); /* the Go state is leaked in a forked child */
		else
			ubx_go_release(a->v.handle);
	}
	if (a->managed != NULL) {
		live_c_imports--;
		call_deleter(a->managed, a->versioned); /* C code: a forked child may call it */
	}
	if (a->buffer != NULL) {
		PyBuffer_Release(a->buffer);
		PyMem_Free(a->buffer);
	}
	array_clear(a);
	if (a->dims != a->inline_dims)
		free(a->dims);
	PyErr_Restore(et, ev, tb);
	PyObject_GC_Del(a);
	Py_DECREF(tp);
	Py_TRASHCAN_END
}

/* ---- Array properties ---------------------------------------------------- */

/* The element 0 address. */
static uintptr_t element0(const ubx_view *v)
{
	return (uintptr_t)v->t.data + (uintptr_t)v->t.byte_offset;
}

static int64_t itemsize_of(const ubx_view *v)
{
	return v->t.dtype.bits / 8;
}

static PyObject *dims_tuple(const int64_t *d, int32_t n)
{
	PyObject *t = PyTuple_New(n);
	if (t == NULL)
		return NULL;
	for (int32_t i = 0; i < n; i++) {
		PyObject *x = PyLong_FromLongLong(d[i]);
		if (x == NULL) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, i, x);
	}
	return t;
}

static int c_contiguous(const ubx_view *v)
{
	for (int32_t i = 0; i < v->t.ndim; i++)
		if (v->t.shape[i] == 0)
			return 1; /* an empty array is contiguous, as NumPy says */
	int64_t want = 1;
	for (int32_t i = v->t.ndim - 1; i >= 0; i--) {
		if (v->t.shape[i] != 1 && v->t.strides[i] != want)
			return 0;
		want *= v->t.shape[i];
	}
	return 1;
}

static PyObject *array_shape(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return dims_tuple(a->v.t.shape, a->v.t.ndim);
}

static PyObject *array_ndim(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLong(a->v.t.ndim);
}

static int64_t array_size_of(const ubx_view *v)
{
	int64_t n = 1;
	for (int32_t i = 0; i < v->t.ndim; i++)
		n *= v->t.shape[i]; /* fits: the import or Go checked the layout */
	return n;
}

static PyObject *array_size(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLongLong(array_size_of(&a->v));
}

static PyObject *array_itemsize(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLongLong(itemsize_of(&a->v));
}

static PyObject *array_nbytes(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLongLong(array_size_of(&a->v) * itemsize_of(&a->v));
}

/* strides in elements, as dpctl's usm_ndarray gives them. */
static PyObject *array_strides(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return dims_tuple(a->v.t.strides, a->v.t.ndim);
}

static PyObject *array_typestr(Array *a, void *unused);

/* go_queue is the dpctl.SyclQueue of the array's Go state (a new object
 * over its queue), kept as the array's syclobj when it has none, so that
 * its SUAI names it; AttributeError for an array without a dpctl queue. */
static PyObject *go_queue(Array *a)
{
	int store = 0;
	PyObject *q = go_object(ubx_go_sycl_queue(&a->v, a->syclobj, &store));
	if (q != NULL && store && a->syclobj == NULL) {
		Py_INCREF(q);
		a->syclobj = q;
	}
	return q;
}

static PyObject *array_usm_ndarray(Array *a, void *unused);

/* sycl_queue: the dpctl.SyclQueue of a USM array, as dpctl's and dpnp's
 * arrays have one (AttributeError for host memory): with dpnp loaded, the
 * queue of the array's __usm_ndarray__, the very object, since dpnp.asarray
 * keeps an object's memory only when the queue it takes from the object is
 * the one of the usm_ndarray the object gives; else the one its SUAI
 * names. */
static PyObject *array_sycl_queue(Array *a, void *unused)
{
	if (forked())
		return NULL;
	if (a->usm_nd == NULL && a->v.t.device.device_type == UB_DL_ONEAPI) {
		PyObject *nd = array_usm_ndarray(a, NULL);
		if (nd == NULL) {
			if (!PyErr_ExceptionMatches(PyExc_AttributeError))
				return NULL;
			PyErr_Clear(); /* no dpnp here: the queue the SUAI names */
		}
		Py_XDECREF(nd);
	}
	if (a->usm_nd != NULL)
		return PyObject_GetAttrString(a->usm_nd, "sycl_queue");
	return go_queue(a);
}

static PyObject *array_usm_type(Array *a, void *unused)
{
	if (forked())
		return NULL;
	static const char *const kinds[] = {NULL, "host", "device", "shared"};
	int k = a->v.usm_kind;
	if (a->v.t.device.device_type != UB_DL_ONEAPI || k < 1 || k > 3)
		Py_RETURN_NONE;
	return PyUnicode_FromString(kinds[k]);
}

static PyObject *array_dlpack_device(Array *a, PyObject *unused);

static PyObject *array_device(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return array_dlpack_device(a, NULL);
}

static PyObject *array_data(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromUnsignedLongLong((unsigned long long)element0(&a->v));
}

static PyObject *array_offset(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLongLong((long long)(a->v.t.byte_offset / (uint64_t)itemsize_of(&a->v)));
}

static PyObject *array_readonly(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyBool_FromLong((a->v.flags & UB_DL_FLAG_READ_ONLY) != 0);
}

static Py_ssize_t array_len(Array *a)
{
	if (forked())
		return -1;
	if (a->v.t.ndim == 0) {
		PyErr_SetString(PyExc_TypeError, "len() of a 0-d array");
		return -1;
	}
	return (Py_ssize_t)a->v.t.shape[0];
}

/* ---- __dlpack__ ------------------------------------------------------------ */

/* pair reads an exact 2-tuple of exact ints that fit in long long; 0 for
 * anything else (Go then reports, or decides). */
static int pair(PyObject *v, long long *x, long long *y)
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

/* no_sync_stream: stream is exactly the int -1, the array API's "do not
 * synchronize". Anything else goes to Go. */
static int no_sync_stream(PyObject *stream)
{
	if (!PyLong_CheckExact(stream))
		return 0;
	int overflow;
	long v = PyLong_AsLongAndOverflow(stream, &overflow);
	return overflow == 0 && v == -1 && !PyErr_Occurred();
}

/* export_block fills a block with a's view (versioned with the given
 * minor, or legacy) whose deleter drops a reference to a; the caller makes
 * it live (export_live) once nothing can fail. NULL with an exception. */
static block *export_block(Array *a, int versioned, uint32_t minor)
{
	block *b = block_get();
	if (b == NULL) {
		PyErr_NoMemory();
		return NULL;
	}
	if (versioned) {
		b->m.versioned.version.major = def->major;
		b->m.versioned.version.minor = minor;
		b->m.versioned.manager_ctx = a;
		b->m.versioned.deleter = delete_versioned;
		b->m.versioned.flags = a->v.flags & UB_DL_FLAG_READ_ONLY;
		b->m.versioned.dl_tensor = a->v.t;
	} else {
		b->m.legacy.dl_tensor = a->v.t;
		b->m.legacy.manager_ctx = a;
		b->m.legacy.deleter = delete_legacy;
	}
	return b;
}

static void export_live(block *b, Array *a)
{
	b->magic = BLOCK_LIVE;
	live_exports++;
	Py_INCREF(a);
}

/* export_view makes a capsule of a's view. NULL with an exception. */
static PyObject *export_view(Array *a, int versioned, uint32_t minor)
{
	block *b = export_block(a, versioned, minor);
	if (b == NULL)
		return NULL;
	PyObject *cap = PyCapsule_New(b, versioned ? name_versioned : name_legacy, capsule_destructor);
	if (cap == NULL) {
		b->next = free_blocks;
		free_blocks = b;
		return NULL;
	}
	export_live(b, a);
	return cap;
}

/* minor_for answers max_version=(major, minor) as Go's NegotiateVersion
 * does (the table Go filled); 0 when Go must. */
static int minor_for(long long major, long long minor, uint32_t *out)
{
	if (major < 1 || minor < 0)
		return 0;
	if (major > (long long)def->major) {
		*out = def->minor_newer;
		return 1;
	}
	if (major == (long long)def->major && minor < UBX_MINOR_SLOTS) {
		*out = def->minor_for[minor];
		return 1;
	}
	return 0;
}

/* parse_kw matches vectorcall keywords against names (n of them) into out. */
static int parse_kw(const char *fname, PyObject *kwnames, PyObject *const *values, PyObject **names, PyObject **out,
		    int n)
{
	Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
	for (Py_ssize_t i = 0; i < nk; i++) {
		PyObject *k = PyTuple_GET_ITEM(kwnames, i);
		int j;
		for (j = 0; j < n && k != names[j]; j++)
			;
		if (j == n) {
			for (j = 0; j < n; j++) {
				int c = PyUnicode_Compare(k, names[j]);
				if (c == 0)
					break;
				if (c == -1 && PyErr_Occurred())
					return -1;
			}
		}
		if (j == n) {
			PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, k);
			return -1;
		}
		out[j] = values[i];
	}
	return 0;
}

static PyObject *array_dlpack(Array *a, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
	if (forked())
		return NULL;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	if (nargs != 0) {
		PyErr_Format(PyExc_TypeError, "__dlpack__() takes no positional arguments (%zd given)", nargs);
		return NULL;
	}
	PyObject *names[4] = {s_stream, s_max_version, s_dl_device, s_copy};
	PyObject *kw[4] = {NULL, NULL, NULL, NULL};
	if (kwnames != NULL && parse_kw("__dlpack__", kwnames, args, names, kw, 4) < 0)
		return NULL;
	PyObject *stream = kw[0], *maxv = kw[1], *dldev = kw[2], *copy = kw[3];
	/* The plain exports are the view's (Go made it, or C's import, with
	 * Export's rules); any other request is Go's. */
	int plain = !a->v.go_export;
	if (stream == NULL || stream == Py_None)
		plain = plain && !a->v.wait;
	else
		plain = plain && a->v.no_sync && no_sync_stream(stream);
	if (copy != NULL && copy != Py_None && copy != Py_False)
		plain = 0;
	long long x, y;
	if (plain && dldev != NULL && dldev != Py_None)
		plain = pair(dldev, &x, &y) && x == a->v.t.device.device_type && y == a->v.t.device.device_id;
	int versioned = 0;
	uint32_t minor = 0;
	if (plain && maxv != NULL && maxv != Py_None) {
		plain = pair(maxv, &x, &y) && x >= 0 && y >= 0;
		if (plain && x >= 1) {
			versioned = 1;
			plain = minor_for(x, y, &minor);
		}
	}
	if (plain && !versioned && (a->v.flags & UB_DL_FLAG_READ_ONLY))
		plain = 0; /* Go refuses: a legacy tensor cannot say read-only */
	if (plain)
		return export_view(a, versioned, minor);
	return go_object(ubx_go_dlpack(&a->v, a, stream, maxv, dldev, copy));
}

static PyObject *array_dlpack_device(Array *a, PyObject *unused)
{
	if (forked())
		return NULL;
	if (a->dev_tuple == NULL) {
		a->dev_tuple = Py_BuildValue("(ii)", (int)a->v.t.device.device_type, (int)a->v.t.device.device_id);
		if (a->dev_tuple == NULL)
			return NULL;
	}
	Py_INCREF(a->dev_tuple);
	return a->dev_tuple;
}

/* __sycl_usm_array_interface__ is Go's: it waits on the array's queue and
 * makes a fresh dict each time, as dpctl's usm_ndarray does; host memory has
 * none (AttributeError). */
static PyObject *array_sycl_queue(Array *a, void *unused);

/* __usm_ndarray__: the array as a dpnp.tensor.usm_ndarray over the same
 * memory (dpnp's protocol for objects that have one), made once from the
 * array's SUAI with dpctl's and dpnp's public calls, with the read-only
 * flag kept. dpnp.asarray and dpnp.tensor.asarray of an object with it
 * keep its memory; through the SUAI alone they copy. It needs dpnp.tensor
 * and dpctl.memory loaded (AttributeError otherwise: whoever asks has
 * them), and USM memory (AttributeError for host memory, as dpnp's own
 * arrays only exist on SYCL devices). */
static PyObject *array_suai(Array *a, void *unused);

static PyObject *array_usm_ndarray(Array *a, void *unused)
{
	if (forked())
		return NULL;
	if (a->usm_nd != NULL)
		return Py_NewRef(a->usm_nd);
	if (a->v.t.device.device_type != UB_DL_ONEAPI) {
		PyErr_SetString(PyExc_AttributeError, "__usm_ndarray__: the array is not USM (it lives on the host)");
		return NULL;
	}
	PyObject *dpt = PyImport_GetModule(s_dpnp_tensor), *dpm = dpt != NULL ? PyImport_GetModule(s_dpctl_memory) : NULL;
	if (dpt == NULL || dpm == NULL) {
		Py_XDECREF(dpt);
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_AttributeError, "__usm_ndarray__ needs dpnp.tensor and dpctl.memory, which are not imported");
		return NULL;
	}
	PyObject *r = NULL, *suai = NULL, *mem = NULL, *kw = NULL, *args = NULL;
	PyObject *as_mem = PyObject_GetAttrString(dpm, "as_usm_memory");
	PyObject *ctor = as_mem != NULL ? PyObject_GetAttrString(dpt, "usm_ndarray") : NULL;
	if (ctor == NULL)
		goto out;
	if ((suai = array_suai(a, NULL)) == NULL || (mem = PyObject_CallOneArg(as_mem, (PyObject *)a)) == NULL)
		goto out;
	PyObject *shape = PyDict_GetItemString(suai, "shape"), *typestr = PyDict_GetItemString(suai, "typestr"),
		 *strides = PyDict_GetItemString(suai, "strides");
	if (shape == NULL || typestr == NULL) {
		PyErr_SetString(PyExc_AttributeError, "__usm_ndarray__: the array's SUAI has no shape or typestr");
		goto out;
	}
	/* The offset is counted from the memory object's own start, which
	 * dpctl places at the lowest byte the array touches, not from the
	 * SUAI's data pointer (a sliced view's SUAI names its allocation and an
	 * offset into it): element 0 less that start, in elements. */
	PyObject *mptr = PyObject_GetAttrString(mem, "_pointer");
	if (mptr == NULL)
		goto out;
	unsigned long long start = PyLong_AsUnsignedLongLong(mptr);
	Py_DECREF(mptr);
	if (start == (unsigned long long)-1 && PyErr_Occurred())
		goto out;
	uintptr_t e0 = element0(&a->v);
	int64_t isz = itemsize_of(&a->v);
	if (e0 < start || (e0 - start) % (uint64_t)isz != 0) {
		PyErr_SetString(PyExc_AttributeError, "__usm_ndarray__: dpctl's memory object does not start where the array does");
		goto out;
	}
	args = PyTuple_Pack(1, shape);
	kw = args != NULL ? Py_BuildValue("{sOsOsOsL}", "dtype", typestr, "buffer", mem, "strides",
					  strides != NULL ? strides : Py_None, "offset", (long long)((e0 - start) / (uint64_t)isz))
			  : NULL;
	if (kw == NULL || (r = PyObject_Call(ctor, args, kw)) == NULL)
		goto out;
	if (a->v.flags & UB_DL_FLAG_READ_ONLY) {
		PyObject *flags = PyObject_GetAttrString(r, "flags");
		if (flags == NULL || PyObject_SetItem(flags, s_W, Py_False) < 0) {
			Py_XDECREF(flags);
			Py_CLEAR(r);
			goto out;
		}
		Py_DECREF(flags);
	}
	a->usm_nd = Py_NewRef(r);
out:
	Py_XDECREF(as_mem);
	Py_XDECREF(ctor);
	Py_XDECREF(suai);
	Py_XDECREF(mem);
	Py_XDECREF(args);
	Py_XDECREF(kw);
	Py_DECREF(dpt);
	Py_DECREF(dpm);
	return r;
}

/* __sycl_usm_array_interface__: Go makes the dict the first time (which
 * syclobj, or a refusal, with every rule), and the Array keeps it: its
 * fields describe the array for its whole life. Each call waits on the
 * array's queue first (Go, as dpctl's property does) and returns a copy,
 * so that a caller that edits its dict edits no one else's. A refusal is
 * never kept: Go is asked again. */
static PyObject *array_suai(Array *a, void *unused)
{
	if (forked())
		return NULL;
	if (a->suai != NULL) {
		if (a->v.wait && go_status(ubx_go_wait(a->v.handle)) != 0)
			return NULL;
		return PyDict_Copy(a->suai);
	}
	if (a->syclobj == NULL && a->v.t.device.device_type == UB_DL_ONEAPI) {
		/* Name a queue (made and kept now) rather than a device. */
		PyObject *q = go_queue(a);
		if (q == NULL) {
			if (!PyErr_ExceptionMatches(PyExc_AttributeError))
				return NULL;
			PyErr_Clear(); /* not a dpctl queue: Go names the device */
		}
		Py_XDECREF(q);
	}
	PyObject *d = go_object(ubx_go_suai(&a->v, a, a->syclobj));
	if (d != NULL && PyDict_CheckExact(d) && (a->suai = PyDict_Copy(d)) == NULL) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* dtype: a numpy.dtype where NumPy is loaded (and knows the type), else
 * the typestr where SUAI has one ('<f4'), else the DLPack dtype's name
 * ('bfloat16'). NumPy is never imported here. */
static PyObject *array_typestr(Array *a, void *unused)
{
	if (forked())
		return NULL;
	PyObject *s = go_object(ubx_go_typestr(&a->v));
	if (s == NULL)
		return NULL;
	PyObject *np = PyImport_GetModule(s_numpy);
	if (np == NULL) {
		if (PyErr_Occurred()) {
			Py_DECREF(s);
			return NULL;
		}
		return s; /* NumPy is not loaded */
	}
	PyObject *dt = PyObject_GetAttrString(np, "dtype");
	Py_DECREF(np);
	PyObject *r = dt != NULL ? PyObject_CallOneArg(dt, s) : NULL;
	Py_XDECREF(dt);
	if (r == NULL) {
		if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
			Py_DECREF(s);
			return NULL;
		}
		PyErr_Clear(); /* a type NumPy does not know ("data type not understood"): its name */
		return s;
	}
	Py_DECREF(s);
	return r;
}

/* repr_values is NumPy's repr of the array's values (NumPy summarises
 * large arrays), as "array([...], dtype=...)", or NULL with no exception
 * when NumPy is not loaded or cannot read them (device memory of more than
 * a thousand elements is not copied for a repr; an Exception on the way is
 * such a case). NULL with the exception for what no repr may swallow
 * (KeyboardInterrupt, SystemExit). */
static PyObject *repr_values(Array *a)
{
	PyObject *np = PyImport_GetModule(s_numpy);
	if (np == NULL)
		return NULL; /* not loaded, or the lookup's exception */
	int host = a->v.t.device.device_type != UB_DL_ONEAPI || a->v.usm_kind == 1 || a->v.usm_kind == 3;
	PyObject *r = NULL, *fn = NULL, *kw = NULL, *args = NULL, *v = NULL;
	if (!host && array_size_of(&a->v) > 1000)
		goto out;
	if ((fn = PyObject_GetAttrString(np, "from_dlpack")) == NULL || (args = PyTuple_Pack(1, (PyObject *)a)) == NULL ||
	    (kw = Py_BuildValue("{ss}", "device", "cpu")) == NULL || (v = PyObject_Call(fn, args, kw)) == NULL)
		goto out;
	r = PyObject_Repr(v);
out:
	if (r == NULL && PyErr_ExceptionMatches(PyExc_Exception))
		PyErr_Clear();
	Py_DECREF(np);
	Py_XDECREF(fn);
	Py_XDECREF(args);
	Py_XDECREF(kw);
	Py_XDECREF(v);
	return r;
}

/* The repr: the values as NumPy shows them (for USM with the device and
 * the USM kind, as dpnp's repr does), else the array's shape and type. */
static PyObject *array_repr(Array *a)
{
	if (forked())
		return NULL;
	PyObject *usm = array_usm_type(a, NULL), *dev = array_dlpack_device(a, NULL), *r = NULL;
	if (usm == NULL || dev == NULL)
		goto out;
	PyObject *vals = repr_values(a);
	if (vals == NULL && PyErr_Occurred())
		goto out;
	if (vals != NULL && PyUnicode_GetLength(vals) > 7) {
		/* "array(" ... ")" becomes "<type>(" ... [, device=..., usm_type=...] ")",
		 * NumPy's continuation rows indented under the longer name. */
		PyObject *inner = PyUnicode_Substring(vals, 6, PyUnicode_GetLength(vals) - 1);
		PyObject *inner2 = NULL;
		if (inner != NULL && PyUnicode_Tailmatch(vals, s_array_open, 0, 6, -1) == 1) {
			size_t pad = strlen(Py_TYPE(a)->tp_name) + 1;
			char spaces[256];
			if (pad > sizeof spaces - 2)
				pad = sizeof spaces - 2;
			spaces[0] = '\n';
			memset(spaces + 1, ' ', pad);
			spaces[pad + 1] = 0;
			PyObject *from = PyUnicode_FromString("\n      "), *to = PyUnicode_FromString(spaces);
			inner2 = from != NULL && to != NULL ? PyUnicode_Replace(inner, from, to, -1) : NULL;
			Py_XDECREF(from);
			Py_XDECREF(to);
			if (inner2 != NULL) {
				if (usm == Py_None)
					r = PyUnicode_FromFormat("%s(%U)", Py_TYPE(a)->tp_name, inner2);
				else
					r = PyUnicode_FromFormat("%s(%U, device=%R, usm_type=%R)", Py_TYPE(a)->tp_name, inner2,
								 dev, usm);
			}
		}
		Py_XDECREF(inner);
		Py_XDECREF(inner2);
		if (r == NULL && PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) {
			Py_DECREF(vals);
			goto out;
		}
		PyErr_Clear(); /* the plain repr below */
	}
	Py_XDECREF(vals);
	if (r == NULL) {
		PyObject *shape = array_shape(a, NULL), *dt = array_typestr(a, NULL);
		if (shape != NULL && dt != NULL)
			r = PyUnicode_FromFormat("%s(shape=%R, dtype=%R, usm_type=%R, device=%R)", Py_TYPE(a)->tp_name, shape,
						 dt, usm, dev);
		Py_XDECREF(shape);
		Py_XDECREF(dt);
	}
out:
	Py_XDECREF(usm);
	Py_XDECREF(dev);
	return r;
}

/* permuted is a view of a with its axes in the order perm: the same bytes
 * (data and byte_offset stay), shape and strides permuted. It holds a (its
 * memory and Go state), and has Go state of its own when a has (its queue
 * is waited on before an export). */
static PyObject *permuted(Array *a, const int32_t *perm)
{
	int32_t n = a->v.t.ndim;
	ubx_view v = a->v;
	int64_t dims[2 * UBX_MAX_NDIM];
	for (int32_t i = 0; i < n; i++) {
		dims[i] = a->v.t.shape[perm[i]];
		dims[n + i] = a->v.t.strides[perm[i]];
	}
	v.t.shape = dims;
	v.t.strides = dims + n;
	v.handle = 0;
	if (a->v.handle != 0) {
		v.handle = ubx_go_view_state(a->v.handle, dims, n);
		if (v.handle == 0)
			return go_failed();
	}
	Array *r = array_alloc(n);
	if (r == NULL) {
		if (v.handle != 0)
			ubx_go_release(v.handle);
		return NULL;
	}
	/* A view of a view holds the root: .T a million times is two Arrays,
	 * not a chain as long (NumPy's views do the same). */
	r->base = Py_NewRef(a->is_view ? a->base : (PyObject *)a);
	r->is_view = 1;
	set_view(r, &v);
	return (PyObject *)r;
}

/* T: the axes reversed (the array API's matrix transpose for 2-D). */
static PyObject *array_T(Array *a, void *unused)
{
	if (forked())
		return NULL;
	int32_t perm[UBX_MAX_NDIM], n = a->v.t.ndim;
	for (int32_t i = 0; i < n; i++)
		perm[i] = n - 1 - i;
	return permuted(a, perm);
}

/* mT: the last two axes swapped (a stack of matrices transposed). */
static PyObject *array_mT(Array *a, void *unused)
{
	if (forked())
		return NULL;
	int32_t perm[UBX_MAX_NDIM], n = a->v.t.ndim;
	if (n < 2) {
		PyErr_SetString(PyExc_ValueError, "mT needs an array of at least 2 dimensions");
		return NULL;
	}
	for (int32_t i = 0; i < n; i++)
		perm[i] = i;
	perm[n - 2] = n - 1;
	perm[n - 1] = n - 2;
	return permuted(a, perm);
}

/* ---- the buffer protocol (host memory) ----------------------------------- */

static int fill_buffer(Array *a, Py_buffer *view, int flags, const char *format);

/* The buffer protocol: C's alone for host-readable memory with nothing to
 * wait for (host memory, USM host or shared memory whose queue is never
 * busy) and a dtype with a format, from the table Go filled; Go's
 * otherwise (it waits on the array's queue, refuses device USM, and says
 * why a dtype has no format). */
static int array_getbuffer(Array *a, Py_buffer *view, int flags)
{
	view->obj = NULL;
	if (forked())
		return -1;
	const ubx_view *v = &a->v;
	int host = v->t.device.device_type == UB_DL_CPU ||
		   (v->t.device.device_type == UB_DL_ONEAPI && (v->usm_kind == 1 || v->usm_kind == 3));
	ub_dl_dtype dt = v->t.dtype;
	if (host && !v->wait && dt.lanes == 1 && dt.code < UBX_DTYPE_CODES && dt.bits % 8 == 0 &&
	    dt.bits / 8 < UBX_DTYPE_BYTES && ubx_buffer_format[dt.code][dt.bits / 8] != NULL)
		return fill_buffer(a, view, flags, ubx_buffer_format[dt.code][dt.bits / 8]);
	return go_status(ubx_go_buffer(&a->v, a, view, flags));
}

static void array_releasebuffer(Array *a, Py_buffer *view)
{
	PyMem_Free(view->internal); /* shape and strides in bytes (ubx_fill_buffer) */
}

/* ubx_fill_buffer fills view over a's host-accessible memory (Go checked
 * that it is, and waited on its queue): 0, or -1 with the exception in
 * *exc. */
int ubx_fill_buffer(void *arr, void *pyview, int flags, const char *format, void **exc)
{
	if (!gil_held("ubx_fill_buffer"))
		return -1;
	int r = fill_buffer(arr, pyview, flags, format);
	if (r < 0)
		take_error(exc);
	return r;
}

/* f_contiguous reports whether the byte strides in dims[n:2n] lay the
 * extents dims[0:n] out in Fortran order (extents of 1 may have any
 * stride; an empty array is contiguous). */
static int f_contiguous(const Py_ssize_t *dims, int32_t n, int64_t isz)
{
	for (int32_t i = 0; i < n; i++)
		if (dims[i] == 0)
			return 1;
	int64_t want = isz;
	for (int32_t i = 0; i < n; i++) {
		if (dims[i] != 1 && dims[n + i] != want)
			return 0;
		want *= dims[i];
	}
	return 1;
}

static int fill_buffer(Array *a, Py_buffer *view, int flags, const char *format)
{
	if ((flags & PyBUF_WRITABLE) && (a->v.flags & UB_DL_FLAG_READ_ONLY)) {
		PyErr_SetString(PyExc_BufferError, "the array is read-only");
		return -1;
	}
	int32_t n = a->v.t.ndim;
	int64_t isz = itemsize_of(&a->v);
	Py_ssize_t *dims = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(n > 0 ? n : 1));
	if (dims == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	for (int32_t i = 0; i < n; i++) {
		dims[i] = (Py_ssize_t)a->v.t.shape[i];
		dims[n + i] = (Py_ssize_t)(a->v.t.strides[i] * isz);
	}
	/* The contiguity a consumer asks for, as CPython's own exporters read
	 * the flags: each request is its bits all set; without strides the
	 * consumer walks the memory in C order. */
	int c = c_contiguous(&a->v), f = f_contiguous(dims, n, isz);
	const char *refuse = NULL;
	if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS || (flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
		if (!c)
			refuse = "the array is not C-contiguous";
	} else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS) {
		if (!f)
			refuse = "the array is not Fortran-contiguous";
	} else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c && !f) {
		refuse = "the array is neither C- nor Fortran-contiguous";
	}
	if (refuse != NULL) {
		PyMem_Free(dims);
		PyErr_SetString(PyExc_BufferError, refuse);
		return -1;
	}
	view->buf = (void *)element0(&a->v);
	view->obj = (PyObject *)a;
	Py_INCREF(a);
	view->len = (Py_ssize_t)(array_size_of(&a->v) * isz);
	view->readonly = (a->v.flags & UB_DL_FLAG_READ_ONLY) != 0;
	view->itemsize = (Py_ssize_t)isz;
	view->format = (flags & PyBUF_FORMAT) ? (char *)format : NULL;
	view->ndim = n;
	view->shape = (flags & PyBUF_ND) == PyBUF_ND ? dims : NULL;
	view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? dims + n : NULL;
	view->suboffsets = NULL;
	view->internal = dims;
	return 0;
}

/* ---- Array methods and type ----------------------------------------------- */

/* __array__(dtype=None, copy=None): NumPy's protocol, for the memory the
 * buffer protocol cannot give (device USM) and for NumPy's copy keyword:
 * numpy.from_dlpack of the array on the host (a copy only where the host
 * cannot read the memory), then astype for a dtype. copy=False where a copy
 * is needed is a ValueError, as NumPy's protocol asks. NumPy is loaded
 * (it called us); it is not imported here. */
static PyObject *array_array(Array *a, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
	if (forked())
		return NULL;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	if (nargs > 1) {
		PyErr_Format(PyExc_TypeError, "__array__() takes at most 1 positional argument (%zd given)", nargs);
		return NULL;
	}
	PyObject *names[2] = {s_dtype, s_copy};
	PyObject *kw[2] = {nargs > 0 ? args[0] : NULL, NULL};
	PyObject *given[2] = {NULL, NULL};
	if (kwnames != NULL && parse_kw("__array__", kwnames, args + nargs, names, given, 2) < 0)
		return NULL;
	if (given[0] != NULL) {
		if (kw[0] != NULL) {
			PyErr_SetString(PyExc_TypeError, "__array__() got multiple values for argument 'dtype'");
			return NULL;
		}
		kw[0] = given[0];
	}
	kw[1] = given[1];
	PyObject *np = PyImport_GetModule(s_numpy);
	if (np == NULL) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError, "__array__ needs NumPy, which is not loaded");
		return NULL;
	}
	PyObject *fn = PyObject_GetAttrString(np, "from_dlpack");
	Py_DECREF(np);
	if (fn == NULL)
		return NULL;
	PyObject *copy = kw[1] != NULL ? kw[1] : Py_None;
	PyObject *dev = PyUnicode_FromString("cpu");
	PyObject *kwargs = dev != NULL ? Py_BuildValue("{sOsO}", "device", dev, "copy", copy) : NULL;
	PyObject *argt = PyTuple_Pack(1, (PyObject *)a);
	PyObject *r = kwargs != NULL && argt != NULL ? PyObject_Call(fn, argt, kwargs) : NULL;
	Py_XDECREF(dev);
	Py_XDECREF(kwargs);
	Py_XDECREF(argt);
	Py_DECREF(fn);
	if (r == NULL) {
		if (copy == Py_False && PyErr_ExceptionMatches(PyExc_BufferError)) {
			PyObject *et, *ev, *tb;
			PyErr_Fetch(&et, &ev, &tb);
			PyErr_NormalizeException(&et, &ev, &tb);
			PyErr_SetString(PyExc_ValueError,
					"the array cannot be made a NumPy array without a copy (copy=False): its memory "
					"is not host-accessible");
			PyObject *t2, *v2, *tb2;
			PyErr_Fetch(&t2, &v2, &tb2);
			PyErr_NormalizeException(&t2, &v2, &tb2);
			PyException_SetCause(v2, ev); /* steals ev */
			Py_XDECREF(et);
			Py_XDECREF(tb);
			PyErr_Restore(t2, v2, tb2);
		}
		return NULL;
	}
	if (kw[0] != NULL && kw[0] != Py_None) {
		PyObject *ct = PyObject_GetAttrString(r, "astype");
		PyObject *cargs = ct != NULL ? PyTuple_Pack(1, kw[0]) : NULL;
		PyObject *ckw = cargs != NULL ? Py_BuildValue("{sO}", "copy", Py_False) : NULL;
		PyObject *conv = ckw != NULL ? PyObject_Call(ct, cargs, ckw) : NULL;
		Py_XDECREF(ct);
		Py_XDECREF(cargs);
		Py_XDECREF(ckw);
		int same = conv == r; /* astype(copy=False) of the same dtype */
		Py_DECREF(r);
		if (conv == NULL)
			return NULL;
		if (copy == Py_False && !same) {
			Py_DECREF(conv);
			PyErr_SetString(PyExc_ValueError, "the array cannot be converted to that dtype without a copy (copy=False)");
			return NULL;
		}
		r = conv;
	}
	return r;
}

static PyMethodDef array_methods[] = {
	{"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack, METH_FASTCALL | METH_KEYWORDS,
	 "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
	 "Export the array as a DLPack capsule (the array API's __dlpack__)."},
	{"__dlpack_device__", (PyCFunction)array_dlpack_device, METH_NOARGS,
	 "__dlpack_device__($self, /)\n--\n\n(DLPack device type, device id) of the array."},
	{"__array__", (PyCFunction)(void (*)(void))array_array, METH_FASTCALL | METH_KEYWORDS,
	 "__array__($self, /, dtype=None, copy=None)\n--\n\n"
	 "The array as a NumPy array: a view of memory the host reads, else (device USM, another dtype) a copy.\n"
	 "NumPy's copy keyword: False never copies (ValueError where a copy is needed), True always does."},
	{NULL},
};

static PyGetSetDef array_getset[] = {
	{"__sycl_usm_array_interface__", (getter)array_suai, NULL,
	 "The SUAI dict, made after waiting on the array's queue (AttributeError for host memory).", NULL},
	{"shape", (getter)array_shape, NULL, "Extents, a tuple of ints.", NULL},
	{"ndim", (getter)array_ndim, NULL, "Number of dimensions.", NULL},
	{"size", (getter)array_size, NULL, "Number of elements.", NULL},
	{"itemsize", (getter)array_itemsize, NULL, "Bytes per element.", NULL},
	{"nbytes", (getter)array_nbytes, NULL, "Bytes of all elements (size * itemsize).", NULL},
	{"dtype", (getter)array_typestr, NULL,
	 "The element type: a numpy.dtype where NumPy is loaded and knows it, else its typestr ('|f4') where "
	 "SUAI has one, else the DLPack dtype's name ('bfloat16').",
	 NULL},
	{"strides", (getter)array_strides, NULL,
	 "Strides in elements, not bytes, as dpctl's usm_ndarray gives them: always a tuple, C-contiguous arrays "
	 "included.",
	 NULL},
	{"__usm_ndarray__", (getter)array_usm_ndarray, NULL,
	 "The array as a dpnp.tensor.usm_ndarray over the same memory (USM only), which dpnp.asarray and "
	 "dpnp.tensor.asarray take without a copy.",
	 NULL},
	{"sycl_queue", (getter)array_sycl_queue, NULL,
	 "The dpctl.SyclQueue of a USM array (the one its __sycl_usm_array_interface__ names); AttributeError for "
	 "host memory.",
	 NULL},
	{"T", (getter)array_T, NULL, "The array with its axes reversed (a view: no copy).", NULL},
	{"mT", (getter)array_mT, NULL, "The array with its last two axes swapped (a view: no copy).", NULL},
	{"usm_type", (getter)array_usm_type, NULL,
	 "'device', 'shared' or 'host' for USM; None for host memory that is not USM.", NULL},
	{"device", (getter)array_device, NULL, "(DLPack device type, device id).", NULL},
	{"data", (getter)array_data, NULL, "Address of element 0.", NULL},
	{"offset", (getter)array_offset, NULL,
	 "Elements from the data pointer of the array's DLPack export to element 0: 0, except with negative strides, "
	 "where that pointer is the lowest byte the array touches (__sycl_usm_array_interface__ has an offset of its "
	 "own, from its own data pointer).",
	 NULL},
	{"readonly", (getter)array_readonly, NULL, "Whether the memory must not be written.", NULL},
	{NULL},
};

static PyMemberDef array_members[] = {
	{"__weaklistoffset__", T_PYSSIZET, offsetof(Array, weakrefs), READONLY},
	{NULL},
};

static PyType_Slot array_slots[] = {
	{Py_tp_doc, "A zero-copy view of host memory or SYCL USM, made by this module.\n\n"
		    "It is a DLPack producer (__dlpack__, __dlpack_device__, and the DLPack 1.3 C\n"
		    "exchange API __dlpack_c_exchange_api__), exposes the buffer protocol for\n"
		    "memory the host reads and __sycl_usm_array_interface__ for USM, so\n"
		    "numpy, dpnp, dpctl, jax, tvm-ffi and mpi4py take it without a copy."},
	{Py_tp_dealloc, array_dealloc},
	{Py_tp_traverse, array_traverse},
	{Py_tp_clear, array_clear},
	{Py_tp_repr, array_repr},
	{Py_tp_methods, array_methods},
	{Py_tp_getset, array_getset},
	{Py_tp_members, array_members},
	{Py_sq_length, array_len},
	{Py_bf_getbuffer, array_getbuffer},
	{Py_bf_releasebuffer, array_releasebuffer},
	{0, NULL},
};

static int is_array(PyObject *o)
{
	return Py_TYPE(o)->tp_dealloc == (destructor)array_dealloc;
}

/* ---- the DLPack C exchange API (producer) --------------------------------- */

/* xch_array checks that obj is one of this module's Arrays whose view may
 * be exported without a stream, waiting on its queue where the view says
 * so: 0, or -1 with an exception. */
static int xch_array(void *obj, Array **out)
{
	if (forked())
		return -1;
	if (obj == NULL) {
		PyErr_SetString(PyExc_ValueError, "DLPack exchange API: py_object is NULL");
		return -1;
	}
	if (!is_array(obj)) {
		PyErr_Format(PyExc_TypeError, "DLPack exchange API: expected a %.200s, got %.200s",
			     g_array_type != NULL ? g_array_type->tp_name : "Array", Py_TYPE((PyObject *)obj)->tp_name);
		return -1;
	}
	Array *a = obj;
	if (a->v.go_export)
		return go_status(ubx_go_exchange_refuse(&a->v, a)); /* raises Go's refusal */
	if (a->v.handle != 0 && go_status(ubx_go_exchange_wait(a->v.handle)) < 0)
		return -1;
	*out = a;
	return 0;
}

/* xch_writable is xch_array for the table's exports, which refuse a
 * read-only array: the managed tensor would carry READ_ONLY, but the
 * table's consumers drop it (tvm-ffi 0.1 makes every tensor it takes
 * writable), and a bare DLTensor has no flags at all. A consumer then
 * falls back to __dlpack__, whose versioned capsule carries the flag to a
 * consumer that reads it (RATIONALE.md, "Read-only survives every format,
 * or the format is refused"). */
static int xch_writable(void *obj, void *out, const char *fname, Array **a)
{
	if (out == NULL) {
		PyErr_Format(PyExc_ValueError, "%s: out is NULL", fname);
		return -1;
	}
	if (xch_array(obj, a) < 0)
		return -1;
	if ((*a)->v.flags & UB_DL_FLAG_READ_ONLY) {
		PyErr_SetString(PyExc_BufferError,
				"a read-only array is not handed out through the DLPack C exchange API, whose consumers "
				"drop the READ_ONLY flag; ask __dlpack__(max_version=(1, 0)) instead");
		return -1;
	}
	return 0;
}

static int xch_from_py(void *obj, ub_dl_managed_versioned **out)
{
	Array *a;
	if (xch_writable(obj, out, "managed_tensor_from_py_object_no_sync", &a) < 0)
		return -1;
	block *b = export_block(a, 1, def->minor_newer);
	if (b == NULL)
		return -1;
	export_live(b, a);
	exchange_exports++;
	*out = &b->m.versioned;
	return 0;
}

static int xch_dltensor_from_py(void *obj, ub_dl_tensor *out)
{
	Array *a;
	if (xch_writable(obj, out, "dltensor_from_py_object_no_sync", &a) < 0)
		return -1;
	*out = a->v.t; /* shape and strides live as long as the array */
	return 0;
}

static PyObject *new_array_from_result(ubx_result *r);

static int xch_to_py(ub_dl_managed_versioned *tensor, void **out_py_object)
{
	if (tensor == NULL || out_py_object == NULL || forked()) {
		if (tensor != NULL)
			call_deleter(tensor, 1); /* it was given to us */
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "managed_tensor_to_py_object_no_sync: tensor or out is NULL");
		return -1;
	}
	Array *a;
	int r0 = array_over(tensor, 1, NULL, &a);
	if (r0 < 0) {
		call_deleter(tensor, 1);
		return -1;
	}
	if (r0 > 0) {
		take_tensor(a, tensor, 1);
		*out_py_object = a;
		return 0;
	}
	ubx_result *res = PyMem_Calloc(1, sizeof(ubx_result));
	if (res == NULL) {
		call_deleter(tensor, 1);
		PyErr_NoMemory();
		return -1;
	}
	PyObject *r = NULL;
	if (go_status(ubx_go_import_managed(tensor, res)) == 0) /* Go deletes it on error */
		r = new_array_from_result(res);
	PyMem_Free(res);
	if (r == NULL)
		return -1;
	*out_py_object = r;
	return 0;
}

static int xch_current_work_stream(int32_t device_type, int32_t device_id, void **out)
{
	PyGILState_STATE gs = PyGILState_Ensure();
	int r = forked() ? -1 : go_status(ubx_go_work_stream(device_type, device_id, out));
	PyGILState_Release(gs);
	return r;
}

static int xch_allocator(ub_dl_tensor *prototype, ub_dl_managed_versioned **out, void *error_ctx,
			 void (*SetError)(void *error_ctx, const char *kind, const char *message))
{
	if (forked_flag || !Py_IsInitialized()) {
		if (SetError != NULL)
			SetError(error_ctx, "RuntimeError", forked_flag ? fork_message : "the Python interpreter is not running");
		return -1;
	}
	char *kind = NULL, *msg = NULL;
	PyGILState_STATE gs = PyGILState_Ensure();
	int r = ubx_go_alloc(prototype, out, &kind, &msg);
	PyGILState_Release(gs);
	if (r != 0 && SetError != NULL)
		SetError(error_ctx, kind != NULL ? kind : "RuntimeError", msg != NULL ? msg : "allocation failed");
	free(kind);
	free(msg);
	return r == 0 ? 0 : -1;
}

/* The version of dlpack.h this table follows; its tensors carry the
 * module's own (def->major, minor). */
static ub_dl_exchange_api exchange_api = {
	.header = {.version = {.major = 1, .minor = 3}, .prev_api = NULL},
	.managed_tensor_allocator = xch_allocator,
	.managed_tensor_from_py_object_no_sync = xch_from_py,
	.managed_tensor_to_py_object_no_sync = xch_to_py,
	.dltensor_from_py_object_no_sync = xch_dltensor_from_py,
	.current_work_stream = xch_current_work_stream,
};

/* ---- reading arguments ----------------------------------------------------- */

static int mro_lookup(PyTypeObject *tp, PyObject *name, int *callable);

/* type_has reports whether obj's type (or a base) defines name, without
 * calling anything: 1, 0, or -1 with an exception. An instance's attribute
 * comes from its class's MRO whatever the metaclass (a metaclass's own
 * attributes are the class's, not the instance's): ctypes arrays and ABC
 * subclasses are looked up like any other type. */
static int type_has(PyTypeObject *tp, PyObject *name)
{
	int callable;
	return mro_lookup(tp, name, &callable);
}

/* type_attr reports whether type(obj).name exists, as a lookup on the type
 * finds it: the class's MRO, then its metaclass's (the DLPack exchange
 * table is looked up on Py_TYPE(obj), where a metaclass property answers).
 * 1, 0, or -1 with an exception. */
static int type_attr(PyTypeObject *tp, PyObject *name)
{
	int r = type_has(tp, name);
	if (r != 0 || Py_TYPE(tp) == &PyType_Type)
		return r;
	return type_has(Py_TYPE(tp), name);
}

/* type_method reports whether tp's class dict (or a base's) holds a
 * callable name (a function, a method descriptor), so that calling it as a
 * method does what Go's lookup would: 1, 0 (Go decides: missing, None, a
 * property), or -1 with an exception. */
static int type_method(PyTypeObject *tp, PyObject *name)
{
	int callable;
	int r = mro_lookup(tp, name, &callable);
	return r <= 0 ? r : callable;
}

/* mro_lookup finds name in the class dicts along tp's MRO, calling
 * nothing: 1 with *callable (the value is a function or a method
 * descriptor, not a class), 0 when no class defines it, -1 with an
 * exception. */
static int mro_lookup(PyTypeObject *tp, PyObject *name, int *callable)
{
	PyObject *mro = tp->tp_mro;
	if (mro == NULL || !PyTuple_Check(mro))
		return 0;
	Py_ssize_t n = PyTuple_GET_SIZE(mro);
	for (Py_ssize_t i = 0; i < n; i++) {
		PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
#if PY_VERSION_HEX >= 0x030C0000
		PyObject *d = PyType_GetDict(t);
#else
		PyObject *d = t->tp_dict;
		Py_XINCREF(d);
#endif
		if (d == NULL)
			continue;
		PyObject *v = PyDict_GetItemWithError(d, name);
		*callable = v != NULL && PyCallable_Check(v) && !PyType_Check(v);
		Py_DECREF(d);
		if (v != NULL)
			return 1;
		if (PyErr_Occurred())
			return -1;
	}
	return 0;
}

/* ---- what a type defines ---------------------------------------------------- */

/* The facts the argument readers ask of an object's type: which protocols
 * its class (or a base) defines. Looking them up walks the MRO's dicts,
 * five names at two or more dicts each; a type's facts are kept in a small
 * table for as long as CPython's version tag of the type holds. CPython
 * gives a type a new tag whenever it or a base changes (PyType_Modified:
 * an attribute set or deleted, __bases__ assigned) and never reuses one, so
 * a type that gains __sycl_usm_array_interface__ after a call is looked up
 * again (test_host_import.py). Types without a valid tag, and types whose
 * metaclass is not type (a change to the metaclass leaves the class's tag
 * as it is, and the exchange table is looked up there too), are looked up
 * each time. */
enum {
	FACT_SUAI = 1,          /* __sycl_usm_array_interface__ */
	FACT_EXCHANGE = 2,      /* a DLPack C exchange table, under either name */
	FACT_DLPACK = 4,        /* a callable __dlpack__ */
	FACT_DLPACK_DEVICE = 8, /* a callable __dlpack_device__ */
	FACT_NO_STREAM = 16,    /* numpy.ndarray: never on a device with streams */
};

typedef struct {
	PyTypeObject *tp;
	unsigned int tag;
	unsigned int facts;
} type_facts_entry;

#define TYPE_FACTS_SLOTS 16
static type_facts_entry type_facts_table[TYPE_FACTS_SLOTS]; /* guarded by the GIL */

/* numpy.ndarray itself (not a subclass, which may define its own
 * __dlpack_device__): a static type of that name. NumPy holds host memory
 * only (kDLCPU, and the CUDA and ROCm host and managed memory its
 * from_dlpack takes), never memory of a device with streams: its
 * __dlpack__ needs no stream, and the tensor says the device. */
static int is_numpy_ndarray(PyTypeObject *tp)
{
	return !(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && strcmp(tp->tp_name, "numpy.ndarray") == 0;
}

/* type_facts writes tp's facts to *out: 0, or -1 with an exception. */
static int type_facts(PyTypeObject *tp, unsigned int *out)
{
	unsigned int tag = 0;
	if (Py_TYPE(tp) == &PyType_Type && (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
		tag = tp->tp_version_tag;
	type_facts_entry *e = &type_facts_table[((uintptr_t)tp >> 6) % TYPE_FACTS_SLOTS];
	if (tag != 0 && e->tp == tp && e->tag == tag) {
		*out = e->facts;
		return 0;
	}
	unsigned int f = 0;
	int r = type_has(tp, s_suai);
	if (r < 0)
		return -1;
	f |= r ? FACT_SUAI : 0;
	r = type_attr(tp, s_exchange);
	if (r == 0)
		r = type_attr(tp, s_exchange_int);
	if (r < 0)
		return -1;
	f |= r ? FACT_EXCHANGE : 0;
	if ((r = type_method(tp, s_dlpack)) < 0)
		return -1;
	f |= r ? FACT_DLPACK : 0;
	if ((r = type_method(tp, s_dlpack_device)) < 0)
		return -1;
	f |= r ? FACT_DLPACK_DEVICE : 0;
	if (is_numpy_ndarray(tp))
		f |= FACT_NO_STREAM;
	/* A key's __eq__ in a class dict may have run and changed the type
	 * meanwhile: then its tag is no longer the one read above. */
	if (tag != 0 && (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) && tp->tp_version_tag == tag) {
		e->tp = tp;
		e->tag = tag;
		e->facts = f;
	}
	*out = f;
	return 0;
}

/* What C holds of an array argument during the call (RATIONALE.md, "One
 * owner per reference: what C holds of an argument"). The hold is in one
 * of three states, and every state owns what it names:
 *  - HOLD_NONE: nothing (the argument is one of this module's Arrays, which
 *    the caller's reference keeps alive for the call, or Go read it);
 *  - HOLD_BUFFER / HOLD_MANAGED: the buffer view C took, or the producer's
 *    tensor C imported (its deleter runs once, when the hold is released);
 *  - HOLD_OBJECT: a reference to a NumPy array read in place (read_numpy):
 *    the array owns its memory;
 *  - HOLD_SUAI: the argument's __sycl_usm_array_interface__ value and
 *    its values, references (read_suai), which Go reads during the call;
 *  - HOLD_ARRAY: an Array that owns that buffer, tensor or NumPy array
 *    now, and one reference to it. A kept view (Go's Keep) and a result
 *    over the argument each own a reference of their own to this Array.
 * A hold moves from BUFFER or MANAGED to ARRAY only by giving the resource
 * to the Array it then references (hold_array): nothing is handed over by
 * emptying the hold, so no state of it names memory it does not keep. */
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

/* suai_clear drops what read_suai took. */
static void suai_clear(ubx_suai *s)
{
	if (s->looked)
		for (int i = 0; i < UBX_SUAI_KEYS; i++)
			Py_XDECREF((PyObject *)s->vals[i]);
	s->looked = 0;
	PyObject *d = s->dict;
	s->dict = NULL;
	Py_XDECREF(d);
}

static void hold_release(hold *h)
{
	if (h->kind == HOLD_NONE && h->capsule == NULL && h->dims == NULL)
		return;
	/* Releasing may run Python code (a buffer's __release_buffer__, the
	 * deleter, __del__ of an Array's base): a failed call's exception is
	 * set aside meanwhile (call_deleter keeps it too). A NumPy array read
	 * in place is let go the same way. */
	PyObject *et = NULL, *ev = NULL, *tb = NULL;
	int pending = h->kind != HOLD_MANAGED && h->kind != HOLD_NONE && PyErr_Occurred() != NULL;
	if (pending)
		PyErr_Fetch(&et, &ev, &tb);
	switch (h->kind) {
	case HOLD_BUFFER:
		PyBuffer_Release(&h->u.buf);
		break;
	case HOLD_MANAGED:
		live_c_imports--;
		call_deleter(h->u.managed.m, h->u.managed.versioned);
		break;
	case HOLD_ARRAY:
		Py_DECREF(h->u.array);
		break;
	case HOLD_OBJECT:
		Py_DECREF(h->u.obj);
		break;
	case HOLD_SUAI:
		suai_clear(&h->u.suai);
		break;
	}
	h->kind = HOLD_NONE;
	Py_CLEAR(h->capsule);
	if (h->dims != NULL && h->dims != h->inline_dims)
		free(h->dims);
	h->dims = NULL;
	if (pending)
		PyErr_Restore(et, ev, tb);
}

/* hold_dims gives h room for ndim dimensions (shape and strides). */
static int64_t *hold_dims(hold *h, int32_t ndim)
{
	if (h->dims == NULL) {
		h->dims = ndim <= INLINE_NDIM ? h->inline_dims : malloc(sizeof(int64_t) * 2 * (size_t)ndim);
		if (h->dims == NULL)
			PyErr_NoMemory();
	}
	return h->dims;
}

/* format_dtype maps a native buffer format to a DLPack dtype; 0 if there
 * is none. */
static int format_dtype(const char *f, Py_ssize_t itemsize, ub_dl_dtype *dt)
{
	if (f == NULL)
		f = "B";
	if (*f == '@' || *f == '=' || (*f == '<' && PY_LITTLE_ENDIAN) || (*f == '>' && PY_BIG_ENDIAN) ||
	    (*f == '!' && PY_BIG_ENDIAN))
		f++;
	int cplx = *f == 'Z';
	if (cplx)
		f++;
	if (f[0] == 0 || f[1] != 0)
		return 0;
	uint8_t code;
	switch (f[0]) {
	case '?':
		code = 6;
		break;
	case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
		code = 0;
		break;
	case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
		code = 1;
		break;
	case 'e': case 'f': case 'd':
		code = cplx ? 5 : 2;
		break;
	default:
		return 0;
	}
	if (cplx && code != 5)
		return 0;
	if (itemsize <= 0 || itemsize > 16)
		return 0;
	dt->code = code;
	dt->bits = (uint8_t)(itemsize * 8);
	dt->lanes = 1;
	return 1;
}

/* read_buffer reads o's buffer (host memory) into val: 1 done, 0 when o
 * has none, -1 with an exception. */
static int read_buffer(PyObject *o, int writable, int has_dlpack, hold *h, ubx_value *val)
{
	if (PyObject_GetBuffer(o, &h->u.buf, PyBUF_RECORDS_RO) < 0) {
		/* A buffer the exporter refuses (NumPy's datetime64: "cannot
		 * include dtype 'M' in a buffer") is the answer "not through the
		 * buffer protocol" when the object has DLPack too: Go asks that,
		 * and says what the producer refuses. */
		if (has_dlpack && (PyErr_ExceptionMatches(PyExc_BufferError) || PyErr_ExceptionMatches(PyExc_ValueError) ||
				   PyErr_ExceptionMatches(PyExc_TypeError))) {
			PyErr_Clear();
			val->kind = UBX_V_OBJECT;
			return 1;
		}
		return -1;
	}
	h->kind = HOLD_BUFFER;
	Py_buffer *b = &h->u.buf;
	ub_dl_dtype dt;
	if (!format_dtype(b->format, b->itemsize, &dt) || b->suboffsets != NULL || b->ndim > UBX_MAX_NDIM) {
		val->kind = UBX_V_OBJECT; /* Go reports what is wrong with it */
		return 1;
	}
	int64_t *d = hold_dims(h, b->ndim);
	if (d == NULL)
		return -1;
	/* The buffer as a DLPack tensor, read with the import's rules. */
	int64_t shape[UBX_MAX_NDIM], strides[UBX_MAX_NDIM];
	/* Strides in bytes to elements; a shift for the usual power-of-two
	 * item sizes (a division is dozens of cycles). */
	Py_ssize_t isz = b->itemsize;
	int shift = (isz & (isz - 1)) == 0 ? __builtin_ctzll((unsigned long long)isz) : -1;
	for (int i = 0; i < b->ndim; i++) {
		shape[i] = b->shape != NULL ? (int64_t)b->shape[i] : (int64_t)(b->len / isz);
		Py_ssize_t s = b->strides != NULL ? b->strides[i] : 0;
		if (shift >= 0 ? (s & (isz - 1)) != 0 : s % isz != 0) {
			val->kind = UBX_V_OBJECT; /* strides that are not whole elements: Go refuses */
			return 1;
		}
		strides[i] = shift >= 0 ? s >> shift : s / isz;
	}
	ub_dl_managed_versioned m = {0};
	m.version.major = 1;
	m.flags = b->readonly ? UB_DL_FLAG_READ_ONLY : 0;
	m.dl_tensor.data = b->buf;
	m.dl_tensor.device.device_type = UB_DL_CPU;
	m.dl_tensor.ndim = b->ndim;
	m.dl_tensor.dtype = dt;
	m.dl_tensor.shape = shape;
	m.dl_tensor.strides = b->strides != NULL ? strides : NULL;
	if (!ubx_import_host(&m, 1, &val->v, d, b->ndim)) {
		val->kind = UBX_V_OBJECT;
		return 1;
	}
	val->kind = UBX_V_ARRAY;
	(void)writable;
	return 1;
}

/* ---- NumPy arrays, read in place ------------------------------------------- */

/* A NumPy array argument is read from the array object itself, as NumPy's
 * own C API macros read it (PyArray_DATA, _NDIM, _DIMS, _STRIDES, _FLAGS,
 * PyArray_DESCR()->type_num and ->byteorder), rather than through the
 * buffer protocol, whose export builds a format string and a shape and
 * strides of its own on every call: most of what a call of a Go function
 * with a NumPy argument cost (RATIONALE.md, "NumPy arrays read in place").
 * The layout is NumPy's public ABI, PyArrayObject_fields and the head of
 * PyArray_Descr, the same in NumPy 1.x and 2.x for every field read here;
 * NumPy's headers are not needed to build. It is trusted for one type
 * object only, numpy.ndarray itself, once a first array of it read both
 * ways (here, and through its buffer protocol) gave the same view
 * (numpy_layout_holds); a NumPy whose layout differs is read through the
 * buffer protocol, as every other exporter. test/extmod/test_numpy.py holds
 * the two reads equal over arrays of every dtype, layout and flag. */
typedef struct {
	PyObject_HEAD
	char *data;
	int nd;
	Py_ssize_t *dimensions;
	Py_ssize_t *strides;
	PyObject *base;
	PyObject *descr;
	int flags;
} np_array_fields;

typedef struct {
	PyObject_HEAD
	PyTypeObject *typeobj;
	char kind, type, byteorder, former_flags;
	int type_num;
} np_descr_head;

#define NP_ARRAY_WRITEABLE 0x0400

/* The DLPack dtype of a NumPy type number of the numeric types, NumPy's
 * NPY_TYPES (bool, the C integers of an LP64 platform, float16/32/64,
 * complex64/128); bits 0 for the rest (long double, objects, strings,
 * datetimes, user types: the buffer protocol and Go decide). */
static const ub_dl_dtype np_dtypes[24] = {
	[0] = {6, 8, 1},   [1] = {0, 8, 1},   [2] = {1, 8, 1},    [3] = {0, 16, 1},  [4] = {1, 16, 1},
	[5] = {0, 32, 1},  [6] = {1, 32, 1},  [7] = {0, 64, 1},   [8] = {1, 64, 1},  [9] = {0, 64, 1},
	[10] = {1, 64, 1}, [11] = {2, 32, 1}, [12] = {2, 64, 1},  [14] = {5, 64, 1}, [15] = {5, 128, 1},
	[23] = {2, 16, 1},
};

/* numpy_type is numpy.ndarray once its layout was checked (NULL before);
 * numpy_refused is set when the check failed. Guarded by the GIL. */
static PyTypeObject *numpy_type;
static int numpy_refused;

/* np_tensor reads the NumPy array o into a DLPack tensor (shape and strides
 * in elements, into the given arrays, at most UBX_MAX_NDIM) and its
 * read-only flag: 1, or 0 when it is not one read in place (a dtype
 * outside np_dtypes, another byte order, strides that are not whole
 * elements). */
static int np_tensor(PyObject *o, ub_dl_managed_versioned *m, int64_t *shape, int64_t *strides)
{
	const np_array_fields *a = (const np_array_fields *)o;
	const np_descr_head *d = (const np_descr_head *)a->descr;
	if (d == NULL || a->nd < 0 || a->nd > UBX_MAX_NDIM || d->type_num < 0 || d->type_num >= 24)
		return 0;
	ub_dl_dtype dt = np_dtypes[d->type_num];
	if (dt.bits == 0 || (d->byteorder != '=' && d->byteorder != '|' && d->byteorder != (PY_LITTLE_ENDIAN ? '<' : '>')))
		return 0;
	/* Byte strides to element strides by a shift: every type of np_dtypes
	 * is 1, 2, 4, 8 or 16 bytes, and a division by a variable (two per
	 * dimension, a remainder and a quotient) costs tens of cycles, a
	 * tenth of a whole call. A stride that is a whole number of elements
	 * shifts to the exact quotient, negative ones too. */
	int shift = __builtin_ctz((unsigned)dt.bits) - 3;
	int64_t mask = ((int64_t)1 << shift) - 1;
	for (int i = 0; i < a->nd; i++) {
		int64_t st = (int64_t)a->strides[i];
		if ((st & mask) != 0)
			return 0;
		shape[i] = (int64_t)a->dimensions[i];
		strides[i] = st >> shift;
	}
	memset(m, 0, sizeof *m);
	m->version.major = 1;
	m->flags = (a->flags & NP_ARRAY_WRITEABLE) ? 0 : UB_DL_FLAG_READ_ONLY;
	m->dl_tensor.data = a->data;
	m->dl_tensor.device.device_type = UB_DL_CPU;
	m->dl_tensor.ndim = a->nd;
	m->dl_tensor.dtype = dt;
	m->dl_tensor.shape = shape;
	m->dl_tensor.strides = a->nd > 0 ? strides : NULL;
	return 1;
}

/* numpy_layout_holds reads the first array of a type named numpy.ndarray
 * both ways, and reports whether the struct read gives what the buffer
 * protocol gives (the pointer, the extents, the byte strides, the element
 * size and the writable flag): 1, or 0 (the next array is asked again
 * when this one cannot be read both ways; never again after they differ). */
static int numpy_layout_holds(PyObject *o)
{
	Py_buffer b;
	if (PyObject_GetBuffer(o, &b, PyBUF_RECORDS_RO) < 0) {
		PyErr_Clear(); /* no buffer for this one (a datetime array): ask the next */
		return 0;
	}
	ub_dl_managed_versioned m;
	int64_t shape[UBX_MAX_NDIM], strides[UBX_MAX_NDIM];
	if (!np_tensor(o, &m, shape, strides)) {
		PyBuffer_Release(&b);
		return 0; /* not one read in place (a long double array): ask the next */
	}
	int ok = m.dl_tensor.data == b.buf && m.dl_tensor.ndim == b.ndim && b.itemsize == m.dl_tensor.dtype.bits / 8 &&
		 ((m.flags & UB_DL_FLAG_READ_ONLY) != 0) == (b.readonly != 0);
	for (int i = 0; ok && i < b.ndim; i++)
		ok = b.shape[i] == shape[i] && b.strides[i] == strides[i] * b.itemsize;
	PyBuffer_Release(&b);
	if (!ok)
		numpy_refused = 1; /* a layout of its own: the buffer protocol, always */
	return ok;
}

/* read_numpy reads the NumPy array o in place into val (1), or leaves it
 * (0: not numpy.ndarray, a layout not checked, or an array not read in
 * place); -1 with an exception. */
static int read_numpy(PyObject *o, hold *h, ubx_value *val)
{
	PyTypeObject *tp = Py_TYPE(o);
	if (tp != numpy_type) {
		if (numpy_type != NULL || numpy_refused || !is_numpy_ndarray(tp))
			return 0;
		int r = numpy_layout_holds(o);
		if (r <= 0)
			return r;
		numpy_type = tp;
	}
	const np_array_fields *a = (const np_array_fields *)o;
	int nd = a->nd;
	int64_t *d = hold_dims(h, nd > 0 ? nd : 0);
	if (d == NULL)
		return -1;
	ub_dl_managed_versioned m;
	int64_t shape[UBX_MAX_NDIM], strides[UBX_MAX_NDIM];
	if (!np_tensor(o, &m, shape, strides) || !ubx_import_host(&m, 1, &val->v, d, nd))
		return 0;
	h->kind = HOLD_OBJECT;
	h->u.obj = Py_NewRef(o); /* the array, with its memory, for the call */
	val->kind = UBX_V_ARRAY;
	numpy_reads++;
	return 1;
}

/* capsule_tensor is a fresh DLPack capsule's tensor: 1 with *p and
 * *versioned, 0 for anything else (Go says what is wrong with it). */
static int capsule_tensor(PyObject *cap, void **p, int *versioned)
{
	if (!PyCapsule_CheckExact(cap))
		return 0;
	const char *name = PyCapsule_GetName(cap);
	if (name == NULL) {
		PyErr_Clear();
		return 0;
	}
	*versioned = strcmp(name, name_versioned) == 0;
	if (!*versioned && strcmp(name, name_legacy) != 0)
		return 0;
	*p = PyCapsule_GetPointer(cap, name); /* its own name: no second compare */
	if (*p == NULL) {
		PyErr_Clear();
		return 0;
	}
	return 1;
}

/* take_capsule imports a fresh DLPack capsule's kDLCPU tensor in C into
 * val and h (renaming the capsule used_*): 1 when done, 0 when Go must
 * decide (anything else about the capsule), -1 with an exception. */
static int take_capsule(PyObject *cap, hold *h, ubx_value *val)
{
	void *p;
	int versioned;
	if (!capsule_tensor(cap, &p, &versioned))
		return 0;
	int64_t tmp[2 * UBX_MAX_NDIM];
	if (!ubx_import_host(p, versioned, &val->v, tmp, UBX_MAX_NDIM))
		return 0;
	int32_t n = val->v.t.ndim;
	int64_t *d = hold_dims(h, n);
	if (d == NULL)
		return -1;
	for (int32_t i = 0; i < 2 * n; i++)
		d[i] = tmp[i];
	val->v.t.shape = n > 0 ? d : NULL;
	val->v.t.strides = n > 0 ? d + n : NULL;
	if (PyCapsule_SetName(cap, versioned ? used_versioned : used_legacy) < 0)
		return -1;
	h->kind = HOLD_MANAGED;
	h->u.managed.m = p;
	h->u.managed.versioned = versioned;
	c_imports++;
	live_c_imports++;
	val->kind = UBX_V_ARRAY;
	return 1;
}

/* array_over makes an Array (not yet tracked, owning nothing) over a
 * producer's kDLCPU tensor p, its shape and strides imported straight into
 * the Array's dims: 1 with *out, 0 when Go must decide, -1 with an
 * exception. The caller makes the Array the tensor's owner. When p is the
 * tensor of a capsule, cap is that capsule: making the Array may run the
 * collector, whose finalisers run Python code that may consume the capsule
 * (and free the tensor), so the capsule is looked at again before the
 * tensor is read; NULL for a tensor already handed to us. */
static int array_over(const void *p, int versioned, PyObject *cap, Array **out)
{
	return array_over_in(p, versioned, cap, NULL, out);
}

/* array_over_in is array_over with an Array made before the capsule was
 * taken (*pre, owning nothing, room for INLINE_NDIM dimensions; NULL for
 * none): used when the tensor fits, it allocates nothing, so no collector
 * runs and the capsule needs no second look; it then takes *pre (NULL
 * after). */
static int array_over_in(const void *p, int versioned, PyObject *cap, Array **pre, Array **out)
{
	const ub_dl_tensor *t = versioned ? &((const ub_dl_managed_versioned *)p)->dl_tensor
					  : &((const ub_dl_managed *)p)->dl_tensor;
	int32_t n = t->ndim;
	if (n < 0 || n > UBX_MAX_NDIM)
		return 0;
	Array *a;
	if (pre != NULL && *pre != NULL && n <= INLINE_NDIM) {
		a = *pre;
		*pre = NULL;
	} else {
		if ((a = array_alloc(n)) == NULL)
			return -1;
		void *again;
		int v_again;
		if (cap != NULL && (!capsule_tensor(cap, &again, &v_again) || again != p || v_again != versioned)) {
			Py_DECREF(a);
			return 0; /* taken meanwhile: Go says so */
		}
	}
	/* The producer's ndim is read again there: the capacity bounds it. */
	if (!ubx_import_host(p, versioned, &a->v, a->dims, n > INLINE_NDIM ? n : INLINE_NDIM)) {
		Py_DECREF(a);
		return 0;
	}
	*out = a;
	return 1;
}

/* take_tensor makes a the owner of tensor p (its deleter runs once, when a
 * goes) and starts tracking a. */
static void take_tensor(Array *a, void *p, int versioned)
{
	a->managed = p;
	a->versioned = versioned;
	c_imports++;
	live_c_imports++;
	PyObject_GC_Track(a);
}

/* host_producer reports whether x looks like a host DLPack producer that C
 * can take alone: no DLPack C exchange table and no SUAI on its type (Go
 * takes those), a __dlpack__, and __dlpack_device__() == (kDLCPU, 0), which
 * is not asked of a type whose arrays need no stream (NumPy's: the tensor
 * says the device, and take_capsule leaves any but kDLCPU to Go). 1, 0, or
 * -1 with an exception. */
static int host_producer(PyObject *x)
{
	unsigned int f;
	if (type_facts(Py_TYPE(x), &f) < 0)
		return -1;
	if ((f & (FACT_SUAI | FACT_EXCHANGE)) || (f & (FACT_DLPACK | FACT_DLPACK_DEVICE)) != (FACT_DLPACK | FACT_DLPACK_DEVICE))
		return 0;
	if (f & FACT_NO_STREAM)
		return 1;
	PyObject *dev = PyObject_CallMethodNoArgs(x, s_dlpack_device);
	if (dev == NULL)
		return -1; /* the producer's exception, as the array API says */
	long long type, id;
	int ok = pair(dev, &type, &id) && type == UB_DL_CPU && id == 0;
	Py_DECREF(dev);
	return ok;
}

/* call_dlpack calls x.__dlpack__(max_version=...) as the array API's
 * from_dlpack does, and without it if the producer raised TypeError (a
 * producer that predates max_version); NULL with the exception. */
static PyObject *call_dlpack(PyObject *x)
{
	PyObject *argv[2] = {x, max_version_value};
	PyObject *cap = PyObject_VectorcallMethod(s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames_max_version);
	if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
		PyErr_Clear();
		cap = PyObject_VectorcallMethod(s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
	}
	return cap;
}

/* read_suai reads o.__sycl_usm_array_interface__ into *out for Go: the
 * value (a new reference in out->dict), and when it is exactly a dict, its
 * value at each of the keys Go reads, as dpctl's dict.get looks them up
 * (new references too: Go's reading may run Python code, a value's
 * __index__, that empties the dict). 1; 0 when o has no such attribute
 * (AttributeError, cleared); -1 with what the getter or a key's lookup
 * raised, as itself, as Go's reader raises it. Rules about the values are
 * Go's (pybridge.SUAIDict): C only spares Go the lookups. suai_clear
 * releases *out after 1. */
static int read_suai(PyObject *o, ubx_suai *out)
{
	PyObject *d = PyObject_GetAttr(o, s_suai);
	if (d == NULL) {
		if (!PyErr_ExceptionMatches(PyExc_AttributeError))
			return -1;
		PyErr_Clear();
		return 0;
	}
	out->dict = d;
	out->looked = 0;
	out->pad = 0;
	if (!PyDict_CheckExact(d))
		return 1;
	out->looked = 1;
	for (int i = 0; i < UBX_SUAI_KEYS; i++)
		out->vals[i] = NULL;
	for (int i = 0; i < UBX_SUAI_KEYS; i++) {
		/* A key's __eq__ may run Python code that changes the dict: each
		 * value is taken as it is found. */
		PyObject *v = PyDict_GetItemWithError(d, s_suai_keys[i]);
		if (v == NULL && PyErr_Occurred()) {
			suai_clear(out);
			return -1;
		}
		out->vals[i] = Py_XNewRef(v);
	}
	return 1;
}

/* read_usm leaves a USM argument o to Go: its SUAI as read_suai read it
 * (the hold keeps the dict for the call), or none (a NULL dict: the getter
 * raised AttributeError, and Go takes o as a DLPack producer without
 * calling it again). 0, or -1 with an exception. */
static int read_usm(PyObject *o, hold *h, ubx_value *val)
{
	ubx_suai *s = &h->u.suai;
	int r = read_suai(o, s);
	if (r < 0)
		return -1;
	if (r == 0) {
		s->dict = NULL; /* the hold holds nothing (HOLD_NONE) */
		s->looked = 0;
		s->pad = 0;
	} else {
		h->kind = HOLD_SUAI;
	}
	val->kind = UBX_V_SUAI;
	val->suai = s;
	return 0;
}

/* read_array reads an array argument: one of this module's Arrays as it is,
 * host memory through the buffer protocol or DLPack in C; anything else
 * (USM, SUAI, an exchange table) is left to Go as an object. 0, or -1 with
 * an exception. */
static int read_array(PyObject *o, int writable, hold *h, ubx_value *val)
{
	val->obj = o;
	if (is_array(o)) {
		val->v = ((Array *)o)->v;
		val->kind = UBX_V_ARRAY;
		return 0;
	}
	val->kind = UBX_V_OBJECT;
	int r = read_numpy(o, h, val);
	if (r != 0)
		return r < 0 ? -1 : 0;
	if (PyCapsule_CheckExact(o))
		return take_capsule(o, h, val) < 0 ? -1 : 0;
	unsigned int f;
	if (type_facts(Py_TYPE(o), &f) < 0)
		return -1;
	if (f & FACT_SUAI) {
		/* USM (Go binds its SUAI), unless the object says it is on the host
		 * and has the buffer protocol (another module's host Array). */
		if (!PyObject_CheckBuffer(o) || !(f & FACT_DLPACK_DEVICE))
			return read_usm(o, h, val);
		PyObject *dev = PyObject_CallMethodNoArgs(o, s_dlpack_device);
		if (dev == NULL)
			return -1; /* the producer's exception, as itself */
		long long type, id;
		int host = pair(dev, &type, &id) && type == UB_DL_CPU;
		Py_DECREF(dev);
		if (!host)
			return read_usm(o, h, val);
		return read_buffer(o, writable, (f & FACT_DLPACK) != 0, h, val) < 0 ? -1 : 0;
	}
	if (f & FACT_EXCHANGE)
		return 0;
	if (PyObject_CheckBuffer(o))
		return read_buffer(o, writable, (f & FACT_DLPACK) != 0, h, val) < 0 ? -1 : 0;
	if ((r = host_producer(o)) <= 0)
		return r;
	PyObject *cap = call_dlpack(o);
	if (cap == NULL)
		return -1;
	r = take_capsule(cap, h, val);
	if (r == 0) {
		h->capsule = cap; /* Go imports it and says what is wrong */
		val->obj = cap;
		return 0;
	}
	Py_DECREF(cap);
	return r < 0 ? -1 : 0;
}

/* Argument errors name the function and the parameter, as CPython's do. */
static int arg_type_error(const ubx_func *f, const ubx_param *p, const char *want, PyObject *got)
{
	PyErr_Format(PyExc_TypeError, "%s() argument '%s' must be %s, not %.200s", f->name, p->name, want,
		     Py_TYPE(got)->tp_name);
	return -1;
}

/* chain_cause makes ev, an exception fetched before the one now pending
 * was raised, the pending one's __cause__ (and __context__), as `raise ...
 * from ev` does. It steals ev (NULL: nothing to chain). */
static void chain_cause(PyObject *ev)
{
	if (ev == NULL)
		return;
	PyObject *t2, *v2, *tb2;
	PyErr_Fetch(&t2, &v2, &tb2);
	PyErr_NormalizeException(&t2, &v2, &tb2);
	if (v2 != NULL) {
		PyException_SetContext(v2, Py_NewRef(ev));
		PyException_SetCause(v2, ev); /* steals ev */
	} else {
		Py_DECREF(ev);
	}
	PyErr_Restore(t2, v2, tb2);
}

/* fetch_pending takes the pending exception, normalized and with its
 * traceback, for chain_cause. */
static PyObject *fetch_pending(void)
{
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	PyErr_NormalizeException(&et, &ev, &tb);
	if (tb != NULL && ev != NULL)
		PyException_SetTraceback(ev, tb);
	Py_XDECREF(et);
	Py_XDECREF(tb);
	return ev;
}

/* arg_type_error_from is arg_type_error for an argument whose own
 * conversion (__index__, __float__) raised TypeError: the new TypeError
 * names the parameter, and the object's exception is its __cause__, as
 * `raise ... from e` chains it. Any other exception propagates as itself. */
static int arg_type_error_from(const ubx_func *f, const ubx_param *p, const char *want, PyObject *got)
{
	if (!PyErr_ExceptionMatches(PyExc_TypeError))
		return -1;
	PyObject *ev = fetch_pending();
	arg_type_error(f, p, want, got);
	chain_cause(ev);
	return -1;
}

static int read_arg(const ubx_func *f, const ubx_param *p, PyObject *o, hold *h, ubx_value *val)
{
	val->obj = o;
	if (o == NULL) {
		val->kind = UBX_V_MISSING;
		return 0;
	}
	if (o == Py_None && (p->flags & UBX_F_NONE)) {
		val->kind = UBX_V_NONE;
		return 0;
	}
	switch (p->kind) {
	case UBX_P_INT: {
		if (!PyLong_Check(o) && !PyIndex_Check(o))
			return arg_type_error(f, p, "int", o);
		int overflow;
		PyObject *i = PyNumber_Index(o);
		if (i == NULL)
			return arg_type_error_from(f, p, "int", o);
		val->i = PyLong_AsLongLongAndOverflow(i, &overflow);
		Py_DECREF(i);
		if (val->i == -1 && PyErr_Occurred())
			return -1;
		if (overflow) {
			PyErr_Format(PyExc_OverflowError, "%s() argument '%s' does not fit in a 64-bit integer", f->name,
				     p->name);
			return -1;
		}
		val->kind = UBX_V_INT;
		return 0;
	}
	case UBX_P_UINT: {
		/* uint64 and uint: the whole range, 0 ... 2**64-1, bits in i. */
		if (!PyLong_Check(o) && !PyIndex_Check(o))
			return arg_type_error(f, p, "int", o);
		PyObject *i = PyNumber_Index(o);
		if (i == NULL)
			return arg_type_error_from(f, p, "int", o);
		unsigned long long u = PyLong_AsUnsignedLongLong(i); /* negative or too large: OverflowError */
		Py_DECREF(i);
		if (u == (unsigned long long)-1 && PyErr_Occurred()) {
			if (!PyErr_ExceptionMatches(PyExc_OverflowError))
				return -1;
			PyObject *ev = fetch_pending(); /* said again, naming the parameter, and chained */
			PyErr_Format(PyExc_OverflowError, "%s() argument '%s' does not fit in a 64-bit unsigned integer",
				     f->name, p->name);
			chain_cause(ev);
			return -1;
		}
		val->i = (int64_t)u;
		val->kind = UBX_V_INT;
		return 0;
	}
	case UBX_P_FLOAT:
		if (!PyFloat_Check(o) && !PyLong_Check(o) && Py_TYPE(o)->tp_as_number == NULL)
			return arg_type_error(f, p, "float", o);
		val->f = PyFloat_AsDouble(o);
		if (val->f == -1.0 && PyErr_Occurred()) {
			if (PyLong_Check(o) && PyErr_ExceptionMatches(PyExc_OverflowError)) {
				/* CPython's "int too large to convert to float", said
				 * again naming the parameter, and chained. */
				PyObject *ev = fetch_pending();
				PyErr_Format(PyExc_OverflowError, "%s() argument '%s' is too large for a float", f->name,
					     p->name);
				chain_cause(ev);
				return -1;
			}
			return arg_type_error_from(f, p, "float", o);
		}
		val->kind = UBX_V_FLOAT;
		return 0;
	case UBX_P_BOOL:
		if (!PyBool_Check(o))
			return arg_type_error(f, p, "bool", o);
		val->i = o == Py_True;
		val->kind = UBX_V_BOOL;
		return 0;
	case UBX_P_STR: {
		if (!PyUnicode_Check(o))
			return arg_type_error(f, p, "str", o);
		Py_ssize_t n;
		val->s = PyUnicode_AsUTF8AndSize(o, &n);
		if (val->s == NULL)
			return -1;
		val->n = n;
		val->kind = UBX_V_STR;
		return 0;
	}
	case UBX_P_ARRAY:
		return read_array(o, p->flags & UBX_F_WRITABLE, h, val);
	case UBX_P_INSTANCE:
		return ubx_read_instance(f, p, o, val);
	default:
		val->kind = UBX_V_OBJECT;
		return 0;
	}
}

/* ---- results ---------------------------------------------------------------- */

/* new_array_from_result makes an Array over what Go returned (r->v with
 * r->dims, its handle, base and syclobj: the Array takes their references). */
static PyObject *new_array_from_result(ubx_result *r)
{
	int32_t n = r->v.t.ndim;
	r->v.t.shape = r->dims;
	r->v.t.strides = r->dims + n;
	Array *a = array_alloc(n);
	if (a == NULL) {
		if (r->v.handle != 0)
			ubx_go_release(r->v.handle);
		Py_XDECREF((PyObject *)r->base);
		Py_XDECREF((PyObject *)r->syclobj);
		return NULL;
	}
	a->base = r->base;
	a->syclobj = r->syclobj;
	set_view(a, &r->v);
	return (PyObject *)a;
}

/* hold_array is the Array that owns an array argument's memory, for a kept
 * view (Go's Keep) or a result over the argument: a new reference. The
 * argument itself when it is one of this module's Arrays; else the Array
 * the hold gave its buffer or tensor to, made the first time (the hold then
 * references it). NULL with an exception. */
static PyObject *hold_array(ubx_value *val, hold *h)
{
	if (val->kind != UBX_V_ARRAY) {
		PyErr_SetString(PyExc_SystemError, "only an array argument that C read can be kept or returned");
		return NULL;
	}
	if (val->obj != NULL && is_array(val->obj))
		return Py_NewRef(val->obj);
	if (h->kind == HOLD_ARRAY)
		return Py_NewRef(h->u.array);
	if (h->kind != HOLD_BUFFER && h->kind != HOLD_MANAGED && h->kind != HOLD_OBJECT) {
		PyErr_SetString(PyExc_SystemError, "an array argument C read holds nothing");
		return NULL;
	}
	Array *a = array_alloc(val->v.t.ndim);
	if (a == NULL)
		return NULL;
	if (h->kind == HOLD_BUFFER) {
		a->buffer = PyMem_Malloc(sizeof(Py_buffer));
		if (a->buffer == NULL) {
			Py_DECREF(a);
			return PyErr_NoMemory();
		}
		*a->buffer = h->u.buf;
	} else if (h->kind == HOLD_OBJECT) {
		a->base = h->u.obj; /* the hold's reference, now the Array's */
	} else {
		a->managed = h->u.managed.m;
		a->versioned = h->u.managed.versioned;
	}
	set_view(a, &val->v);
	h->kind = HOLD_ARRAY;
	h->u.array = (PyObject *)a; /* the hold's reference */
	return Py_NewRef((PyObject *)a);
}

/* ---- function calls ------------------------------------------------------------ */

/* A call's arguments (bound, vals, holds) live on the stack for functions
 * of up to INLINE_PARAMS parameters, the usual case, and in one heap block
 * for more: pyext.Func and pyext.Method take a func of any arity, so no
 * number of parameters may size a stack array (a stack array of 64 was
 * written past by a function of 70). */
#define INLINE_PARAMS 8

/* A call in progress, for ubx_hold_array. */
typedef struct {
	ubx_value *vals;
	hold *holds;
	int32_t n;
} call_ctx;

/* ubx_hold_array is hold_array for Go: the Array that owns argument i's
 * memory, a new reference Go's kept views share, or NULL with the exception
 * in *exc. Go calls it when the call ends, on the calling thread, with the
 * GIL. */
void *ubx_hold_array(void *call, int32_t i, void **exc)
{
	if (!gil_held("ubx_hold_array"))
		return NULL;
	call_ctx *c = call;
	PyObject *r = NULL;
	if (c == NULL || i < 0 || i >= c->n)
		PyErr_SetString(PyExc_SystemError, "Keep of an argument outside its call");
	else
		r = hold_array(&c->vals[i], &c->holds[i]);
	if (r == NULL)
		take_error(exc);
	return r;
}

/* ubx_hold_leak gives up argument i's hold without releasing what it
 * holds, for Go when the Array kept views were to share could not be made:
 * the memory is leaked (counted) rather than released under them. */
void ubx_hold_leak(void *call, int32_t i)
{
	call_ctx *c = call;
	if (c == NULL || i < 0 || i >= c->n)
		return;
	hold *h = &c->holds[i];
	if (h->kind == HOLD_BUFFER || h->kind == HOLD_MANAGED)
		h->kind = HOLD_NONE; /* leaked on purpose: nothing releases it */
}

void *ubx_save_thread(void)
{
	return PyEval_SaveThread();
}

void ubx_restore_thread(void *ts)
{
	PyEval_RestoreThread(ts);
}

/* bind_args places positional and keyword arguments at their parameters,
 * with CPython's errors. */
static int bind_args(const ubx_func *f, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **bound)
{
	int32_t npos = 0;
	while (npos < f->nparams && !(f->params[npos].flags & UBX_F_KWONLY))
		npos++;
	if (nargs > npos) {
		PyErr_Format(PyExc_TypeError, "%s() takes %s %d positional argument%s (%zd given)", f->name,
			     npos == f->nparams ? "at most" : "at most", npos, npos == 1 ? "" : "s", nargs);
		return -1;
	}
	for (Py_ssize_t i = 0; i < nargs; i++)
		bound[i] = args[i];
	if (kwnames != NULL) {
		Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
		for (Py_ssize_t k = 0; k < nk; k++) {
			PyObject *key = PyTuple_GET_ITEM(kwnames, k);
			int32_t j;
			for (j = 0; j < f->nparams; j++)
				if (PyUnicode_CompareWithASCIIString(key, f->params[j].name) == 0)
					break;
			if (j == f->nparams) {
				PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", f->name, key);
				return -1;
			}
			if (f->params[j].flags & UBX_F_POSONLY) {
				PyErr_Format(PyExc_TypeError,
					     "%s() got some positional-only arguments passed as keyword arguments: '%s'",
					     f->name, f->params[j].name);
				return -1;
			}
			if (bound[j] != NULL) {
				PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", f->name,
					     f->params[j].name);
				return -1;
			}
			bound[j] = args[nargs + k];
		}
	}
	for (int32_t j = 0; j < f->nparams; j++) {
		if (bound[j] == NULL && !(f->params[j].flags & UBX_F_OPTIONAL)) {
			PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", f->name,
				     f->params[j].name, j + 1);
			return -1;
		}
	}
	return 0;
}

static PyObject *make_result(ubx_result *r, PyObject **bound, ubx_value *vals, hold *holds, int32_t n)
{
	switch (r->kind) {
	case UBX_R_NONE:
		Py_RETURN_NONE;
	case UBX_R_INT:
		return PyLong_FromLongLong(r->i);
	case UBX_R_UINT:
		return PyLong_FromUnsignedLongLong((unsigned long long)r->i);
	case UBX_R_FLOAT:
		return PyFloat_FromDouble(r->f);
	case UBX_R_BOOL:
		return PyBool_FromLong((long)r->i);
	case UBX_R_STR: {
		PyObject *s = PyUnicode_FromStringAndSize(r->s, (Py_ssize_t)r->n);
		free(r->s);
		return s;
	}
	case UBX_R_OBJECT:
		return r->obj;
	case UBX_R_ARRAY:
		return new_array_from_result(r);
	case UBX_R_ARG:
		if (r->arg >= 0 && r->arg < n && bound[r->arg] != NULL) {
			Py_INCREF(bound[r->arg]);
			return bound[r->arg];
		}
		break;
	case UBX_R_ARG_ARRAY:
		if (r->arg >= 0 && r->arg < n)
			return hold_array(&vals[r->arg], &holds[r->arg]);
		break;
	case UBX_R_INSTANCE:
		return ubx_instance_result(r);
	}
	PyErr_Format(PyExc_SystemError, "a Go function returned a result of unknown kind %d", (int)r->kind);
	return NULL;
}

/* result_init readies a result on the stack for Go: the fields C reads
 * whatever Go returns are zero; the view and its dims are left unwritten,
 * since Go writes the whole view of an array it returns (fillView) and the
 * dims it has, and C reads no more than that. */
static void result_init(ubx_result *r)
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

/* operand_refused reports whether the argument C could not read (its
 * TypeError pending) is the other operand of a binary special method,
 * a == b or a + b: then the method returns NotImplemented, as a Python
 * class's does, and Python tries the other operand's method (or, for ==
 * and !=, compares identity) instead of raising. The error is cleared: a
 * refused operand is the expected answer there. */
static int operand_refused(const ubx_func *f, int32_t i)
{
	static const char *const binary[] = {
	    "__eq__",       "__ne__",        "__lt__",       "__le__",      "__gt__",       "__ge__",
	    "__add__",      "__radd__",      "__iadd__",     "__sub__",     "__rsub__",     "__isub__",
	    "__mul__",      "__rmul__",      "__imul__",     "__matmul__",  "__rmatmul__",  "__imatmul__",
	    "__truediv__",  "__rtruediv__",  "__itruediv__", "__floordiv__", "__rfloordiv__", "__ifloordiv__",
	    "__mod__",      "__rmod__",      "__imod__",     "__divmod__",  "__rdivmod__",  "__pow__",
	    "__rpow__",     "__ipow__",      "__lshift__",   "__rlshift__", "__ilshift__",  "__rshift__",
	    "__rrshift__",  "__irshift__",   "__and__",      "__rand__",    "__iand__",     "__xor__",
	    "__rxor__",     "__ixor__",      "__or__",       "__ror__",     "__ior__",      NULL};
	if (i != 1 || !(f->params[0].flags & UBX_F_SELF) || !PyErr_ExceptionMatches(PyExc_TypeError))
		return 0;
	const char *attr = strrchr(f->name, '.');
	attr = attr != NULL ? attr + 1 : f->name;
	for (const char *const *op = binary; *op != NULL; op++) {
		if (strcmp(attr, *op) == 0) {
			PyErr_Clear();
			return 1;
		}
	}
	return 0;
}

PyObject *call_go(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
	if (forked())
		return NULL;
	const ubx_func *f = PyCapsule_GetPointer(self, NULL);
	if (f == NULL)
		return NULL;
	int32_t n = f->nparams;
	PyObject *bound_inline[INLINE_PARAMS];
	ubx_value vals_inline[INLINE_PARAMS];
	hold holds_inline[INLINE_PARAMS];
	PyObject **bound = bound_inline;
	ubx_value *vals = vals_inline;
	hold *holds = holds_inline;
	void *block = NULL;
	if (n > INLINE_PARAMS) {
		size_t each = sizeof(PyObject *) + sizeof(ubx_value) + sizeof(hold);
		if ((size_t)n > PY_SSIZE_T_MAX / each || (block = PyMem_Malloc(each * (size_t)n)) == NULL)
			return PyErr_NoMemory();
		/* Three arrays in one block: each element's size is a multiple
		 * of its alignment (8), so each array starts aligned. */
		holds = block;
		vals = (ubx_value *)(holds + n);
		bound = (PyObject **)(vals + n);
	}
	memset(bound, 0, sizeof(PyObject *) * (size_t)n);
	PyObject *out = NULL;
	int32_t i = 0;
	if (bind_args(f, args, PyVectorcall_NARGS(nargsf), kwnames, bound) < 0)
		goto done;
	for (i = 0; i < n; i++) {
		/* Everything but the view, which read_arg writes whole for an
		 * array (a memset of all of it was a tenth of an empty call). */
		vals[i].kind = UBX_V_MISSING;
		vals[i].pad = 0;
		vals[i].i = 0;
		vals[i].f = 0;
		vals[i].s = NULL;
		vals[i].n = 0;
		vals[i].obj = NULL;
		holds[i].kind = HOLD_NONE;
		holds[i].capsule = NULL;
		holds[i].dims = NULL;
		if (read_arg(f, &f->params[i], bound[i], &holds[i], &vals[i]) < 0) {
			if (operand_refused(f, i))
				out = Py_NewRef(Py_NotImplemented);
			i++;
			goto done;
		}
	}
	ubx_result res;
	result_init(&res);
	call_ctx c = {vals, holds, n};
	if (go_status(ubx_go_call(f->index, vals, n, &res, &c)) == 0)
		out = make_result(&res, bound, vals, holds, n);
done:
	for (int32_t j = 0; j < i; j++) {
		if (vals[j].kind == UBX_V_INSTANCE)
			ubx_release_instance(&vals[j]);
		hold_release(&holds[j]);
	}
	PyMem_Free(block);
	return out;
}

/* ---- from_dlpack and asarray ------------------------------------------------- */

static PyObject *go_array(int (*fn)(void *, void *, void *, ubx_result *), void *a, void *b, void *c)
{
	ubx_result r;
	result_init(&r);
	if (go_status(fn(a, b, c, &r)) != 0)
		return NULL;
	return new_array_from_result(&r);
}

static int go_from_dlpack(void *x, void *device, void *copy, ubx_result *r)
{
	return ubx_go_from_dlpack(x, device, copy, r);
}

static int go_import_capsule(void *x, void *cap, void *unused, ubx_result *r)
{
	return ubx_go_import_capsule(x, cap, r);
}

static int go_asarray(void *obj, void *suai, void *unused, ubx_result *r)
{
	return ubx_go_asarray(obj, suai, r);
}

/* same_array_asked reports whether from_dlpack's device and copy keywords
 * ask for a's memory where it is: copy None or False, device None or a's
 * own DLPack pair. Anything else is Go's. */
static int same_array_asked(Array *a, PyObject *device, PyObject *copy)
{
	if (copy != NULL && copy != Py_None && copy != Py_False)
		return 0;
	if (device == NULL || device == Py_None)
		return 1;
	long long t, id;
	return pair(device, &t, &id) && t == a->v.t.device.device_type && id == a->v.t.device.device_id;
}

/* from_dlpack(x, /, *, device=None, copy=None). A host producer without
 * keywords is imported here, as NumPy's from_dlpack does; everything else
 * is Go's FromDLPack (streams, devices, copies, exchange tables, SUAI
 * producers' queues). The producer is called once (twice for one that
 * predates max_version). */
static PyObject *call_from_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
	if (forked())
		return NULL;
	const ubx_func *f = PyCapsule_GetPointer(self, NULL);
	if (f == NULL)
		return NULL;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	if (nargs != 1) {
		PyErr_Format(PyExc_TypeError, "%s() takes exactly 1 positional argument (%zd given)", f->name, nargs);
		return NULL;
	}
	PyObject *names[2] = {s_device, s_copy};
	PyObject *kw[2] = {NULL, NULL};
	if (kwnames != NULL && parse_kw(f->name, kwnames, args + 1, names, kw, 2) < 0)
		return NULL;
	PyObject *x = args[0];
	if (is_array(x) && same_array_asked((Array *)x, kw[0], kw[1])) {
		/* One of this module's Arrays, asked for where it is without a
		 * copy: a view that holds it, as .T does, rather than an import of
		 * its own export, whose tensor would hold it where the collector
		 * cannot see (a cycle through the two would take a collection per
		 * link). */
		int32_t perm[UBX_MAX_NDIM];
		for (int32_t i = 0; i < ((Array *)x)->v.t.ndim; i++)
			perm[i] = i;
		return permuted((Array *)x, perm);
	}
	if ((kw[0] != NULL && kw[0] != Py_None) || (kw[1] != NULL && kw[1] != Py_None))
		return go_array(go_from_dlpack, x, kw[0], kw[1]);
	int r = host_producer(x);
	if (r < 0)
		return NULL;
	if (r == 0)
		return go_array(go_from_dlpack, x, NULL, NULL);
	/* The Array is made before the capsule is taken: made after, it could
	 * run the collector, whose finalisers may consume the capsule, and the
	 * capsule would need a second look (array_over_in). */
	Array *pre = array_alloc(0);
	if (pre == NULL)
		return NULL;
	PyObject *cap = call_dlpack(x);
	if (cap == NULL) {
		Py_DECREF(pre);
		return NULL;
	}
	void *p;
	int versioned;
	Array *a = NULL;
	PyObject *out = NULL;
	r = capsule_tensor(cap, &p, &versioned) ? array_over_in(p, versioned, cap, &pre, &a) : 0;
	Py_XDECREF(pre); /* not used: the tensor has more dimensions, or Go decides */
	if (r > 0) {
		if (PyCapsule_SetName(cap, versioned ? used_versioned : used_legacy) < 0) {
			Py_DECREF(a);
		} else {
			take_tensor(a, p, versioned);
			out = (PyObject *)a;
		}
	} else if (r == 0) {
		out = go_array(go_import_capsule, x, cap, NULL);
	}
	Py_DECREF(cap);
	return out;
}

/* asarray(obj, /): obj's __sycl_usm_array_interface__, read here once
 * (read_suai) and parsed and bound by Go with dpctl's rules. The Array
 * holds obj. */
static PyObject *call_asarray(PyObject *self, PyObject *obj)
{
	if (forked())
		return NULL;
	ubx_suai suai = {0};
	if (read_suai(obj, &suai) < 0)
		return NULL; /* what the getter or a lookup raised, as itself */
	PyObject *out = go_array(go_asarray, obj, &suai, NULL);
	suai_clear(&suai);
	return out;
}

/* ---- the module ------------------------------------------------------------------ */

static PyObject *mod_fork_skips(PyObject *mod, PyObject *unused)
{
	return PyLong_FromLong(__atomic_load_n(&fork_skips, __ATOMIC_RELAXED));
}

/* _c_stats: the C half's counts, for leak tests (usmbridge._stats adds
 * Go's). */
static PyObject *mod_c_stats(PyObject *mod, PyObject *unused)
{
	if (forked())
		return NULL;
	return Py_BuildValue("{sLsLsLsLsLsL}", "live_exports", (long long)live_exports, "stray_deletes",
			     (long long)stray_deletes, "exchange_exports", (long long)exchange_exports, "c_imports",
			     (long long)c_imports, "live_c_imports", (long long)live_c_imports, "numpy_reads",
			     (long long)numpy_reads);
}

static PyMethodDef module_methods[] = {
	{"_fork_skips", (PyCFunction)mod_fork_skips, METH_NOARGS,
	 "Releases a forked child skipped rather than enter Go (works in a forked child)."},
	{"_c_stats", (PyCFunction)mod_c_stats, METH_NOARGS, "The C half's live counts (leak tests)."},
	{NULL},
};

static int intern(PyObject **p, const char *s)
{
	if (*p == NULL)
		*p = PyUnicode_InternFromString(s);
	return *p == NULL ? -1 : 0;
}

static int add_function(PyObject *m, const ubx_func *f)
{
	PyMethodDef *ml = calloc(1, sizeof(PyMethodDef)); /* lives as long as the process, like the def */
	if (ml == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	ml->ml_name = f->name;
	ml->ml_doc = f->doc;
	switch (f->builtin) {
	case UBX_FN_FROM_DLPACK:
		ml->ml_meth = (PyCFunction)(void (*)(void))call_from_dlpack;
		ml->ml_flags = METH_FASTCALL | METH_KEYWORDS;
		break;
	case UBX_FN_ASARRAY:
		ml->ml_meth = (PyCFunction)call_asarray;
		ml->ml_flags = METH_O;
		break;
	default:
		ml->ml_meth = (PyCFunction)(void (*)(void))call_go;
		ml->ml_flags = METH_FASTCALL | METH_KEYWORDS;
	}
	PyObject *self = PyCapsule_New((void *)f, NULL, NULL);
	if (self == NULL)
		return -1;
	PyObject *modname = PyModule_GetNameObject(m);
	PyObject *fn = modname != NULL ? ubx_function_new(ml, self, modname) : NULL;
	Py_XDECREF(modname);
	Py_DECREF(self);
	if (fn == NULL)
		return -1;
	int r = PyModule_AddObject(m, f->name, fn);
	if (r < 0)
		Py_DECREF(fn);
	return r;
}

static int module_exec(PyObject *m)
{
	if (forked_flag) {
		PyErr_SetString(PyExc_ImportError, fork_message);
		return -1;
	}
	/* One Go runtime and one attached interpreter per process: the main
	 * one. A sub-interpreter gets ImportError, never a module that would
	 * take the main interpreter's objects for its own. */
	if (PyInterpreterState_GetID(PyInterpreterState_Get()) != 0) {
		PyErr_Format(PyExc_ImportError,
			     "%s cannot be imported in a sub-interpreter: its Go half serves the main interpreter only",
			     moddef.m_name);
		return -1;
	}
	modstate *st = PyModule_GetState(m);
	if (def == NULL) {
		char *err = ubx_go_define(module_name, &def);
		if (err != NULL) {
			PyErr_SetString(PyExc_ImportError, err);
			free(err);
			return -1;
		}
	}
	if (intern(&s_dlpack, "__dlpack__") < 0 || intern(&s_dlpack_device, "__dlpack_device__") < 0 ||
	    intern(&s_suai, "__sycl_usm_array_interface__") < 0 || intern(&s_exchange, "__dlpack_c_exchange_api__") < 0 ||
	    intern(&s_exchange_int, "__c_dlpack_exchange_api__") < 0 || intern(&s_max_version, "max_version") < 0 ||
	    intern(&s_stream, "stream") < 0 || intern(&s_dl_device, "dl_device") < 0 || intern(&s_copy, "copy") < 0 ||
	    intern(&s_device, "device") < 0 || intern(&s_syclobj, "syclobj") < 0 || intern(&s_dtype, "dtype") < 0 ||
	    intern(&s_numpy, "numpy") < 0 || intern(&s_dpnp_tensor, "dpnp.tensor") < 0 ||
	    intern(&s_dpctl_memory, "dpctl.memory") < 0 || intern(&s_W, "W") < 0 || intern(&s_array_open, "array(") < 0)
		return -1;
	for (int i = 0; i < UBX_SUAI_KEYS; i++)
		if (intern(&s_suai_keys[i], ubx_suai_keys[i]) < 0)
			return -1;
	if (kwnames_max_version == NULL) {
		kwnames_max_version = PyTuple_Pack(1, s_max_version);
		max_version_value = Py_BuildValue("(II)", def->max_major, def->max_minor);
		if (kwnames_max_version == NULL || max_version_value == NULL)
			return -1;
	}

	static PyType_Spec spec = {
		.basicsize = sizeof(Array),
		.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
		.slots = array_slots,
	};
	spec.name = def->array_name;
	st->array_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, NULL);
	if (st->array_type == NULL)
		return -1;
	Py_XSETREF(g_array_type, (PyTypeObject *)Py_NewRef(st->array_type));
	PyObject *cap = PyCapsule_New(&exchange_api, "dlpack_exchange_api", NULL);
	PyObject *addr = PyLong_FromVoidPtr(&exchange_api);
	if (cap == NULL || addr == NULL || PyObject_SetAttr((PyObject *)st->array_type, s_exchange, cap) < 0 ||
	    PyObject_SetAttr((PyObject *)st->array_type, s_exchange_int, addr) < 0) {
		Py_XDECREF(cap);
		Py_XDECREF(addr);
		return -1;
	}
	Py_DECREF(cap);
	Py_DECREF(addr);
	/* Immutable from now on, as numpy.ndarray and dpnp's usm_ndarray are:
	 * the protocols every consumer reads (__dlpack__, the SUAI, the
	 * exchange table) are the module's, not an assignment's. Set here,
	 * after the exchange table's attributes, which the spec cannot carry. */
	st->array_type->tp_flags |= Py_TPFLAGS_IMMUTABLETYPE;
	PyType_Modified(st->array_type);
	Py_INCREF(st->array_type);
	if (PyModule_AddObject(m, "Array", (PyObject *)st->array_type) < 0) {
		Py_DECREF(st->array_type);
		return -1;
	}
	if (g_fork_error == NULL) {
		g_fork_error = PyErr_NewExceptionWithDoc(
			def->fork_error_name,
			"Raised by every use of the module in a child created by fork() (use the 'spawn' or 'forkserver' "
			"start method).",
			PyExc_RuntimeError, NULL);
		if (g_fork_error == NULL)
			return -1;
	}
	st->fork_error = Py_NewRef(g_fork_error);
	Py_INCREF(st->fork_error);
	if (PyModule_AddObject(m, "ForkError", st->fork_error) < 0) {
		Py_DECREF(st->fork_error);
		return -1;
	}
	if (def->doc != NULL && PyModule_SetDocString(m, def->doc) < 0)
		return -1;
	for (int32_t i = 0; i < def->nfuncs; i++)
		if (add_function(m, &def->funcs[i]) < 0)
			return -1;
	if (ubx_add_classes(m, def) < 0)
		return -1;
	return PyModule_AddFunctions(m, module_methods);
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
	modstate *st = PyModule_GetState(m);
	if (st != NULL) {
		Py_VISIT(st->array_type);
		Py_VISIT(st->fork_error);
	}
	return 0;
}

static int module_clear(PyObject *m)
{
	modstate *st = PyModule_GetState(m);
	if (st != NULL) {
		Py_CLEAR(st->array_type);
		Py_CLEAR(st->fork_error);
	}
	return 0;
}

static void module_free(void *m)
{
	module_clear(m);
}

static PyModuleDef_Slot module_slots[] = {
	{Py_mod_exec, module_exec},
#if PY_VERSION_HEX >= 0x030C0000
	{Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
	{Py_mod_gil, Py_MOD_GIL_USED},
#endif
	{0, NULL},
};

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT,
	.m_size = sizeof(modstate),
	.m_slots = module_slots,
	.m_traverse = module_traverse,
	.m_clear = module_clear,
	.m_free = module_free,
};

/* ubx_module_init is PyInit_<name> of a module named name (the build
 * writes PyInit_<last part of name> to call it). */
PyObject *ubx_module_init(const char *name)
{
	if (module_name == NULL)
		module_name = strdup(name);
	moddef.m_name = module_name;
	return PyModuleDef_Init(&moddef);
}

#endif /* UBX_MODULE */
