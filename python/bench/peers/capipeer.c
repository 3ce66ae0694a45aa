/* The CPython C-API peer of benchmod.f and of examples/saxpy's saxpy
 * (CMakeLists.txt): f(x) reads x through the buffer protocol, checks that it
 * is a 1-D C-contiguous float32 array, and releases it; saxpy(a, x, y) reads
 * x and y (y writable) the same way and computes y += a*x; nothing(), a C
 * function that does nothing, is the cost of any call of a C function
 * (python/bench/bench_floor.py). f and saxpy are the least a C extension
 * spends on such arguments: the floors of the performance table
 * (python/bench/bench.py). */
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

/* wrong_array says what keeps a buffer from being a 1-D C-contiguous
 * float32 array, or NULL when nothing does. */
static const char *wrong_array(Py_buffer *b)
{
	if (!is_float32(b->format) || b->itemsize != 4)
		return "must be an array of float32";
	if (b->ndim != 1)
		return "must have 1 dimension";
	if (!PyBuffer_IsContiguous(b, 'C'))
		return "must be C-contiguous";
	return NULL;
}

static PyObject *f(PyObject *mod, PyObject *x)
{
	Py_buffer b;
	if (PyObject_GetBuffer(x, &b, PyBUF_RECORDS_RO) < 0)
		return NULL;
	const char *wrong = wrong_array(&b);
	PyBuffer_Release(&b);
	if (wrong != NULL) {
		PyErr_Format(PyExc_ValueError, "f() argument 'x' %s", wrong);
		return NULL;
	}
	Py_RETURN_NONE;
}

/* saxpy(a, x, y): y += a*x in place, x read-only and y writable, both 1-D
 * C-contiguous float32 arrays of one length. */
static PyObject *saxpy(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	if (nargs != 3) {
		PyErr_Format(PyExc_TypeError, "saxpy() takes 3 arguments (%zd given)", nargs);
		return NULL;
	}
	double a = PyFloat_AsDouble(args[0]);
	if (a == -1.0 && PyErr_Occurred())
		return NULL;
	Py_buffer x, y;
	if (PyObject_GetBuffer(args[1], &x, PyBUF_RECORDS_RO) < 0)
		return NULL;
	if (PyObject_GetBuffer(args[2], &y, PyBUF_RECORDS) < 0) {
		PyBuffer_Release(&x);
		return NULL;
	}
	const char *arg = "x", *wrong = wrong_array(&x);
	if (wrong == NULL) {
		arg = "y";
		wrong = wrong_array(&y);
	}
	if (wrong == NULL && x.shape[0] != y.shape[0]) {
		PyErr_Format(PyExc_ValueError, "x and y differ in length: %zd and %zd", x.shape[0], y.shape[0]);
		PyBuffer_Release(&x);
		PyBuffer_Release(&y);
		return NULL;
	}
	if (wrong == NULL) {
		const float *xs = x.buf;
		float *ys = y.buf;
		float af = (float)a;
		for (Py_ssize_t i = 0; i < y.shape[0]; i++)
			ys[i] += af * xs[i];
	}
	PyBuffer_Release(&x);
	PyBuffer_Release(&y);
	if (wrong != NULL) {
		PyErr_Format(PyExc_ValueError, "saxpy() argument '%s' %s", arg, wrong);
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
	{"saxpy", (PyCFunction)(void (*)(void))saxpy, METH_FASTCALL,
	 "y += a*x, in place (x and y: 1-D C-contiguous float32 arrays of one length, buffer protocol)."},
	{"nothing", nothing, METH_NOARGS, "Do nothing (the cost of a call of a C function)."},
	{NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "capipeer", "The C-API peer of benchmod and saxpy.", -1, methods};

PyMODINIT_FUNC PyInit_capipeer(void)
{
	return PyModule_Create(&module);
}
