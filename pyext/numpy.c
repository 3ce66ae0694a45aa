/*
 * numpy.c: __array__, NumPy's protocol, for the memory the buffer protocol
 * cannot give (device USM) and for NumPy's copy keyword: numpy.from_dlpack
 * of the array on the host, then astype for a dtype. NumPy is loaded (it
 * called us); it is not imported here. NumPy arrays passed to Go functions
 * are read by read_numpy.c.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* __array__(dtype=None, copy=None): NumPy's protocol, for the memory the
 * buffer protocol cannot give (device USM) and for NumPy's copy keyword:
 * numpy.from_dlpack of the array on the host (a copy only where the host
 * cannot read the memory), then astype for a dtype. copy=False where a copy
 * is needed is a ValueError, as NumPy's protocol asks. NumPy is loaded
 * (it called us); it is not imported here. */
PyObject *array_array(Array *a, PyObject *const *args, size_t nargsf, PyObject *kwnames)
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

/* __reduce__: an Array of host memory pickles (and copies, with
 * copy.copy) as the NumPy array of its elements, numpy.array(a), a copy.
 * Unpickled, it is that NumPy array, which every array parameter takes: so
 * a class whose __getstate__ returns its host data ([]float32) pickles.
 * What a pickle cannot carry is refused, as dpctl's memory objects refuse
 * pickling: USM (a device, a queue, a context of this process) and a
 * read-only array (an unpickled NumPy array is writable). */
PyObject *array_reduce(Array *a, PyObject *unused)
{
	if (forked())
		return NULL;
	if (a->v.t.device.device_type != UB_DL_CPU || a->v.usm_kind != 0 || (a->v.flags & UB_DL_FLAG_READ_ONLY)) {
		PyErr_Format(PyExc_TypeError, "cannot pickle '%s' object: %s", Py_TYPE(a)->tp_name,
			     (a->v.flags & UB_DL_FLAG_READ_ONLY) && a->v.t.device.device_type == UB_DL_CPU && a->v.usm_kind == 0
				     ? "it is read-only, which a pickle cannot say"
				     : "its memory is USM, which a pickle cannot carry (copy it to the host first)");
		return NULL;
	}
	PyObject *np = PyImport_ImportModule("numpy");
	if (np == NULL)
		return NULL;
	PyObject *arr = PyObject_CallMethod(np, "array", "O", (PyObject *)a);
	Py_DECREF(np);
	if (arr == NULL)
		return NULL;
	PyObject *r = PyObject_CallMethod(arr, "__reduce__", NULL);
	Py_DECREF(arr);
	return r;
}

#else

typedef int ubx_numpy_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
