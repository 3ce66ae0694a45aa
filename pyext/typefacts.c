/*
 * typefacts.c: what an object's type defines, the facts the argument
 * readers ask before they read (which protocols its class, or a base,
 * defines), looked up along the MRO's dicts without calling anything, and
 * kept per type for as long as CPython's version tag of the type holds.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

static int mro_lookup(PyTypeObject *tp, PyObject *name, int *callable);

/* type_has reports whether obj's type (or a base) defines name, without
 * calling anything: 1, 0, or -1 with an exception. An instance's attribute
 * comes from its class's MRO whatever the metaclass (a metaclass's own
 * attributes are the class's, not the instance's): ctypes arrays and ABC
 * subclasses are looked up like any other type. */
static int type_has(PyTypeObject *tp, PyObject *name)
{
	int callable;
	return mro_lookup(tp, name, &callable);
}

/* type_attr reports whether type(obj).name exists, as a lookup on the type
 * finds it: the class's MRO, then its metaclass's (the DLPack exchange
 * table is looked up on Py_TYPE(obj), where a metaclass property answers).
 * 1, 0, or -1 with an exception. */
static int type_attr(PyTypeObject *tp, PyObject *name)
{
	int r = type_has(tp, name);
	if (r != 0 || Py_TYPE(tp) == &PyType_Type)
		return r;
	return type_has(Py_TYPE(tp), name);
}

/* type_method reports whether tp's class dict (or a base's) holds a
 * callable name (a function, a method descriptor), so that calling it as a
 * method does what Go's lookup would: 1, 0 (Go decides: missing, None, a
 * property), or -1 with an exception. */
static int type_method(PyTypeObject *tp, PyObject *name)
{
	int callable;
	int r = mro_lookup(tp, name, &callable);
	return r <= 0 ? r : callable;
}

/* mro_lookup finds name in the class dicts along tp's MRO, calling
 * nothing: 1 with *callable (the value is a function or a method
 * descriptor, not a class), 0 when no class defines it, -1 with an
 * exception. */
static int mro_lookup(PyTypeObject *tp, PyObject *name, int *callable)
{
	PyObject *mro = tp->tp_mro;
	if (mro == NULL || !PyTuple_Check(mro))
		return 0;
	Py_ssize_t n = PyTuple_GET_SIZE(mro);
	for (Py_ssize_t i = 0; i < n; i++) {
		PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
#if PY_VERSION_HEX >= 0x030C0000
		PyObject *d = PyType_GetDict(t);
#else
		PyObject *d = t->tp_dict;
		Py_XINCREF(d);
#endif
		if (d == NULL)
			continue;
		PyObject *v = PyDict_GetItemWithError(d, name);
		*callable = v != NULL && PyCallable_Check(v) && !PyType_Check(v);
		Py_DECREF(d);
		if (v != NULL)
			return 1;
		if (PyErr_Occurred())
			return -1;
	}
	return 0;
}

/* The facts the argument readers ask of an object's type: which protocols
 * its class (or a base) defines. Looking them up walks the MRO's dicts,
 * five names at two or more dicts each; a type's facts are kept in a small
 * table for as long as CPython's version tag of the type holds. CPython
 * gives a type a new tag whenever it or a base changes (PyType_Modified:
 * an attribute set or deleted, __bases__ assigned) and never reuses one, so
 * a type that gains __sycl_usm_array_interface__ after a call is looked up
 * again (test_host_import.py). Types without a valid tag, and types whose
 * metaclass is not type (a change to the metaclass leaves the class's tag
 * as it is, and the exchange table is looked up there too), are looked up
 * each time. The facts are ubx_c.h's FACT_*. */

typedef struct {
	PyTypeObject *tp;
	unsigned int tag;
	unsigned int facts;
} type_facts_entry;

#define TYPE_FACTS_SLOTS 16

static type_facts_entry type_facts_table[TYPE_FACTS_SLOTS]; /* guarded by the GIL */

/* numpy.ndarray itself (not a subclass, which may define its own
 * __dlpack_device__): a static type of that name. NumPy holds host memory
 * only (kDLCPU, and the CUDA and ROCm host and managed memory its
 * from_dlpack takes), never memory of a device with streams: its
 * __dlpack__ needs no stream, and the tensor says the device. */
int is_numpy_ndarray(PyTypeObject *tp)
{
	return !(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && strcmp(tp->tp_name, "numpy.ndarray") == 0;
}

/* type_facts writes tp's facts to *out: 0, or -1 with an exception. */
int type_facts(PyTypeObject *tp, unsigned int *out)
{
	unsigned int tag = 0;
	if (Py_TYPE(tp) == &PyType_Type && (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG))
		tag = tp->tp_version_tag;
	type_facts_entry *e = &type_facts_table[((uintptr_t)tp >> 6) % TYPE_FACTS_SLOTS];
	if (tag != 0 && e->tp == tp && e->tag == tag) {
		*out = e->facts;
		return 0;
	}
	unsigned int f = 0;
	int r = type_has(tp, s_suai);
	if (r < 0)
		return -1;
	f |= r ? FACT_SUAI : 0;
	r = type_attr(tp, s_exchange);
	if (r == 0)
		r = type_attr(tp, s_exchange_int);
	if (r < 0)
		return -1;
	f |= r ? FACT_EXCHANGE : 0;
	if ((r = type_method(tp, s_dlpack)) < 0)
		return -1;
	f |= r ? FACT_DLPACK : 0;
	if ((r = type_method(tp, s_dlpack_device)) < 0)
		return -1;
	f |= r ? FACT_DLPACK_DEVICE : 0;
	if (is_numpy_ndarray(tp))
		f |= FACT_NO_STREAM;
	/* A key's __eq__ in a class dict may have run and changed the type
	 * meanwhile: then its tag is no longer the one read above. */
	if (tag != 0 && (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) && tp->tp_version_tag == tag) {
		e->tp = tp;
		e->tag = tag;
		e->facts = f;
	}
	*out = f;
	return 0;
}

#else

typedef int ubx_typefacts_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
