/*
 * suai.c: the Array as dpctl and dpnp read it: __sycl_usm_array_interface__
 * (Go's dict, made once and copied for each caller), __usm_ndarray__ (a
 * dpnp.tensor.usm_ndarray over the same memory, made once), and
 * sycl_queue (the dpctl.SyclQueue the SUAI names). Host memory has none of
 * them (AttributeError), as dpctl's and dpnp's arrays only live on SYCL
 * devices.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

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

/* sycl_queue: the dpctl.SyclQueue of a USM array, as dpctl's and dpnp's
 * arrays have one (AttributeError for host memory): with dpnp loaded, the
 * queue of the array's __usm_ndarray__, the very object, since dpnp.asarray
 * keeps an object's memory only when the queue it takes from the object is
 * the one of the usm_ndarray the object gives; else the one its SUAI
 * names. */
PyObject *array_sycl_queue(Array *a, void *unused)
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

PyObject *array_usm_ndarray(Array *a, void *unused)
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
PyObject *array_suai(Array *a, void *unused)
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

#else

typedef int ubx_suai_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
