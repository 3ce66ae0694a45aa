/*
 * dlpack.c: __dlpack__ and __dlpack_device__. The plain exports are C's:
 * no stream (or -1, the array API's "do not synchronize", where the view
 * allows it), the array's own device, no copy, a max_version the table Go
 * filled answers; they copy the view (export.c). Anything else (a stream
 * queue, a copy, another device, every refusal) is Go's, with Go's rules
 * and messages (pyext's ubx_go_dlpack).
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* no_sync_stream: stream is exactly the int -1, the array API's "do not
 * synchronize". Anything else goes to Go. */
static int no_sync_stream(PyObject *stream)
{
	if (!PyLong_CheckExact(stream))
		return 0;
	int overflow;
	long v = PyLong_AsLongAndOverflow(stream, &overflow);
	return overflow == 0 && v == -1 && !PyErr_Occurred();
}

/* minor_for answers max_version=(major, minor) as Go's NegotiateVersion
 * does (the table Go filled); 0 when Go must. */
static int minor_for(long long major, long long minor, uint32_t *out)
{
	if (major < 1 || minor < 0)
		return 0;
	if (major > (long long)def->major) {
		*out = def->minor_newer;
		return 1;
	}
	if (major == (long long)def->major && minor < UBX_MINOR_SLOTS) {
		*out = def->minor_for[minor];
		return 1;
	}
	return 0;
}

PyObject *array_dlpack(Array *a, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
	if (forked())
		return NULL;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	if (nargs != 0) {
		PyErr_Format(PyExc_TypeError, "__dlpack__() takes no positional arguments (%zd given)", nargs);
		return NULL;
	}
	PyObject *names[4] = {s_stream, s_max_version, s_dl_device, s_copy};
	PyObject *kw[4] = {NULL, NULL, NULL, NULL};
	if (kwnames != NULL && parse_kw("__dlpack__", kwnames, args, names, kw, 4) < 0)
		return NULL;
	PyObject *stream = kw[0], *maxv = kw[1], *dldev = kw[2], *copy = kw[3];
	/* The plain exports are the view's (Go made it, or C's import, with
	 * Export's rules); any other request is Go's. */
	int plain = !a->v.go_export;
	if (stream == NULL || stream == Py_None)
		plain = plain && !a->v.wait;
	else
		plain = plain && a->v.no_sync && no_sync_stream(stream);
	if (copy != NULL && copy != Py_None && copy != Py_False)
		plain = 0;
	long long x, y;
	if (plain && dldev != NULL && dldev != Py_None)
		plain = pair(dldev, &x, &y) && x == a->v.t.device.device_type && y == a->v.t.device.device_id;
	int versioned = 0;
	uint32_t minor = 0;
	if (plain && maxv != NULL && maxv != Py_None) {
		plain = pair(maxv, &x, &y) && x >= 0 && y >= 0;
		if (plain && x >= 1) {
			versioned = 1;
			plain = minor_for(x, y, &minor);
		}
	}
	if (plain && !versioned && (a->v.flags & UB_DL_FLAG_READ_ONLY))
		plain = 0; /* Go refuses: a legacy tensor cannot say read-only */
	if (plain)
		return export_view(a, versioned, minor);
	return go_object(ubx_go_dlpack(&a->v, a, stream, maxv, dldev, copy));
}

PyObject *array_dlpack_device(Array *a, PyObject *unused)
{
	if (forked())
		return NULL;
	if (a->dev_tuple == NULL) {
		a->dev_tuple = Py_BuildValue("(ii)", (int)a->v.t.device.device_type, (int)a->v.t.device.device_id);
		if (a->dev_tuple == NULL)
			return NULL;
	}
	Py_INCREF(a->dev_tuple);
	return a->dev_tuple;
}

#else

typedef int ubx_dlpack_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
