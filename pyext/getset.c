/*
 * getset.c: the Array's attributes (shape, ndim, size, itemsize, nbytes,
 * strides, dtype, usm_type, device, data, offset, readonly, len, and the
 * views .T and .mT) and its repr. They read the view, which describes the
 * array for its whole life; dtype asks Go for the name of the element
 * type. The SYCL ones (sycl_queue, __usm_ndarray__, the SUAI) are suai.c's.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

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

PyObject *array_shape(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return dims_tuple(a->v.t.shape, a->v.t.ndim);
}

PyObject *array_ndim(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLong(a->v.t.ndim);
}

PyObject *array_size(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLongLong(array_size_of(&a->v));
}

PyObject *array_itemsize(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLongLong(itemsize_of(&a->v));
}

PyObject *array_nbytes(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLongLong(array_size_of(&a->v) * itemsize_of(&a->v));
}

/* strides in elements, as dpctl's usm_ndarray gives them. */
PyObject *array_strides(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return dims_tuple(a->v.t.strides, a->v.t.ndim);
}

/* dtype: a numpy.dtype where NumPy is loaded (and knows the type), else
 * the typestr where SUAI has one ('<f4'), else the DLPack dtype's name
 * ('bfloat16'). NumPy is never imported here. */
PyObject *array_typestr(Array *a, void *unused)
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

PyObject *array_usm_type(Array *a, void *unused)
{
	if (forked())
		return NULL;
	static const char *const kinds[] = {NULL, "host", "device", "shared"};
	int k = a->v.usm_kind;
	if (a->v.t.device.device_type != UB_DL_ONEAPI || k < 1 || k > 3)
		Py_RETURN_NONE;
	return PyUnicode_FromString(kinds[k]);
}

PyObject *array_device(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return array_dlpack_device(a, NULL);
}

PyObject *array_data(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromUnsignedLongLong((unsigned long long)element0(&a->v));
}

PyObject *array_offset(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyLong_FromLongLong((long long)(a->v.t.byte_offset / (uint64_t)itemsize_of(&a->v)));
}

PyObject *array_readonly(Array *a, void *unused)
{
	if (forked())
		return NULL;
	return PyBool_FromLong((a->v.flags & UB_DL_FLAG_READ_ONLY) != 0);
}

Py_ssize_t array_len(Array *a)
{
	if (forked())
		return -1;
	if (a->v.t.ndim == 0) {
		PyErr_SetString(PyExc_TypeError, "len() of a 0-d array");
		return -1;
	}
	return (Py_ssize_t)a->v.t.shape[0];
}

/* T: the axes reversed (the array API's matrix transpose for 2-D). */
PyObject *array_T(Array *a, void *unused)
{
	if (forked())
		return NULL;
	int32_t perm[UBX_MAX_NDIM], n = a->v.t.ndim;
	for (int32_t i = 0; i < n; i++)
		perm[i] = n - 1 - i;
	return permuted(a, perm);
}

/* mT: the last two axes swapped (a stack of matrices transposed). */
PyObject *array_mT(Array *a, void *unused)
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
PyObject *array_repr(Array *a)
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

#else

typedef int ubx_getset_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
