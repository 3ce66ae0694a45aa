/*
 * ext.c: the C half of usmbridge._ext, a CPython extension module whose
 * Go half is main.go (see there for how it is built).
 *
 * The module and its Array type are C so that Python enters Go with one
 * cgo call (~50 ns) instead of a ctypes call (~1.4 µs). Paths that repeat a
 * decision Go made once per array never enter Go after the first call:
 *  - __dlpack__ in the plain case (same device, no copy) repeats a template
 *    Go made from dlpack.Export's result (ub_template_fill), so the layout
 *    and stream rules live in Go alone; each tensor keeps the Array alive,
 *    and its deleter drops that reference. This is what NumPy's own
 *    __dlpack__ does (see RATIONALE.md). With stream None an array on a
 *    dpctl queue is first waited on, as Export does, with the calls Go
 *    named (ub_wait_plan_fill); with stream=-1 (no synchronization: what
 *    mpi4py asks on every MPI call) a kDLOneAPI array is not waited on.
 *  - the DLPack C exchange API table repeats the same template.
 *  - __sycl_usm_array_interface__ hands out a copy of the dict Go built on
 *    the first call, after the same wait;
 *  - __dlpack_device__ returns the tuple made on the first call.
 * from_dlpack(x) of a host producer without keywords makes its calls into
 * Python here and enters Go once, to import the capsule (from_dlpack_fast);
 * asarray(obj) reads obj's SUAI dict here and enters Go once, to parse and
 * bind it (ext.h, "SUAI reads C replays"). The releases of both may be
 * left to C (ext.h, "Releases C replays").
 *
 * Everything here runs with the GIL held, except a tensor's deleter, which
 * may be called from any thread and takes the GIL itself.
 *
 * In a child created by fork() nothing here enters Go (see ext.h, "fork").
 */
#define PY_SSIZE_T_CLEAN

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "ext.h"

/* ---- fork ------------------------------------------------------------ */

/* Set in the child of every fork() after this library was loaded; never
 * cleared (a grandchild inherits it). Registered by a constructor, so it
 * runs at dlopen: the Go runtime is already at risk from then on, whether
 * or not the module was ever called. */
static volatile sig_atomic_t ub_forked;

/* Releases skipped in a forked child (Go callbacks not entered, Array
 * deallocations that left their Go state): what the child leaked. */
static long ub_fork_skips;

static void ub_fork_skip(void)
{
	__atomic_fetch_add(&ub_fork_skips, 1, __ATOMIC_RELAXED);
}

static void ub_on_fork_child(void)
{
	ub_forked = 1;
}

__attribute__((constructor)) static void ub_register_fork_handler(void)
{
	pthread_atfork(NULL, NULL, ub_on_fork_child);
}

/* Gates for Go callbacks: gate_i calls gate_target[i] unless forked. */
#define UB_GATE_SLOTS 8
static void (*gate_target[UB_GATE_SLOTS])(void *);
#define UB_GATE(i)                              \
	static void ub_gate_##i(void *arg)      \
	{                                       \
		if (ub_forked)                  \
			ub_fork_skip();         \
		else                            \
			gate_target[i](arg);    \
	}
UB_GATE(0) UB_GATE(1) UB_GATE(2) UB_GATE(3) UB_GATE(4) UB_GATE(5) UB_GATE(6) UB_GATE(7)
static void (*const gate_fns[UB_GATE_SLOTS])(void *) = {
	ub_gate_0, ub_gate_1, ub_gate_2, ub_gate_3, ub_gate_4, ub_gate_5, ub_gate_6, ub_gate_7,
};
static int gate_count;

uintptr_t ub_gate(uintptr_t go_fn)
{
	if (gate_count == UB_GATE_SLOTS)
		return 0;
	gate_target[gate_count] = (void (*)(void *))go_fn;
	return (uintptr_t)gate_fns[gate_count++];
}

#if defined(__has_include)
#if __has_include(<Python.h>)
#define UB_HAVE_PYTHON 1
#endif
#endif

#ifdef UB_HAVE_PYTHON
#include <Python.h>
#include <stddef.h>
#include <string.h>

#include "_cgo_export.h"

/* usmbridge.ForkError, a RuntimeError: what every call raises in a forked
 * child. */
static PyObject *ForkError;

static const char fork_message[] =
	"usmbridge cannot be used in a process created by fork() from one that had already used it: "
	"the Go runtime inside usmbridge does not survive fork() without exec(). "
	"Start worker processes with the 'spawn' or 'forkserver' method (multiprocessing.get_context('spawn')); "
	"a forkserver must not use usmbridge itself (do not preload a module that does). "
	"Objects inherited from the parent are leaked here, not freed.";

/* forked raises ForkError and returns 1 in a forked child, else 0. */
static int forked(void)
{
	if (!ub_forked)
		return 0;
	PyErr_SetString(ForkError != NULL ? ForkError : PyExc_RuntimeError, fork_message);
	return 1;
}

/* ---- exported tensors ------------------------------------------------ */

/* ub_block is one exported tensor. The managed struct comes first, so a
 * deleter's argument is the block. Blocks are Go's memory (ub_blocks,
 * exportledger.ReplayBlocks), fetched in batches and kept here for reuse, never
 * freed: a block stays mapped, so reading its magic is always safe. magic
 * holds one of the ledger's two block states, so a second call of a
 * deleter is counted as a stray delete instead of freeing twice (while the
 * block has not been reused). */
typedef struct ub_block {
	union {
		ub_dl_managed legacy;
		ub_dl_managed_versioned versioned;
	} m;
	uint64_t magic;
	struct ub_block *next;
} ub_block;

/* Go's export record (ext.h): block states and the export counters. */
static ub_ledger *ledger;

#define UB_BLOCK_BATCH 64

/* Guarded by the GIL. */
static ub_block *free_blocks;

static ub_block *block_get(void)
{
	if (free_blocks == NULL) {
		uintptr_t got[UB_BLOCK_BATCH];
		int n = ub_blocks(got, UB_BLOCK_BATCH, sizeof(ub_block), offsetof(ub_block, magic));
		for (int i = 0; i < n; i++) {
			ub_block *b = (ub_block *)got[i];
			b->next = free_blocks;
			free_blocks = b;
		}
		if (free_blocks == NULL)
			return NULL;
	}
	ub_block *b = free_blocks;
	free_blocks = b->next;
	return b;
}

/* replayed_live_add counts C's live exports (ub_ledger.replayed_live).
 * Every caller holds the GIL, so a relaxed load and store suffice: no
 * locked instruction on the export path. */
static void replayed_live_add(int64_t d)
{
	int64_t *c = &ledger->replayed_live;
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
}

static void block_put(ub_block *b)
{
	b->magic = ledger->free_magic;
	b->next = free_blocks;
	free_blocks = b;
}

/* block_release ends an export: it frees the block and drops the Array
 * reference the tensor held. After interpreter shutdown it leaks both
 * rather than touch Python, as NumPy's deleter does. */
static void block_release(ub_block *b, PyObject *owner)
{
	if (!Py_IsInitialized())
		return;
	PyGILState_STATE st = PyGILState_Ensure();
	if (b->magic != ledger->live_magic) {
		__atomic_fetch_add(&ledger->stray_deletes, 1, __ATOMIC_RELAXED);
	} else {
		replayed_live_add(-1);
		block_put(b);
		Py_DECREF(owner);
	}
	PyGILState_Release(st);
}

static void delete_legacy(ub_dl_managed *m)
{
	block_release((ub_block *)m, (PyObject *)m->manager_ctx);
}

static void delete_versioned(ub_dl_managed_versioned *m)
{
	block_release((ub_block *)m, (PyObject *)m->manager_ctx);
}

static const char name_legacy[] = "dltensor";
static const char name_versioned[] = "dltensor_versioned";

/* The capsule rule: a capsule that still has its fresh name was never
 * consumed, so its destructor deletes the tensor; a consumer renames it to
 * used_* when it takes ownership. */
static void capsule_destructor(PyObject *cap)
{
	const char *name = PyCapsule_GetName(cap);
	if (name == NULL)
		return;
	if (strcmp(name, name_versioned) == 0) {
		ub_dl_managed_versioned *m = PyCapsule_GetPointer(cap, name);
		if (m != NULL && m->deleter != NULL)
			m->deleter(m);
	} else if (strcmp(name, name_legacy) == 0) {
		ub_dl_managed *m = PyCapsule_GetPointer(cap, name);
		if (m != NULL && m->deleter != NULL)
			m->deleter(m);
	}
}

/* ---- the Array type -------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	int64_t handle;      /* Go's handle of the array; 0 for none */
	uintptr_t pending;   /* a tensor C imported with Go's decision, not yet in Go (ext.h); 0: none */
	int32_t pending_versioned;
	ub_dl_device device; /* __dlpack_device__ */
	int32_t tmpl_state;  /* UB_TEMPLATE_* */
	ub_template tmpl;    /* valid when tmpl_state is UB_TEMPLATE_READY */
	PyObject *info;      /* Go's property tuple (ub_info), on first use */
	PyObject *suai;      /* Go's __sycl_usm_array_interface__ dict, on first use */
	int32_t wait_state;  /* UB_TEMPLATE_*: whether wait is usable */
	ub_wait_plan wait;   /* how C waits on the array's queue (ext.h) */
	PyObject *dev_tuple; /* __dlpack_device__'s tuple, on first use */
	ub_deleter_call crelease; /* the release Go left to C, until Go sees handle again (ext.h) */
	uintptr_t cdrop[2];       /* Python references Go left to C to drop, likewise (0: none) */
} UBArray;

int64_t ub_released[UB_RELEASED_MAX];
int32_t ub_nreleased;

ub_host_layout ub_host_layouts[UB_HOST_LAYOUTS];
int64_t ub_host_replays, ub_host_pending, ub_host_pending_releases;

/* adopt imports a pending array's tensor into Go, before anything that
 * needs its handle (ext.h, "Host imports C replays"): 0, or -1 with Go's
 * exception, the array still pending (its deallocator still releases
 * it). */
static int adopt(UBArray *self)
{
	if (self->pending == 0)
		return 0;
	int64_t h = ub_adopt_host(self->pending, self->pending_versioned, &self->device, &self->crelease);
	if (h == 0)
		return -1;
	self->handle = h;
	self->pending = 0;
	ub_host_pending--;
	return 0;
}

/* go_handle is the array's handle for a call into Go that may take a
 * reference to its tensor: from then on Go decides its release again. */
static int64_t go_handle(UBArray *self)
{
	self->crelease.fn = 0;
	self->crelease.arg = 0;
	self->cdrop[0] = self->cdrop[1] = 0;
	return self->handle;
}

static PyTypeObject UBArray_Type;

/* Interned keyword names, compared by identity first. */
static PyObject *kw_stream, *kw_max_version, *kw_dl_device, *kw_copy, *kw_device;

/* from_dlpack's fast path: the names it looks up, and the keywords of its
 * call of __dlpack__, (max_version=<Go's MaxVersion>,), made once. */
static PyObject *s_suai, *s_dunder_dlpack, *s_dunder_dlpack_device, *kwnames_max_version, *max_version_value;
static PyObject *s_exchange_attr, *s_exchange_attr_int;

static UBArray *array_new(void)
{
	UBArray *a = PyObject_New(UBArray, &UBArray_Type);
	if (a == NULL)
		return NULL;
	a->handle = 0;
	a->pending = 0;
	a->pending_versioned = 0;
	a->device.device_type = 0;
	a->device.device_id = 0;
	a->tmpl_state = UB_TEMPLATE_UNKNOWN; /* tmpl and wait are read only once READY */
	a->info = NULL;
	a->suai = NULL;
	a->dev_tuple = NULL;
	a->wait_state = UB_TEMPLATE_UNKNOWN;
	a->crelease.fn = 0;
	a->crelease.arg = 0;
	a->cdrop[0] = a->cdrop[1] = 0;
	return a;
}

static void array_dealloc(UBArray *self)
{
	/* Releasing the Go state may drop the last reference to a Python
	 * object; keep the exception being raised, if any, out of its way. */
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	if (self->pending != 0) {
		/* Go's decision at import, replayed, and Go never saw the
		 * array: the deleter Go approved for the layout, once. It needs
		 * no Go, so a forked child calls it too. */
		ub_host_pending--;
		ub_host_pending_releases++;
		((void (*)(void *))self->crelease.fn)((void *)self->crelease.arg);
	} else if (self->handle != 0) {
		if (ub_forked) /* in a forked child the Go state is leaked */
			ub_fork_skip();
		else if ((self->crelease.fn != 0 || self->cdrop[0] != 0) && ub_nreleased < UB_RELEASED_MAX) {
			/* Go's decision at import, replayed: the producer's
			 * deleter, once, or the Python references Go took; Go
			 * counts the release on its next entry. */
			ub_released[ub_nreleased++] = self->handle;
			if (self->crelease.fn != 0)
				((void (*)(void *))self->crelease.fn)((void *)self->crelease.arg);
			Py_XDECREF((PyObject *)self->cdrop[0]);
			Py_XDECREF((PyObject *)self->cdrop[1]);
		} else {
			/* A producer's C deleter is called here, not through
			 * purego: Go has done the bookkeeping (once). */
			ub_deleter_call d = {0, 0};
			ub_release(self->handle, &d);
			if (d.fn != 0)
				((void (*)(void *))d.fn)((void *)d.arg);
		}
	}
	PyErr_Restore(et, ev, tb);
	if (self->tmpl_state == UB_TEMPLATE_READY)
		free(self->tmpl.tensor.shape); /* shape and strides: one block */
	Py_XDECREF(self->info);
	Py_XDECREF(self->suai);
	Py_XDECREF(self->dev_tuple);
	PyObject_Free(self);
}

/* parse_kw matches vectorcall keywords against names (n of them) into out. */
static int parse_kw(const char *fname, PyObject *kwnames, PyObject *const *values,
		    PyObject **names, PyObject **out, int n)
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

/* pair reads an exact 2-tuple of exact ints that fit in long long; 0 for
 * anything else (Go then gives the array API's error, or handles it). */
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
	return !oa && !ob;
}

/* no_sync_stream: stream is the int -1, the array API's "do not
 * synchronize" (pybridge's acceptsNoSyncStream says for which arrays). Only
 * an exact int: a subclass, a bool, anything else goes to Go, which
 * decides. */
static int no_sync_stream(PyObject *stream)
{
	if (!PyLong_CheckExact(stream))
		return 0;
	int overflow;
	long v = PyLong_AsLongAndOverflow(stream, &overflow);
	return overflow == 0 && v == -1 && !PyErr_Occurred();
}

/* fill_versioned writes the template into b as a versioned tensor whose
 * deleter drops a reference to self. */
static void fill_versioned(ub_block *b, UBArray *self, uint32_t minor)
{
	b->m.versioned.version.major = 1;
	b->m.versioned.version.minor = minor;
	b->m.versioned.manager_ctx = self;
	b->m.versioned.deleter = delete_versioned;
	b->m.versioned.flags = self->tmpl.flags;
	b->m.versioned.dl_tensor = self->tmpl.tensor;
}

/* wait_fast waits on the array's queue with the plan Go made
 * (ub_wait_plan_fill): 1 when done (or nothing to wait for), 0 when Go
 * must wait instead (no plan, or the barrier failed: Go reports why). */
static int wait_fast(UBArray *self)
{
	if (self->wait_state == UB_TEMPLATE_UNKNOWN)
		self->wait_state = ub_wait_plan_fill(go_handle(self), &self->wait);
	if (self->wait_state != UB_TEMPLATE_READY)
		return 0;
	const ub_wait_plan *w = &self->wait;
	if (w->ref == 0)
		return 1;
	void *ev = ((void *(*)(void *))w->barrier)((void *)w->ref);
	if (ev == NULL)
		return 0;
	((void (*)(void *))w->event_wait)(ev);
	((void (*)(void *))w->event_delete)(ev);
	return 1;
}

/* export_fast exports from the template: 1 with *out set, 0 when these
 * arguments need Go, -1 with an exception. The stream rules are Go's
 * (ub_template_fill): None where __dlpack__ would not wait (dlpack_fast),
 * -1 where Go accepts it for this array (no_sync_ok). */
static int export_fast(UBArray *self, PyObject **kw, PyObject **out)
{
	PyObject *stream = kw[0], *maxv = kw[1], *dldev = kw[2], *copy = kw[3];
	const ub_template *t = &self->tmpl;
	if (stream == NULL || stream == Py_None) {
		if (!t->dlpack_fast)
			return 0;
	} else if (!t->no_sync_ok || !no_sync_stream(stream)) {
		return 0;
	}
	if (copy != NULL && copy != Py_None && copy != Py_False)
		return 0;
	if (dldev != NULL && dldev != Py_None) {
		long long type, id;
		if (!pair(dldev, &type, &id) || type != t->tensor.device.device_type ||
		    id != t->tensor.device.device_id)
			return 0;
	}
	int versioned = 0;
	uint32_t minor = t->minor;
	if (maxv != NULL && maxv != Py_None) {
		long long major, mi;
		if (!pair(maxv, &major, &mi) || major < 0 || mi < 0 || major > (1LL << 31) || mi > (1LL << 31))
			return 0;
		versioned = major >= 1;
		if (major == 1) {
			if (mi >= UB_MINOR_SLOTS)
				return 0;
			minor = t->minor_for[mi]; /* Go's answer (ub_template_fill) */
		}
	}
	if (!versioned && !t->legacy_ok)
		return 0;
	/* stream None: Export waits on the array's queue first; so does C.
	 * stream=-1 asks for no synchronization: no wait. */
	if ((stream == NULL || stream == Py_None) && !wait_fast(self))
		return 0;

	ub_block *b = block_get();
	if (b == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	const char *name;
	if (versioned) {
		fill_versioned(b, self, minor);
		name = name_versioned;
	} else {
		b->m.legacy.dl_tensor = t->tensor;
		b->m.legacy.manager_ctx = self;
		b->m.legacy.deleter = delete_legacy;
		name = name_legacy;
	}
	PyObject *cap = PyCapsule_New(b, name, capsule_destructor);
	if (cap == NULL) {
		block_put(b);
		return -1;
	}
	b->magic = ledger->live_magic;
	replayed_live_add(1);
	Py_INCREF(self);
	*out = cap;
	return 1;
}

static PyObject *array_dlpack(UBArray *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
	if (forked())
		return NULL;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	if (nargs != 0) {
		PyErr_Format(PyExc_TypeError, "__dlpack__() takes no positional arguments (%zd given)", nargs);
		return NULL;
	}
	PyObject *names[4] = {kw_stream, kw_max_version, kw_dl_device, kw_copy};
	PyObject *kw[4] = {NULL, NULL, NULL, NULL};
	if (kwnames != NULL && parse_kw("__dlpack__", kwnames, args, names, kw, 4) < 0)
		return NULL;
	if (adopt(self) < 0)
		return NULL;
	if (self->tmpl_state == UB_TEMPLATE_UNKNOWN)
		self->tmpl_state = ub_template_fill(go_handle(self), &self->tmpl);
	if (self->tmpl_state == UB_TEMPLATE_READY) {
		PyObject *cap;
		int r = export_fast(self, kw, &cap);
		if (r != 0)
			return r > 0 ? cap : NULL;
	}
	return (PyObject *)ub_dlpack(go_handle(self), (uintptr_t)kw[0], (uintptr_t)kw[1], (uintptr_t)kw[2],
				     (uintptr_t)kw[3]);
}

static PyObject *array_dlpack_device(UBArray *self, PyObject *unused)
{
	if (forked())
		return NULL;
	/* The device is fixed when the array is made (put in main.go), so
	 * the tuple is made once; tuples are immutable. */
	if (self->dev_tuple == NULL)
		self->dev_tuple = Py_BuildValue("(ii)", (int)self->device.device_type, (int)self->device.device_id);
	Py_XINCREF(self->dev_tuple);
	return self->dev_tuple;
}

static PyObject *array_info(UBArray *self)
{
	if (forked())
		return NULL;
	if (self->info == NULL) {
		if (adopt(self) < 0)
			return NULL;
		self->info = (PyObject *)ub_info(self->handle);
	}
	return self->info;
}

/* Indices into Go's info tuple (ub_info). */
enum { INFO_SHAPE, INFO_TYPESTR, INFO_STRIDES, INFO_OFFSET, INFO_USM_TYPE, INFO_DEVICE, INFO_DATA, INFO_READONLY };

static PyObject *array_get(UBArray *self, void *index)
{
	PyObject *info = array_info(self);
	if (info == NULL)
		return NULL;
	PyObject *v = PyTuple_GET_ITEM(info, (Py_ssize_t)(intptr_t)index);
	Py_INCREF(v);
	return v;
}

/* __sycl_usm_array_interface__: Go builds the dict on the first call
 * (ub_suai: the AttributeError for host memory, the wait on the queue, the
 * fields). Every field is fixed for the array's life, so later calls repeat
 * only what Go does each time, the wait on the array's queue (with Go's
 * wait plan, wait_fast, or else in Go: ub_wait), and
 * hand out a shallow copy of the first dict: a fresh dict per call, as
 * dpctl's usm_ndarray gives, so a caller that changes its dict changes no
 * one else's. An error is never cached: Go decides again on the next call. */
static PyObject *array_suai(UBArray *self, void *unused)
{
	if (forked() || adopt(self) < 0)
		return NULL;
	if (self->suai == NULL) {
		PyObject *d = (PyObject *)ub_suai(go_handle(self));
		if (d == NULL)
			return NULL;
		self->suai = d;
	} else if (!wait_fast(self) && ub_wait(go_handle(self)) < 0) {
		return NULL;
	}
	return PyDict_Copy(self->suai);
}

static PyObject *array_repr(UBArray *self)
{
	PyObject *info = array_info(self);
	if (info == NULL)
		return NULL;
	return PyUnicode_FromFormat("usmbridge.Array(shape=%R, dtype=%R, usm_type=%R, device=%R)",
				    PyTuple_GET_ITEM(info, INFO_SHAPE), PyTuple_GET_ITEM(info, INFO_TYPESTR),
				    PyTuple_GET_ITEM(info, INFO_USM_TYPE), PyTuple_GET_ITEM(info, INFO_DEVICE));
}

static PyMethodDef array_methods[] = {
	{"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack, METH_FASTCALL | METH_KEYWORDS,
	 "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
	 "Export as a DLPack capsule (the array API's __dlpack__)."},
	{"__dlpack_device__", (PyCFunction)array_dlpack_device, METH_NOARGS,
	 "(DLPack device type, device id) of the array."},
	{NULL},
};

#define INFO(i) ((void *)(intptr_t)(i))
static PyGetSetDef array_getset[] = {
	{"__sycl_usm_array_interface__", (getter)array_suai, NULL,
	 "The SUAI dict (AttributeError for host memory).", NULL},
	{"shape", (getter)array_get, NULL, "tuple of ints", INFO(INFO_SHAPE)},
	{"dtype", (getter)array_get, NULL, "typestr, e.g. '|f4'", INFO(INFO_TYPESTR)},
	{"strides", (getter)array_get, NULL, "in elements; None when C-contiguous", INFO(INFO_STRIDES)},
	{"offset", (getter)array_get, NULL, "element offset from the data pointer", INFO(INFO_OFFSET)},
	{"usm_type", (getter)array_get, NULL, "'device', 'shared' or 'host' for USM; None for host memory that is not USM", INFO(INFO_USM_TYPE)},
	{"device", (getter)array_get, NULL, "(DLPack device type, device id)", INFO(INFO_DEVICE)},
	{"data", (getter)array_get, NULL, "address of element 0", INFO(INFO_DATA)},
	{"readonly", (getter)array_get, NULL, "whether the memory must not be written", INFO(INFO_READONLY)},
	{NULL},
};

static PyTypeObject UBArray_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "usmbridge.Array",
	.tp_doc = "A Go-held, zero-copy view of USM or host memory.\n\n"
		  "Made by usmbridge.asarray and usmbridge.from_dlpack; not constructible\n"
		  "directly. It is a DLPack producer (__dlpack__, __dlpack_device__, and\n"
		  "the DLPack 1.3 C exchange API __dlpack_c_exchange_api__) and,\n"
		  "for USM, exposes __sycl_usm_array_interface__, so numpy, dpnp,\n"
		  "mpi4py and other consumers take it without a copy.",
	.tp_basicsize = sizeof(UBArray),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_dealloc = (destructor)array_dealloc,
	.tp_repr = (reprfunc)array_repr,
	.tp_methods = array_methods,
	.tp_getset = array_getset,
};

/* ---- the DLPack C exchange API (producer) ------------------------------ */

/* The table usmbridge.Array's type carries (__dlpack_c_exchange_api__, and
 * the 1.2 int form __c_dlpack_exchange_api__). Each function replays what
 * Go decided for the array (its template: layout from Go's export, and
 * whether to wait on its queue first), or calls Go. None synchronises
 * beyond what Go decided: an array whose queue is not the current work
 * stream of its device is waited on (see pybridge's exchangeNeedsWait). */

static PyObject *wrap(UBArray *a, int64_t handle);

/* xch_array checks that obj is a usmbridge.Array whose template is ready,
 * waiting on its queue if Go said so: 0, or -1 with an exception. */
static int xch_array(void *obj, UBArray **out)
{
	if (forked())
		return -1;
	if (obj == NULL) {
		PyErr_SetString(PyExc_ValueError, "DLPack exchange API: py_object is NULL");
		return -1;
	}
	PyObject *o = obj;
	if (!PyObject_TypeCheck(o, &UBArray_Type)) {
		PyErr_Format(PyExc_TypeError, "DLPack exchange API of usmbridge.Array: expected a usmbridge.Array, got %.200s",
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	UBArray *self = (UBArray *)o;
	if (adopt(self) < 0)
		return -1;
	if (self->tmpl_state == UB_TEMPLATE_UNKNOWN)
		self->tmpl_state = ub_template_fill(go_handle(self), &self->tmpl);
	if (self->tmpl_state != UB_TEMPLATE_READY)
		return ub_exchange_refuse(go_handle(self)); /* raises Go's refusal */
	/* Go's wait, made in C where Go gave a plan (wait_fast), as
	 * __dlpack__ and the SUAI do. */
	if (self->tmpl.exchange_wait && !wait_fast(self) && ub_wait(go_handle(self)) < 0)
		return -1;
	*out = self;
	return 0;
}

static int xch_from_py(void *obj, ub_dl_managed_versioned **out)
{
	UBArray *self;
	if (out == NULL) {
		PyErr_SetString(PyExc_ValueError, "managed_tensor_from_py_object_no_sync: out is NULL");
		return -1;
	}
	if (xch_array(obj, &self) < 0)
		return -1;
	ub_block *b = block_get();
	if (b == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	fill_versioned(b, self, self->tmpl.minor);
	b->magic = ledger->live_magic;
	replayed_live_add(1);
	__atomic_fetch_add(&ledger->exchange_exports, 1, __ATOMIC_RELAXED);
	Py_INCREF(self);
	*out = &b->m.versioned;
	return 0;
}

static int xch_dltensor_from_py(void *obj, ub_dl_tensor *out)
{
	UBArray *self;
	if (out == NULL) {
		PyErr_SetString(PyExc_ValueError, "dltensor_from_py_object_no_sync: out is NULL");
		return -1;
	}
	if (xch_array(obj, &self) < 0)
		return -1;
	*out = self->tmpl.tensor; /* shape and strides live as long as the array */
	return 0;
}

static int xch_to_py(ub_dl_managed_versioned *tensor, void **out_py_object)
{
	if (tensor == NULL || out_py_object == NULL || forked()) {
		/* The tensor was given to us: hand it back (a Go deleter is gated
		 * in a forked child). */
		if (tensor != NULL && tensor->deleter != NULL)
			tensor->deleter(tensor);
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "managed_tensor_to_py_object_no_sync: tensor or out is NULL");
		return -1;
	}
	UBArray *a = array_new();
	if (a == NULL) {
		if (tensor->deleter != NULL)
			tensor->deleter(tensor);
		return -1;
	}
	PyObject *r = wrap(a, ub_from_managed((uintptr_t)tensor, &a->device)); /* Go deletes it on error */
	if (r == NULL)
		return -1;
	*out_py_object = r;
	return 0;
}

static int xch_current_work_stream(int32_t device_type, int32_t device_id, void **out)
{
	PyGILState_STATE st = PyGILState_Ensure();
	int r = forked() ? -1 : ub_work_stream(device_type, device_id, (uintptr_t *)out);
	PyGILState_Release(st);
	return r;
}

static int xch_allocator(ub_dl_tensor *prototype, ub_dl_managed_versioned **out, void *error_ctx,
			 void (*SetError)(void *error_ctx, const char *kind, const char *message))
{
	if (ub_forked || !Py_IsInitialized()) {
		if (SetError != NULL)
			SetError(error_ctx, "RuntimeError", ub_forked ? fork_message : "the Python interpreter is not running");
		return -1;
	}
	char *kind = NULL, *msg = NULL;
	PyGILState_STATE st = PyGILState_Ensure();
	int r = ub_alloc(prototype, out, &kind, &msg);
	PyGILState_Release(st);
	if (r != 0 && SetError != NULL)
		SetError(error_ctx, kind != NULL ? kind : "RuntimeError", msg != NULL ? msg : "allocation failed");
	free(kind);
	free(msg);
	return r == 0 ? 0 : -1;
}

/* The version of dlpack.h this table follows; the tensors it hands out
 * carry Go's (dlpack.ProducerVersion, in the template). */
static ub_dl_exchange_api exchange_api = {
	.header = {.version = {.major = 1, .minor = 3}, .prev_api = NULL},
	.managed_tensor_allocator = xch_allocator,
	.managed_tensor_from_py_object_no_sync = xch_from_py,
	.managed_tensor_to_py_object_no_sync = xch_to_py,
	.dltensor_from_py_object_no_sync = xch_dltensor_from_py,
	.current_work_stream = xch_current_work_stream,
};

static const char exchange_capsule_name[] = "dlpack_exchange_api";

/* add_exchange_api sets both type attributes. */
static int add_exchange_api(void)
{
	PyObject *cap = PyCapsule_New(&exchange_api, exchange_capsule_name, NULL);
	PyObject *addr = PyLong_FromVoidPtr(&exchange_api);
	int r = cap == NULL || addr == NULL ||
			PyDict_SetItemString(UBArray_Type.tp_dict, "__dlpack_c_exchange_api__", cap) < 0 ||
			PyDict_SetItemString(UBArray_Type.tp_dict, "__c_dlpack_exchange_api__", addr) < 0
		? -1
		: 0;
	Py_XDECREF(cap);
	Py_XDECREF(addr);
	PyType_Modified(&UBArray_Type);
	return r;
}

/* ---- module functions ------------------------------------------------ */

static PyObject *wrap(UBArray *a, int64_t handle)
{
	if (handle == 0) {
		Py_DECREF(a);
		return NULL;
	}
	a->handle = handle;
	return (PyObject *)a;
}

/* Go's itemgetters for exact SUAI dicts by size (ext.h, "SUAI reads C
 * replays"), asked for on the first asarray; they live as long as the
 * interpreter. */
static uintptr_t suai_getters[UB_SUAI_GETTERS];
static int suai_getters_filled;

static PyObject *mod_asarray(PyObject *mod, PyObject *obj)
{
	if (forked())
		return NULL;
	if (!suai_getters_filled) {
		if (ub_suai_getters(suai_getters) < 0)
			return NULL;
		suai_getters_filled = 1;
	}
	UBArray *a = array_new();
	if (a == NULL)
		return NULL;
	PyObject *d = PyObject_GetAttr(obj, s_suai);
	PyObject *got = NULL;
	Py_ssize_t n = 0;
	if (d != NULL && PyDict_CheckExact(d)) {
		n = PyDict_GET_SIZE(d);
		PyObject *getter = (PyObject *)suai_getters[n < UB_SUAI_GETTERS ? n : UB_SUAI_GETTERS - 1];
		if (getter != NULL && (got = PyObject_CallOneArg(getter, d)) == NULL)
			PyErr_Clear(); /* a key is missing: Go looks each up */
	}
	int64_t h = ub_asarray_read((uintptr_t)obj, (uintptr_t)d, (uintptr_t)got, n, &a->device, a->cdrop);
	Py_XDECREF(got);
	Py_XDECREF(d);
	return wrap(a, h);
}

/* dl_device_type reads the device type of the DLPack tensor at p. */
static int32_t dl_device_type(void *p, int versioned)
{
	return versioned ? ((ub_dl_managed_versioned *)p)->dl_tensor.device.device_type
			 : ((ub_dl_managed *)p)->dl_tensor.device.device_type;
}

#define UB_DL_CPU 1

/* The last type host_producer found without a DLPack C exchange table, and
 * its version tag then. */
static PyTypeObject *no_exchange_type; /* borrowed: compared, never used */
static unsigned int no_exchange_tag;

/* host_producer: x's type offers no DLPack C exchange table (Go's
 * from_dlpack takes that first) and x.__dlpack_device__() is (kDLCPU, id):
 * the one case from_dlpack_fast may take. For a kDLOneAPI producer Go's
 * from_dlpack passes the consumer's queue as the stream, which C does not
 * make. Anything else, an exception included, is left to Go's from_dlpack,
 * which decides and reports with all its rules. */
static int host_producer(PyObject *x)
{
	PyTypeObject *t = Py_TYPE(x);
	if (Py_TYPE(t) != &PyType_Type)
		return 0;
	/* The last type found without a table, while its version tag holds:
	 * CPython gives a type a new tag (never reused) whenever an attribute
	 * of it or of a base changes, so the lookups would find the same. */
	if (t != no_exchange_type || !PyType_HasFeature(t, Py_TPFLAGS_VALID_VERSION_TAG) ||
	    t->tp_version_tag != no_exchange_tag) {
		if (_PyType_Lookup(t, s_exchange_attr) != NULL || _PyType_Lookup(t, s_exchange_attr_int) != NULL)
			return 0;
		no_exchange_type = NULL;
		if (PyType_HasFeature(t, Py_TPFLAGS_VALID_VERSION_TAG)) {
			no_exchange_type = t;
			no_exchange_tag = t->tp_version_tag;
		}
	}
	PyObject *dev = PyObject_CallMethodNoArgs(x, s_dunder_dlpack_device);
	if (dev == NULL) {
		PyErr_Clear();
		return 0;
	}
	long long type, id;
	int ok = pair(dev, &type, &id) && type == UB_DL_CPU;
	Py_DECREF(dev);
	return ok;
}

/* from_dlpack_fast is from_dlpack(x) without device and copy, of a host
 * producer (host_producer): the calls
 * into Python that Go's FromDLPack makes one purego call at a time
 * (the __dlpack__ and __dlpack_device__ lookups, __dlpack__(max_version=...)
 * with the keyword Go asks for, the capsule's name) are made here, and Go
 * is entered once with what they gave: with a fresh capsule of a kDLCPU
 * tensor, ub_import_host imports it (Go's checks) and C renames the capsule
 * used_* only if that succeeded, unless Go has accepted such a tensor
 * before (host_layout_of): then C replays that decision and Go is not
 * entered at all (ext.h, "Host imports C replays"); anything else (no
 * producer, an exception, a capsule of another name or device) goes to
 * ub_from_dlpack_result, the rest of Go's FromDLPack, which decides. */
static int64_t from_dlpack_rest(PyObject *x, PyObject *cap, ub_dl_device *dev);

/* host_layout_of finds the decision Go wrote down for a box that holds
 * the tensor at p: equal in every field Import reads but the data pointer
 * and the shape, each extent in 0..shape_max, and the data pointer in the
 * range Go accepts for the box (ext.h, "Host imports C replays"); NULL
 * when there is none, and Go decides. */
__attribute__((noinline)) /* inlined, it slowed the Go path beside it by ~15 ns (measured) */
static const ub_host_layout *host_layout_of(void *p, int versioned)
{
	const ub_dl_tensor *t;
	uintptr_t deleter;
	if (versioned) {
		ub_dl_managed_versioned *m = p;
		t = &m->dl_tensor;
		deleter = (uintptr_t)m->deleter;
	} else {
		ub_dl_managed *m = p;
		t = &m->dl_tensor;
		deleter = (uintptr_t)m->deleter;
	}
	int32_t ndim = t->ndim;
	if (ndim < 0 || ndim > UB_HOST_LAYOUT_NDIM || (ndim > 0 && t->shape == NULL))
		return NULL;
	size_t dims = (size_t)ndim * sizeof(int64_t);
	uintptr_t data = (uintptr_t)t->data;
	for (int i = 0; i < UB_HOST_LAYOUTS; i++) {
		const ub_host_layout *l = &ub_host_layouts[i];
		if (!l->used || l->ndim != ndim || l->versioned != versioned || l->deleter != deleter ||
		    l->byte_offset != t->byte_offset || l->device.device_type != t->device.device_type ||
		    l->device.device_id != t->device.device_id || l->dtype.code != t->dtype.code ||
		    l->dtype.bits != t->dtype.bits || l->dtype.lanes != t->dtype.lanes ||
		    data < l->data_lo || data > l->data_hi || l->has_strides != (t->strides != NULL))
			continue;
		if (versioned) {
			const ub_dl_managed_versioned *m = p;
			if (l->version.major != m->version.major || l->version.minor != m->version.minor ||
			    l->flags != m->flags)
				continue;
		}
		if (t->strides != NULL && ndim > 0 && memcmp(l->strides, t->strides, dims) != 0)
			continue;
		int32_t d = 0;
		while (d < ndim && (uint64_t)t->shape[d] <= (uint64_t)l->shape_max[d]) /* a negative extent is out */
			d++;
		if (d == ndim)
			return l;
	}
	return NULL;
}

static PyObject *from_dlpack_fast(PyObject *x)
{
	UBArray *a = array_new();
	if (a == NULL)
		return NULL;
	if (!host_producer(x))
		return wrap(a, ub_from_dlpack((uintptr_t)x, 0, 0, &a->device));
	/* host_producer called x.__dlpack_device__(): x has one. The method
	 * call makes no bound method; the method itself is looked up again
	 * only for Go, when C leaves the result to it. */
	PyObject *argv[3] = {NULL, x, max_version_value}; /* argv[0]: the callee's, by the offset flag */
	PyObject *cap = PyObject_VectorcallMethod(s_dunder_dlpack, argv + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
						  kwnames_max_version);
	if (cap != NULL && PyCapsule_CheckExact(cap)) {
		const char *name = PyCapsule_GetName(cap);
		int versioned = name != NULL && strcmp(name, name_versioned) == 0;
		if (versioned || (name != NULL && strcmp(name, name_legacy) == 0)) {
			void *p = PyCapsule_GetPointer(cap, name);
			if (p != NULL && dl_device_type(p, versioned) == UB_DL_CPU) {
				const ub_host_layout *l = host_layout_of(p, versioned);
				if (l != NULL) {
					if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0)
						PyErr_Clear(); /* cannot fail for a valid capsule */
					Py_DECREF(cap);
					a->pending = (uintptr_t)p;
					a->pending_versioned = versioned;
					a->device = l->device;
					a->crelease.fn = l->deleter;
					a->crelease.arg = (uintptr_t)p;
					ub_host_replays++;
					ub_host_pending++;
					return (PyObject *)a;
				}
				int64_t h = ub_import_host((uintptr_t)p, versioned, &a->device, &a->crelease);
				if (h != 0 && PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0)
					PyErr_Clear(); /* cannot fail for a valid capsule */
				Py_DECREF(cap);
				return wrap(a, h);
			}
		}
		PyErr_Clear(); /* Go asks the capsule again and reports what is wrong */
	}
	return wrap(a, from_dlpack_rest(x, cap, &a->device));
}

/* from_dlpack_rest hands ub_from_dlpack_result what from_dlpack_fast's
 * call of x.__dlpack__ gave, cap (a new reference, or NULL with the
 * exception set), with the method Go may call again (a producer that
 * predates max_version is retried without it): 0 when x has no callable
 * __dlpack__, for Go's AttributeError. The exception of the call is kept
 * across the lookup. */
static int64_t from_dlpack_rest(PyObject *x, PyObject *cap, ub_dl_device *dev)
{
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	PyObject *meth = PyObject_GetAttr(x, s_dunder_dlpack);
	if (meth == NULL || !PyCallable_Check(meth)) {
		Py_XDECREF(meth);
		PyErr_Clear();
		Py_XDECREF(type);
		Py_XDECREF(value);
		Py_XDECREF(tb);
		Py_XDECREF(cap);
		return ub_from_dlpack_result((uintptr_t)x, 0, 0, dev);
	}
	PyErr_Restore(type, value, tb);
	int64_t h = ub_from_dlpack_result((uintptr_t)x, (uintptr_t)meth, (uintptr_t)cap, dev);
	Py_XDECREF(cap);
	Py_DECREF(meth);
	return h;
}

static PyObject *mod_from_dlpack(PyObject *mod, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
	if (forked())
		return NULL;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	if (nargs != 1) {
		PyErr_Format(PyExc_TypeError, "from_dlpack() takes exactly 1 positional argument (%zd given)", nargs);
		return NULL;
	}
	PyObject *names[2] = {kw_device, kw_copy};
	PyObject *kw[2] = {NULL, NULL};
	if (kwnames != NULL && parse_kw("from_dlpack", kwnames, args + 1, names, kw, 2) < 0)
		return NULL;
	if ((kw[0] == NULL || kw[0] == Py_None) && (kw[1] == NULL || kw[1] == Py_None))
		return from_dlpack_fast(args[0]);
	UBArray *a = array_new();
	if (a == NULL)
		return NULL;
	return wrap(a, ub_from_dlpack((uintptr_t)args[0], (uintptr_t)kw[0], (uintptr_t)kw[1], &a->device));
}

static PyObject *mod_stats(PyObject *mod, PyObject *unused)
{
	if (forked())
		return NULL;
	return (PyObject *)ub_stats();
}

static PyObject *mod_inject_panic(PyObject *mod, PyObject *where)
{
	if (forked())
		return NULL;
	const char *s = PyUnicode_AsUTF8(where);
	if (s == NULL)
		return NULL;
	ub_inject_panic((char *)s);
	Py_RETURN_NONE;
}

/* _enter_go makes one call into Go that does nothing: the floor every
 * path that enters Go pays (python/bench/bench_floor.py). */
static PyObject *mod_enter_go(PyObject *mod, PyObject *unused)
{
	if (forked())
		return NULL;
	ub_enter();
	Py_RETURN_NONE;
}

/* _fork_skips is the one function that works in a forked child: it is C
 * only, and says how many releases the child skipped (leaked). */
static PyObject *mod_fork_skips(PyObject *mod, PyObject *unused)
{
	return PyLong_FromLong(__atomic_load_n(&ub_fork_skips, __ATOMIC_RELAXED));
}

static PyMethodDef module_methods[] = {
	{"asarray", (PyCFunction)mod_asarray, METH_O,
	 "asarray(obj, /)\n--\n\n"
	 "Return a zero-copy usmbridge.Array over obj's USM memory.\n\n"
	 "obj is any object exposing __sycl_usm_array_interface__ (a dpnp or\n"
	 "dpctl.tensor array, a dpctl.memory object, a dict-bearing wrapper).\n"
	 "The interface is checked with dpctl's rules and exceptions, the pointer\n"
	 "must belong to the SYCL context its syclobj names, and where the runtime\n"
	 "can tell the allocation's extent the array must lie inside it\n"
	 "(ValueError otherwise). The read-only flag is kept. The Array keeps obj\n"
	 "alive. Needs dpctl."},
	{"from_dlpack", (PyCFunction)(void (*)(void))mod_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
	 "from_dlpack(x, /, *, device=None, copy=None)\n--\n\n"
	 "Return a usmbridge.Array over the data of x, as the array API's\n"
	 "from_dlpack does.\n\n"
	 "x is any DLPack producer (numpy, dpnp, jax, torch, a usmbridge.Array).\n"
	 "A producer whose type has the DLPack C exchange API\n"
	 "(__dlpack_c_exchange_api__) is taken through that table, with the same\n"
	 "rules.\n"
	 "device is a DLPack (device_type, device_id) pair such as (1, 0) for the\n"
	 "host; copy=None shares memory where possible, True always copies, False\n"
	 "never does (BufferError or ValueError when a copy would be needed).\n"
	 "A producer that does not take max_version, dl_device and copy is\n"
	 "called again without them, and usmbridge does the copy or host move\n"
	 "itself. A SYCL (kDLOneAPI) producer is passed the queue the array\n"
	 "lands on as stream, so it orders that queue after its pending work\n"
	 "without a host wait; with copy=True usmbridge copies the array it\n"
	 "gets, after that ordering. Exceptions the producer raises reach the\n"
	 "caller unchanged."},
	{"_stats", (PyCFunction)mod_stats, METH_NOARGS,
	 "Live counts, for leak tests, and the C exchange API counters (exchange_exports: tensors our\n"
	 "table handed out; exchange_imports: tensors from_dlpack took through a producer's table)."},
	{"_enter_go", (PyCFunction)mod_enter_go, METH_NOARGS,
	 "Enter Go once and do nothing (benchmarks: the cost of a call into Go)."},
	{"_fork_skips", (PyCFunction)mod_fork_skips, METH_NOARGS,
	 "Releases a forked child skipped rather than enter Go (works in a forked child)."},
	{"_inject_panic", (PyCFunction)mod_inject_panic, METH_O,
	 "_inject_panic(boundary, /)\n--\n\nMake the next call of a Go boundary panic (tests)."},
	{NULL},
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "usmbridge._ext",
	.m_doc = "The Go-backed core of usmbridge (pybridge/ext).",
	.m_size = -1,
	.m_methods = module_methods,
};

static int intern(PyObject **p, const char *s)
{
	*p = PyUnicode_InternFromString(s);
	return *p == NULL ? -1 : 0;
}

PyMODINIT_FUNC PyInit__ext(void)
{
	if (ub_forked) { /* loaded in the parent, initialised again in the child */
		PyErr_SetString(PyExc_ImportError, fork_message);
		return NULL;
	}
	char *err = ub_init();
	if (err != NULL) {
		PyErr_SetString(PyExc_ImportError, err);
		free(err);
		return NULL;
	}
	ledger = ub_ledger_addr();
	if (intern(&kw_stream, "stream") < 0 || intern(&kw_max_version, "max_version") < 0 ||
	    intern(&kw_dl_device, "dl_device") < 0 || intern(&kw_copy, "copy") < 0 ||
	    intern(&kw_device, "device") < 0 || intern(&s_dunder_dlpack, "__dlpack__") < 0 ||
	    intern(&s_suai, "__sycl_usm_array_interface__") < 0 ||
	    intern(&s_dunder_dlpack_device, "__dlpack_device__") < 0 ||
	    intern(&s_exchange_attr, "__dlpack_c_exchange_api__") < 0 ||
	    intern(&s_exchange_attr_int, "__c_dlpack_exchange_api__") < 0)
		return NULL;
	if (kwnames_max_version == NULL) {
		uint32_t major, minor;
		ub_max_version(&major, &minor);
		kwnames_max_version = PyTuple_Pack(1, kw_max_version);
		max_version_value = Py_BuildValue("(II)", (unsigned int)major, (unsigned int)minor);
		if (kwnames_max_version == NULL || max_version_value == NULL)
			return NULL;
	}
	if (PyType_Ready(&UBArray_Type) < 0 || add_exchange_api() < 0)
		return NULL;
	PyObject *m = PyModule_Create(&module_def);
	if (m == NULL)
		return NULL;
	Py_INCREF(&UBArray_Type);
	if (PyModule_AddObject(m, "Array", (PyObject *)&UBArray_Type) < 0) {
		Py_DECREF(&UBArray_Type);
		Py_DECREF(m);
		return NULL;
	}
	if (ForkError == NULL) {
		ForkError = PyErr_NewExceptionWithDoc("usmbridge.ForkError",
						      "Raised by every use of usmbridge in a child created by fork() "
						      "(use the 'spawn' or 'forkserver' start method).",
						      PyExc_RuntimeError, NULL);
		if (ForkError == NULL) {
			Py_DECREF(m);
			return NULL;
		}
	}
	Py_INCREF(ForkError);
	if (PyModule_AddObject(m, "ForkError", ForkError) < 0) {
		Py_DECREF(ForkError);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}

#endif /* UB_HAVE_PYTHON */
