/*
 * read_buffer.c: an array argument through the buffer protocol (host
 * memory): the view read as a DLPack tensor with the import's rules
 * (dlimport.c), or left to Go, which says what is wrong with it.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

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
int read_buffer(PyObject *o, int writable, int has_dlpack, hold *h, ubx_value *val)
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

#else

typedef int ubx_read_buffer_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
