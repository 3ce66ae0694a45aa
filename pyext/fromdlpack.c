/*
 * fromdlpack.c: usmbridge's converters, which a module adds under names of
 * its choice (pyext.Module.FromDLPack, AsArray): from_dlpack(x, /, *,
 * device=None, copy=None), which imports a host producer's tensor here, as
 * NumPy's from_dlpack does, and leaves everything else to Go's FromDLPack;
 * and asarray(obj, /), whose __sycl_usm_array_interface__ C reads once and
 * Go parses and binds with dpctl's rules.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

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
PyObject *call_from_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
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
PyObject *call_asarray(PyObject *self, PyObject *obj)
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

#else

typedef int ubx_fromdlpack_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
