/*
 * buffer.c: the buffer protocol, for memory the host reads. C's alone for
 * host-readable memory with nothing to wait for and a dtype with a format
 * (the table Go filled); Go's otherwise (pyext's ubx_go_buffer waits on the
 * array's queue, refuses device USM, says why a dtype has no format), and
 * Go then has C fill the view (ubx_fill_buffer).
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

static int fill_buffer(Array *a, Py_buffer *view, int flags, const char *format);

/* The buffer protocol: C's alone for host-readable memory with nothing to
 * wait for (host memory, USM host or shared memory whose queue is never
 * busy) and a dtype with a format, from the table Go filled; Go's
 * otherwise (it waits on the array's queue, refuses device USM, and says
 * why a dtype has no format). */
int array_getbuffer(Array *a, Py_buffer *view, int flags)
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

void array_releasebuffer(Array *a, Py_buffer *view)
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

/* c_contiguous reports whether v's strides lay its extents out in C order
 * (extents of 1 may have any stride; an empty array is contiguous). */
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

#else

#include "ubx.h"

/* Without Python: what Go calls exists, and is never called. */
int ubx_fill_buffer(void *arr, void *view, int flags, const char *format, void **exc) { return -1; }

#endif /* UBX_MODULE */
