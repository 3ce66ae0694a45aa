/*
 * errors.c: errors across the boundary, both ways. Go hands C the
 * exception a Go function failed with (ubx_set_error), which C raises once
 * Go has returned (go_failed; go_object and go_status in ubx_c.h): a
 * Python exception that crossed Go is the same object. C hands Go the
 * exception a C call Go made failed with (take_error). The C functions Go
 * calls refuse to run without the GIL (gil_held).
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* gil_held reports whether the calling thread holds the GIL, for the C
 * functions Go calls that touch Python objects: each is refused without it
 * (RATIONALE.md, "No Python call without a thread state"), with a message
 * on standard error, since no exception can be set without a thread state.
 * A build with UBX_ABORT_WITHOUT_GIL (the sanitizer build) aborts instead,
 * so that a test that reaches one fails loudly. */
int gil_held(const char *fn)
{
	if (PyGILState_Check())
		return 1;
#ifdef UBX_ABORT_WITHOUT_GIL
	fprintf(stderr, "pyext: %s called without the GIL\n", fn);
	abort();
#else
	fprintf(stderr, "pyext: %s called without the GIL (refused)\n", fn);
	return 0;
#endif
}

/* The exception a Go function failed with (ubx_set_error), raised by C once
 * Go has returned: a new reference, or NULL. Guarded by the GIL: Go sets it
 * with the GIL held, and C takes it before anything else runs. */
static PyObject *go_error;

void ubx_set_error(void *exc)
{
	if (!gil_held("ubx_set_error"))
		return; /* the exception is leaked: it cannot be dropped without the GIL */
	Py_XSETREF(go_error, exc);
}

/* take_error moves the pending exception to *exc (for Go, which calls C
 * and gets the failure as an error: pybridge's ErrorOf). */
void take_error(void **exc)
{
	PyObject *t, *v, *tb;
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	if (v != NULL && tb != NULL)
		PyException_SetTraceback(v, tb);
	Py_XDECREF(t);
	Py_XDECREF(tb);
	*exc = v;
}

/* go_failed raises what Go failed with; NULL, to return. */
void *go_failed(void)
{
	PyObject *e = go_error;
	go_error = NULL;
	if (e != NULL) {
		PyObject *t = (PyObject *)Py_TYPE(e);
		PyObject *tb = PyException_GetTraceback(e);
		Py_INCREF(t);
		PyErr_Restore(t, e, tb);
	} else if (!PyErr_Occurred()) {
		PyErr_SetString(PyExc_SystemError, "a Go function failed without setting an exception");
	}
	return NULL;
}

/* chain_cause makes ev, an exception fetched before the one now pending
 * was raised, the pending one's __cause__ (and __context__), as `raise ...
 * from ev` does. It steals ev (NULL: nothing to chain). */
void chain_cause(PyObject *ev)
{
	if (ev == NULL)
		return;
	PyObject *t2, *v2, *tb2;
	PyErr_Fetch(&t2, &v2, &tb2);
	PyErr_NormalizeException(&t2, &v2, &tb2);
	if (v2 != NULL) {
		PyException_SetContext(v2, Py_NewRef(ev));
		PyException_SetCause(v2, ev); /* steals ev */
	} else {
		Py_DECREF(ev);
	}
	PyErr_Restore(t2, v2, tb2);
}

/* fetch_pending takes the pending exception, normalized and with its
 * traceback, for chain_cause. */
PyObject *fetch_pending(void)
{
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	PyErr_NormalizeException(&et, &ev, &tb);
	if (tb != NULL && ev != NULL)
		PyException_SetTraceback(ev, tb);
	Py_XDECREF(et);
	Py_XDECREF(tb);
	return ev;
}

#else

#include "ubx.h"

/* Without Python: what Go calls during a call exists, and is never called. */
void ubx_set_error(void *exc) {}

#endif /* UBX_MODULE */
