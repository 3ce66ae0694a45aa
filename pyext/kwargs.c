/*
 * kwargs.c: the keyword arguments of the module's own methods
 * (__dlpack__, __array__, from_dlpack), matched by identity first, as
 * CPython's own argument clinic does, then by value. A Go function's
 * arguments are bound by call.c.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* parse_kw matches vectorcall keywords against names (n of them) into out. */
int parse_kw(const char *fname, PyObject *kwnames, PyObject *const *values, PyObject **names, PyObject **out,
	     int n)
{
	Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
	for (Py_ssize_t i = 0; i < nk; i++) {
		PyObject *k = PyTuple_GET_ITEM(kwnames, i);
		int j;
		for (j = 0; j < n && k != names[j]; j++)
			;
		if (j == n) {
			for (j = 0; j < n; j++) {
				int c = PyUnicode_Compare(k, names[j]);
				if (c == 0)
					break;
				if (c == -1 && PyErr_Occurred())
					return -1;
			}
		}
		if (j == n) {
			PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, k);
			return -1;
		}
		out[j] = values[i];
	}
	return 0;
}

#else

typedef int ubx_kwargs_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
