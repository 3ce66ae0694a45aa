/*
 * arraytype.c: the Array type as Python sees it, assembled from the files
 * of its concerns: its methods (__dlpack__, __dlpack_device__: dlpack.c;
 * __array__ and __reduce__: numpy.c), its attributes (getset.c; the SYCL ones: suai.c),
 * the buffer protocol (buffer.c), its lifetime (array.c), and the DLPack C
 * exchange table (exchange.c), which the type carries as attributes.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

static PyMethodDef array_methods[] = {
	{"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack, METH_FASTCALL | METH_KEYWORDS,
	 "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
	 "Export the array as a DLPack capsule (the array API's __dlpack__)."},
	{"__dlpack_device__", (PyCFunction)array_dlpack_device, METH_NOARGS,
	 "__dlpack_device__($self, /)\n--\n\n(DLPack device type, device id) of the array."},
	{"__array__", (PyCFunction)(void (*)(void))array_array, METH_FASTCALL | METH_KEYWORDS,
	 "__array__($self, /, dtype=None, copy=None)\n--\n\n"
	 "The array as a NumPy array: a view of memory the host reads, else (device USM, another dtype) a copy.\n"
	 "NumPy's copy keyword: False never copies (ValueError where a copy is needed), True always does."},
	{"__reduce__", (PyCFunction)array_reduce, METH_NOARGS,
	 "__reduce__($self, /)\n--\n\nPickle an array of host memory as the NumPy array of its elements (a copy); USM and read-only arrays refuse."},
	{NULL},
};

static PyGetSetDef array_getset[] = {
	{"__sycl_usm_array_interface__", (getter)array_suai, NULL,
	 "The SUAI dict, made after waiting on the array's queue (AttributeError for host memory).", NULL},
	{"shape", (getter)array_shape, NULL, "Extents, a tuple of ints.", NULL},
	{"ndim", (getter)array_ndim, NULL, "Number of dimensions.", NULL},
	{"size", (getter)array_size, NULL, "Number of elements.", NULL},
	{"itemsize", (getter)array_itemsize, NULL, "Bytes per element.", NULL},
	{"nbytes", (getter)array_nbytes, NULL, "Bytes of all elements (size * itemsize).", NULL},
	{"dtype", (getter)array_typestr, NULL,
	 "The element type: a numpy.dtype where NumPy is loaded and knows it, else its typestr ('|f4') where "
	 "SUAI has one, else the DLPack dtype's name ('bfloat16').",
	 NULL},
	{"strides", (getter)array_strides, NULL,
	 "Strides in elements, not bytes, as dpctl's usm_ndarray gives them: always a tuple, C-contiguous arrays "
	 "included.",
	 NULL},
	{"__usm_ndarray__", (getter)array_usm_ndarray, NULL,
	 "The array as a dpnp.tensor.usm_ndarray over the same memory (USM only), which dpnp.asarray and "
	 "dpnp.tensor.asarray take without a copy.",
	 NULL},
	{"sycl_queue", (getter)array_sycl_queue, NULL,
	 "The dpctl.SyclQueue of a USM array (the one its __sycl_usm_array_interface__ names); AttributeError for "
	 "host memory.",
	 NULL},
	{"T", (getter)array_T, NULL, "The array with its axes reversed (a view: no copy).", NULL},
	{"mT", (getter)array_mT, NULL, "The array with its last two axes swapped (a view: no copy).", NULL},
	{"usm_type", (getter)array_usm_type, NULL,
	 "'device', 'shared' or 'host' for USM; None for host memory that is not USM.", NULL},
	{"device", (getter)array_device, NULL, "(DLPack device type, device id).", NULL},
	{"data", (getter)array_data, NULL, "Address of element 0.", NULL},
	{"offset", (getter)array_offset, NULL,
	 "Elements from the data pointer of the array's DLPack export to element 0: 0, except with negative strides, "
	 "where that pointer is the lowest byte the array touches (__sycl_usm_array_interface__ has an offset of its "
	 "own, from its own data pointer).",
	 NULL},
	{"readonly", (getter)array_readonly, NULL, "Whether the memory must not be written.", NULL},
	{NULL},
};

static PyMemberDef array_members[] = {
	{"__weaklistoffset__", T_PYSSIZET, offsetof(Array, weakrefs), READONLY},
	{NULL},
};

static PyType_Slot array_slots[] = {
	{Py_tp_doc, "A zero-copy view of host memory or SYCL USM, made by this module.\n\n"
		    "It is a DLPack producer (__dlpack__, __dlpack_device__, and the DLPack 1.3 C\n"
		    "exchange API __dlpack_c_exchange_api__), exposes the buffer protocol for\n"
		    "memory the host reads and __sycl_usm_array_interface__ for USM, so\n"
		    "numpy, dpnp, dpctl, jax, tvm-ffi and mpi4py take it without a copy."},
	{Py_tp_dealloc, array_dealloc},
	{Py_tp_traverse, array_traverse},
	{Py_tp_clear, array_clear},
	{Py_tp_repr, array_repr},
	{Py_tp_methods, array_methods},
	{Py_tp_getset, array_getset},
	{Py_tp_members, array_members},
	{Py_sq_length, array_len},
	{Py_bf_getbuffer, array_getbuffer},
	{Py_bf_releasebuffer, array_releasebuffer},
	{0, NULL},
};

PyTypeObject *array_type_new(PyObject *m)
{
	static PyType_Spec spec = {
		.basicsize = sizeof(Array),
		.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
		.slots = array_slots,
	};
	spec.name = def->array_name;
	PyTypeObject *tp = (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, NULL);
	if (tp == NULL)
		return NULL;
	Py_XSETREF(g_array_type, (PyTypeObject *)Py_NewRef(tp));
	PyObject *cap = PyCapsule_New(&exchange_api, "dlpack_exchange_api", NULL);
	PyObject *addr = PyLong_FromVoidPtr(&exchange_api);
	if (cap == NULL || addr == NULL || PyObject_SetAttr((PyObject *)tp, s_exchange, cap) < 0 ||
	    PyObject_SetAttr((PyObject *)tp, s_exchange_int, addr) < 0) {
		Py_XDECREF(cap);
		Py_XDECREF(addr);
		Py_DECREF(tp);
		return NULL;
	}
	Py_DECREF(cap);
	Py_DECREF(addr);
	/* Immutable from now on, as numpy.ndarray and dpnp's usm_ndarray are:
	 * the protocols every consumer reads (__dlpack__, the SUAI, the
	 * exchange table) are the module's, not an assignment's. Set here,
	 * after the exchange table's attributes, which the spec cannot carry. */
	tp->tp_flags |= Py_TPFLAGS_IMMUTABLETYPE;
	PyType_Modified(tp);
	return tp;
}

#else

typedef int ubx_arraytype_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
