/*
 * read_suai.c: an object's __sycl_usm_array_interface__, read once for Go:
 * the attribute's value and, for an exact dict, its value at each of the
 * keys Go reads (pybridge.SUAIKeys), as dpctl's dict.get looks them up.
 * Every rule about the values is Go's (pybridge.SUAIDict): C only spares
 * Go the lookups (RATIONALE.md, "An argument's SUAI: C looks the keys up,
 * Go reads the values"). An array argument's read is kept by its hold
 * (hold.c); asarray's by fromdlpack.c.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* suai_clear drops what read_suai took. */
void suai_clear(ubx_suai *s)
{
	if (s->looked)
		for (int i = 0; i < UBX_SUAI_KEYS; i++)
			Py_XDECREF((PyObject *)s->vals[i]);
	s->looked = 0;
	PyObject *d = s->dict;
	s->dict = NULL;
	Py_XDECREF(d);
}

/* read_suai reads o.__sycl_usm_array_interface__ into *out for Go: the
 * value (a new reference in out->dict), and when it is exactly a dict, its
 * value at each of the keys Go reads, as dpctl's dict.get looks them up
 * (new references too: Go's reading may run Python code, a value's
 * __index__, that empties the dict). 1; 0 when o has no such attribute
 * (AttributeError, cleared); -1 with what the getter or a key's lookup
 * raised, as itself, as Go's reader raises it. Rules about the values are
 * Go's (pybridge.SUAIDict): C only spares Go the lookups. suai_clear
 * releases *out after 1. */
int read_suai(PyObject *o, ubx_suai *out)
{
	PyObject *d = PyObject_GetAttr(o, s_suai);
	if (d == NULL) {
		if (!PyErr_ExceptionMatches(PyExc_AttributeError))
			return -1;
		PyErr_Clear();
		return 0;
	}
	out->dict = d;
	out->looked = 0;
	out->pad = 0;
	if (!PyDict_CheckExact(d))
		return 1;
	out->looked = 1;
	for (int i = 0; i < UBX_SUAI_KEYS; i++)
		out->vals[i] = NULL;
	for (int i = 0; i < UBX_SUAI_KEYS; i++) {
		/* A key's __eq__ may run Python code that changes the dict: each
		 * value is taken as it is found. */
		PyObject *v = PyDict_GetItemWithError(d, s_suai_keys[i]);
		if (v == NULL && PyErr_Occurred()) {
			suai_clear(out);
			return -1;
		}
		out->vals[i] = Py_XNewRef(v);
	}
	return 1;
}

#else

typedef int ubx_read_suai_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
