/*
 * read_numpy.c: a NumPy array argument, read in place from the array
 * object, as NumPy's own C API macros read it, once a first array read
 * both ways gave the same view (RATIONALE.md, "NumPy arrays read in
 * place").
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

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
int read_numpy(PyObject *o, hold *h, ubx_value *val)
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

#else

typedef int ubx_read_numpy_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
