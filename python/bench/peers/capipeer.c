/* The CPython C-API peer of benchmod.f (CMakeLists.txt): f(x) reads x
 * through the buffer protocol, checks that it is a 1-D C-contiguous float32
 * array, and releases it; nothing(), a C function that does nothing, is the
 * cost of any call of a C function (python/bench/bench_floor.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* is_float32 reports whether a buffer format is a native float32. */
static int is_float32(const char *format)
{
	if (format == NULL)
		return 0;
	if (*format == '@' || *format == '=' || *format == '<')
		format++;
	return strcmp(format, "f") == 0;
}

static PyObject *f(PyObject *mod, PyObject *x)
{
	Py_buffer b;
	if (PyObject_GetBuffer(x, &b, PyBUF_RECORDS_RO) < 0)
		return NULL;
	const char *wrong = NULL;
	if (!is_float32(b.format) || b.itemsize != 4)
		wrong = "must be an array of float32";
	else if (b.ndim != 1)
		wrong = "must have 1 dimension";
	else if (!PyBuffer_IsContiguous(&b, 'C'))
		wrong = "must be C-contiguous";
	PyBuffer_Release(&b);
	if (wrong != NULL) {
		PyErr_Format(PyExc_ValueError, "f() argument 'x' %s", wrong);
		return NULL;
	}
	Py_RETURN_NONE;
}

static PyObject *nothing(PyObject *mod, PyObject *unused)
{
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{"f", f, METH_O, "Take a 1-D C-contiguous float32 array (buffer protocol) and do nothing."},
	{"nothing", nothing, METH_NOARGS, "Do nothing (the cost of a call of a C function)."},
	{NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "capipeer", "The C-API peer of benchmod.", -1, methods};

PyMODINIT_FUNC PyInit_capipeer(void)
{
	return PyModule_Create(&module);
}
