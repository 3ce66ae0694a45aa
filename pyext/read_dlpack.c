/*
 * read_dlpack.c: array arguments that are DLPack capsules or host DLPack
 * producers: a fresh capsule's kDLCPU tensor is imported in C (dlimport.c)
 * and held for the call; a producer whose type says it is on the host is
 * asked for its capsule as the array API's from_dlpack asks (call_dlpack,
 * which from_dlpack uses too). Anything else is Go's.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* take_capsule imports a fresh DLPack capsule's kDLCPU tensor in C into
 * val and h (renaming the capsule used_*): 1 when done, 0 when Go must
 * decide (anything else about the capsule), -1 with an exception. */
int take_capsule(PyObject *cap, hold *h, ubx_value *val)
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

/* host_producer reports whether x looks like a host DLPack producer that C
 * can take alone: no DLPack C exchange table and no SUAI on its type (Go
 * takes those), a __dlpack__, and __dlpack_device__() == (kDLCPU, 0), which
 * is not asked of a type whose arrays need no stream (NumPy's: the tensor
 * says the device, and take_capsule leaves any but kDLCPU to Go). 1, 0, or
 * -1 with an exception. */
int host_producer(PyObject *x)
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
PyObject *call_dlpack(PyObject *x)
{
	PyObject *argv[2] = {x, max_version_value};
	PyObject *cap = PyObject_VectorcallMethod(s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames_max_version);
	if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
		PyErr_Clear();
		cap = PyObject_VectorcallMethod(s_dlpack, argv, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
	}
	return cap;
}

#else

typedef int ubx_read_dlpack_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
