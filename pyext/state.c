/*
 * state.c: the C half's process-wide state, which its files share: the
 * module as Go defined it, the latest Array type and fork error, the
 * interned names, and the counts _c_stats reports. One per process: a
 * sub-interpreter is refused (module.c), so there is one interpreter, and
 * the GIL guards all of it. Module init (module.c) fills it.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

ubx_module_def *def;

/* The latest instance's Array type and fork error (strong references, kept
 * for the life of the process), for the paths that have no module at hand:
 * the exchange table, the fork check. A module made again (after it left
 * sys.modules) replaces them, and Arrays of the old type keep theirs. */
PyTypeObject *g_array_type;
PyObject *g_fork_error;

PyObject *s_dlpack, *s_dlpack_device, *s_suai, *s_exchange, *s_exchange_int, *s_max_version;
PyObject *s_suai_keys[UBX_SUAI_KEYS];
PyObject *s_stream, *s_dl_device, *s_copy, *s_device, *s_syclobj, *s_dtype, *s_numpy, *s_dpnp_tensor,
	*s_dpctl_memory, *s_W, *s_array_open;
PyObject *kwnames_max_version, *max_version_value;

int64_t live_exports, stray_deletes, exchange_exports, c_imports, live_c_imports, numpy_reads;

static int intern(PyObject **p, const char *s)
{
	if (*p == NULL)
		*p = PyUnicode_InternFromString(s);
	return *p == NULL ? -1 : 0;
}

int intern_names(void)
{
	if (intern(&s_dlpack, "__dlpack__") < 0 || intern(&s_dlpack_device, "__dlpack_device__") < 0 ||
	    intern(&s_suai, "__sycl_usm_array_interface__") < 0 || intern(&s_exchange, "__dlpack_c_exchange_api__") < 0 ||
	    intern(&s_exchange_int, "__c_dlpack_exchange_api__") < 0 || intern(&s_max_version, "max_version") < 0 ||
	    intern(&s_stream, "stream") < 0 || intern(&s_dl_device, "dl_device") < 0 || intern(&s_copy, "copy") < 0 ||
	    intern(&s_device, "device") < 0 || intern(&s_syclobj, "syclobj") < 0 || intern(&s_dtype, "dtype") < 0 ||
	    intern(&s_numpy, "numpy") < 0 || intern(&s_dpnp_tensor, "dpnp.tensor") < 0 ||
	    intern(&s_dpctl_memory, "dpctl.memory") < 0 || intern(&s_W, "W") < 0 || intern(&s_array_open, "array(") < 0)
		return -1;
	for (int i = 0; i < UBX_SUAI_KEYS; i++)
		if (intern(&s_suai_keys[i], ubx_suai_keys[i]) < 0)
			return -1;
	if (kwnames_max_version == NULL) {
		kwnames_max_version = PyTuple_Pack(1, s_max_version);
		max_version_value = Py_BuildValue("(II)", def->max_major, def->max_minor);
		if (kwnames_max_version == NULL || max_version_value == NULL)
			return -1;
	}
	return 0;
}

#else

typedef int ubx_state_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
