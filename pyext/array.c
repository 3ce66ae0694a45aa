/*
 * array.c: the Array object and its lifetime. C owns the Python objects it
 * creates, as NumPy's C does: an Array holds what keeps its memory alive (a
 * producer's tensor, whose deleter it calls once, at deallocation; a buffer
 * view; the producer object; or Go's state through a handle), takes part
 * in the garbage collector (traverse and clear), and is made only by the
 * module: over what Go returned (new_array_from_result), over a producer's
 * kDLCPU tensor imported in C (array_over, take_tensor), or as a view of
 * another Array with its axes permuted (permuted: .T, .mT, from_dlpack of
 * an Array). The type, with its protocols, is arraytype.c's.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* array_alloc makes an Array with room for ndim dimensions; the caller
 * fills v (dims are the Array's). */
Array *array_alloc(int32_t ndim)
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

/* set_view copies v into a, shape and strides into a's dims, and starts
 * tracking a. */
void set_view(Array *a, const ubx_view *v)
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
void call_deleter(void *m, int versioned)
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

int array_clear(Array *a)
{
	Py_CLEAR(a->base);
	Py_CLEAR(a->syclobj);
	Py_CLEAR(a->usm_nd);
	Py_CLEAR(a->suai);
	Py_CLEAR(a->dev_tuple);
	return 0;
}

int array_traverse(Array *a, visitproc visit, void *arg)
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

void array_dealloc(Array *a)
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
		if (ubx_fork_flag)
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

/* new_array_from_result makes an Array over what Go returned (r->v with
 * r->dims, its handle, base and syclobj: the Array takes their references). */
PyObject *new_array_from_result(ubx_result *r)
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

/* array_over makes an Array (not yet tracked, owning nothing) over a
 * producer's kDLCPU tensor p, its shape and strides imported straight into
 * the Array's dims: 1 with *out, 0 when Go must decide, -1 with an
 * exception. The caller makes the Array the tensor's owner. When p is the
 * tensor of a capsule, cap is that capsule: making the Array may run the
 * collector, whose finalisers run Python code that may consume the capsule
 * (and free the tensor), so the capsule is looked at again before the
 * tensor is read; NULL for a tensor already handed to us. */
int array_over(const void *p, int versioned, PyObject *cap, Array **out)
{
	return array_over_in(p, versioned, cap, NULL, out);
}

/* array_over_in is array_over with an Array made before the capsule was
 * taken (*pre, owning nothing, room for INLINE_NDIM dimensions; NULL for
 * none): used when the tensor fits, it allocates nothing, so no collector
 * runs and the capsule needs no second look; it then takes *pre (NULL
 * after). */
int array_over_in(const void *p, int versioned, PyObject *cap, Array **pre, Array **out)
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
void take_tensor(Array *a, void *p, int versioned)
{
	a->managed = p;
	a->versioned = versioned;
	c_imports++;
	live_c_imports++;
	PyObject_GC_Track(a);
}

/* permuted is a view of a with its axes in the order perm: the same bytes
 * (data and byte_offset stay), shape and strides permuted. It holds a (its
 * memory and Go state), and has Go state of its own when a has (its queue
 * is waited on before an export). */
PyObject *permuted(Array *a, const int32_t *perm)
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

#else

typedef int ubx_array_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
