/*
 * exchange.c: the DLPack C exchange API (DLPack 1.3, producer side): the
 * table the Array type carries (__dlpack_c_exchange_api__, and the 1.2 int
 * form), whose functions hand tensors over without a Python call and
 * without synchronising. Exports copy the view, as __dlpack__'s plain
 * exports do (export.c); an import of a host tensor is C's (array.c), any
 * other Go's; the work stream and the allocator are Go's (pyext's
 * exchange functions).
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* xch_array checks that obj is one of this module's Arrays whose view may
 * be exported without a stream, waiting on its queue where the view says
 * so: 0, or -1 with an exception. */
static int xch_array(void *obj, Array **out)
{
	if (forked())
		return -1;
	if (obj == NULL) {
		PyErr_SetString(PyExc_ValueError, "DLPack exchange API: py_object is NULL");
		return -1;
	}
	if (!is_array(obj)) {
		PyErr_Format(PyExc_TypeError, "DLPack exchange API: expected a %.200s, got %.200s",
			     g_array_type != NULL ? g_array_type->tp_name : "Array", Py_TYPE((PyObject *)obj)->tp_name);
		return -1;
	}
	Array *a = obj;
	if (a->v.go_export)
		return go_status(ubx_go_exchange_refuse(&a->v, a)); /* raises Go's refusal */
	if (a->v.handle != 0 && go_status(ubx_go_exchange_wait(a->v.handle)) < 0)
		return -1;
	*out = a;
	return 0;
}

/* xch_writable is xch_array for the table's exports, which refuse a
 * read-only array: the managed tensor would carry READ_ONLY, but the
 * table's consumers drop it (tvm-ffi 0.1 makes every tensor it takes
 * writable), and a bare DLTensor has no flags at all. A consumer then
 * falls back to __dlpack__, whose versioned capsule carries the flag to a
 * consumer that reads it (RATIONALE.md, "Read-only survives every format,
 * or the format is refused"). */
static int xch_writable(void *obj, void *out, const char *fname, Array **a)
{
	if (out == NULL) {
		PyErr_Format(PyExc_ValueError, "%s: out is NULL", fname);
		return -1;
	}
	if (xch_array(obj, a) < 0)
		return -1;
	if ((*a)->v.flags & UB_DL_FLAG_READ_ONLY) {
		PyErr_SetString(PyExc_BufferError,
				"a read-only array is not handed out through the DLPack C exchange API, whose consumers "
				"drop the READ_ONLY flag; ask __dlpack__(max_version=(1, 0)) instead");
		return -1;
	}
	return 0;
}

static int xch_from_py(void *obj, ub_dl_managed_versioned **out)
{
	Array *a;
	if (xch_writable(obj, out, "managed_tensor_from_py_object_no_sync", &a) < 0)
		return -1;
	block *b = export_block(a, 1, def->minor_newer);
	if (b == NULL)
		return -1;
	export_live(b, a);
	exchange_exports++;
	*out = &b->m.versioned;
	return 0;
}

static int xch_dltensor_from_py(void *obj, ub_dl_tensor *out)
{
	Array *a;
	if (xch_writable(obj, out, "dltensor_from_py_object_no_sync", &a) < 0)
		return -1;
	*out = a->v.t; /* shape and strides live as long as the array */
	return 0;
}

static int xch_to_py(ub_dl_managed_versioned *tensor, void **out_py_object)
{
	if (tensor == NULL || out_py_object == NULL || forked()) {
		if (tensor != NULL)
			call_deleter(tensor, 1); /* it was given to us */
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "managed_tensor_to_py_object_no_sync: tensor or out is NULL");
		return -1;
	}
	Array *a;
	int r0 = array_over(tensor, 1, NULL, &a);
	if (r0 < 0) {
		call_deleter(tensor, 1);
		return -1;
	}
	if (r0 > 0) {
		take_tensor(a, tensor, 1);
		*out_py_object = a;
		return 0;
	}
	ubx_result *res = PyMem_Calloc(1, sizeof(ubx_result));
	if (res == NULL) {
		call_deleter(tensor, 1);
		PyErr_NoMemory();
		return -1;
	}
	PyObject *r = NULL;
	if (go_status(ubx_go_import_managed(tensor, res)) == 0) /* Go deletes it on error */
		r = new_array_from_result(res);
	PyMem_Free(res);
	if (r == NULL)
		return -1;
	*out_py_object = r;
	return 0;
}

static int xch_current_work_stream(int32_t device_type, int32_t device_id, void **out)
{
	PyGILState_STATE gs = PyGILState_Ensure();
	int r = forked() ? -1 : go_status(ubx_go_work_stream(device_type, device_id, out));
	PyGILState_Release(gs);
	return r;
}

static int xch_allocator(ub_dl_tensor *prototype, ub_dl_managed_versioned **out, void *error_ctx,
			 void (*SetError)(void *error_ctx, const char *kind, const char *message))
{
	if (ubx_fork_flag || !Py_IsInitialized()) {
		if (SetError != NULL)
			SetError(error_ctx, "RuntimeError", ubx_fork_flag ? fork_message : "the Python interpreter is not running");
		return -1;
	}
	char *kind = NULL, *msg = NULL;
	PyGILState_STATE gs = PyGILState_Ensure();
	int r = ubx_go_alloc(prototype, out, &kind, &msg);
	PyGILState_Release(gs);
	if (r != 0 && SetError != NULL)
		SetError(error_ctx, kind != NULL ? kind : "RuntimeError", msg != NULL ? msg : "allocation failed");
	free(kind);
	free(msg);
	return r == 0 ? 0 : -1;
}

/* The version of dlpack.h this table follows; its tensors carry the
 * module's own (def->major, minor). */
ub_dl_exchange_api exchange_api = {
	.header = {.version = {.major = 1, .minor = 3}, .prev_api = NULL},
	.managed_tensor_allocator = xch_allocator,
	.managed_tensor_from_py_object_no_sync = xch_from_py,
	.managed_tensor_to_py_object_no_sync = xch_to_py,
	.dltensor_from_py_object_no_sync = xch_dltensor_from_py,
	.current_work_stream = xch_current_work_stream,
};

#else

typedef int ubx_exchange_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
