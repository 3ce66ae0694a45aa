/*
 * module.c: the C half of every extension module built with pyext (the
 * usmbridge package's own usmbridge._ext among them): the module itself,
 * made when Python imports it. It asks Go for the module's definition
 * (ubx_go_define), makes the Array type (arraytype.c), the fork error, the
 * module's functions (function.c over call.c's call_go, or fromdlpack.c's
 * converters), its classes (class.c), its own exceptions and attributes,
 * and refuses what it cannot serve:
 * a forked child, a sub-interpreter.
 *
 * The C half owns what Python sees; Go (pyext's cgo files) holds the rules
 * and the Go functions; C reads arguments, makes objects and calls Go once
 * per call, with the GIL held. What C decides itself, Go decides too, and
 * a test holds the two equal:
 *  - a host (kDLCPU) DLPack tensor is imported in C (dlimport.c), as
 *    NumPy's from_dlpack does: one capsule, one owner, one call of the
 *    producer's deleter, when the Array goes (FuzzHostImport holds it to
 *    dlpack.Import);
 *  - an Array's exports copy its view, which is dlpack.Export's form of
 *    the array (Go fills it for the arrays Go makes); anything but a plain
 *    export (a stream queue, a copy, another device, every error) is Go's.
 * Everything else (USM, __sycl_usm_array_interface__, queues) is Go's.
 *
 * Each file of the C half holds one concern; ubx_c.h lists them in the
 * order they build on each other, and CONTRIBUTING.md maps them. Every
 * file but fork.c and dlimport.c is compiled only when UBX_MODULE is
 * defined (the build of a module defines it and points at Python's
 * headers), so that pyext builds, vets and tests without Python.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

typedef struct {
	PyTypeObject *array_type;
	PyObject *fork_error;
} modstate;

static char *module_name;
static struct PyModuleDef moddef;

static PyObject *mod_fork_skips(PyObject *mod, PyObject *unused)
{
	return PyLong_FromLong(ubx_fork_skips());
}

/* _c_stats: the C half's counts, for leak tests (usmbridge._stats adds
 * Go's). */
static PyObject *mod_c_stats(PyObject *mod, PyObject *unused)
{
	if (forked())
		return NULL;
	return Py_BuildValue("{sLsLsLsLsLsL}", "live_exports", (long long)live_exports, "stray_deletes",
			     (long long)stray_deletes, "exchange_exports", (long long)exchange_exports, "c_imports",
			     (long long)c_imports, "live_c_imports", (long long)live_c_imports, "numpy_reads",
			     (long long)numpy_reads);
}

static PyMethodDef module_methods[] = {
	{"_fork_skips", (PyCFunction)mod_fork_skips, METH_NOARGS,
	 "Releases a forked child skipped rather than enter Go (works in a forked child)."},
	{"_c_stats", (PyCFunction)mod_c_stats, METH_NOARGS, "The C half's live counts (leak tests)."},
	{NULL},
};

static int add_function(PyObject *m, const ubx_func *f)
{
	PyMethodDef *ml = calloc(1, sizeof(PyMethodDef)); /* lives as long as the process, like the def */
	if (ml == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	ml->ml_name = f->name;
	ml->ml_doc = f->doc;
	switch (f->builtin) {
	case UBX_FN_FROM_DLPACK:
		ml->ml_meth = (PyCFunction)(void (*)(void))call_from_dlpack;
		ml->ml_flags = METH_FASTCALL | METH_KEYWORDS;
		break;
	case UBX_FN_ASARRAY:
		ml->ml_meth = (PyCFunction)call_asarray;
		ml->ml_flags = METH_O;
		break;
	default:
		ml->ml_meth = (PyCFunction)(void (*)(void))call_go;
		ml->ml_flags = METH_FASTCALL | METH_KEYWORDS;
	}
	PyObject *self = PyCapsule_New((void *)f, NULL, NULL);
	if (self == NULL)
		return -1;
	PyObject *modname = PyModule_GetNameObject(m);
	PyObject *fn = modname != NULL ? function_make(ml, self, modname, NULL, FN_PLAIN) : NULL;
	Py_XDECREF(modname);
	Py_DECREF(self);
	if (fn == NULL)
		return -1;
	int r = PyModule_AddObject(m, f->name, fn);
	if (r < 0)
		Py_DECREF(fn);
	return r;
}

/* add_attributes adds the module's own exceptions (made once per process,
 * as the fork error is, so that a module made again raises the classes
 * its users caught before) and its attributes (pyext.Module.Const). */
static int add_attributes(PyObject *m)
{
	for (int32_t k = 0; k < def->nexcs; k++) {
		ubx_exc *e = &def->excs[k];
		if (e->type == NULL) {
			PyObject *base = NULL;
			if (e->base_exc >= 0 && e->base_exc < k) {
				base = Py_NewRef((PyObject *)def->excs[e->base_exc].type);
			} else {
				PyObject *builtins = PyImport_ImportModule("builtins");
				if (builtins == NULL)
					return -1;
				base = PyObject_GetAttrString(builtins, e->base);
				Py_DECREF(builtins);
				if (base == NULL)
					return -1;
			}
			if (!PyExceptionClass_Check(base)) {
				PyErr_Format(PyExc_ImportError, "%s: its base %s is no exception class", e->name, e->base);
				Py_DECREF(base);
				return -1;
			}
			e->type = PyErr_NewExceptionWithDoc(e->name, *e->doc != '\0' ? e->doc : NULL, base, NULL);
			Py_DECREF(base);
			if (e->type == NULL)
				return -1;
		}
		const char *attr = strrchr(e->name, '.');
		if (PyModule_AddObjectRef(m, attr != NULL ? attr + 1 : e->name, e->type) < 0)
			return -1;
	}
	for (int32_t k = 0; k < def->nconsts; k++)
		if (PyModule_AddObjectRef(m, def->consts[k].name, def->consts[k].value) < 0)
			return -1;
	return 0;
}

static int module_exec(PyObject *m)
{
	if (ubx_fork_flag) {
		PyErr_SetString(PyExc_ImportError, fork_message);
		return -1;
	}
	/* One Go runtime and one attached interpreter per process: the main
	 * one. A sub-interpreter gets ImportError, never a module that would
	 * take the main interpreter's objects for its own. */
	if (PyInterpreterState_GetID(PyInterpreterState_Get()) != 0) {
		PyErr_Format(PyExc_ImportError,
			     "%s cannot be imported in a sub-interpreter: its Go half serves the main interpreter only",
			     moddef.m_name);
		return -1;
	}
	modstate *st = PyModule_GetState(m);
	if (def == NULL) {
		char *err = ubx_go_define(module_name, &def);
		if (err != NULL) {
			PyErr_SetString(PyExc_ImportError, err);
			free(err);
			return -1;
		}
	}
	if (intern_names() < 0)
		return -1;
	if ((st->array_type = array_type_new(m)) == NULL)
		return -1;
	Py_INCREF(st->array_type);
	if (PyModule_AddObject(m, "Array", (PyObject *)st->array_type) < 0) {
		Py_DECREF(st->array_type);
		return -1;
	}
	if (g_fork_error == NULL) {
		g_fork_error = PyErr_NewExceptionWithDoc(
			def->fork_error_name,
			"Raised by every use of the module in a child created by fork() (use the 'spawn' or 'forkserver' "
			"start method).",
			PyExc_RuntimeError, NULL);
		if (g_fork_error == NULL)
			return -1;
	}
	st->fork_error = Py_NewRef(g_fork_error);
	Py_INCREF(st->fork_error);
	if (PyModule_AddObject(m, "ForkError", st->fork_error) < 0) {
		Py_DECREF(st->fork_error);
		return -1;
	}
	if (def->doc != NULL && PyModule_SetDocString(m, def->doc) < 0)
		return -1;
	for (int32_t i = 0; i < def->nfuncs; i++)
		if (add_function(m, &def->funcs[i]) < 0)
			return -1;
	if (add_classes(m, def) < 0 || add_attributes(m) < 0)
		return -1;
	return PyModule_AddFunctions(m, module_methods);
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
	modstate *st = PyModule_GetState(m);
	if (st != NULL) {
		Py_VISIT(st->array_type);
		Py_VISIT(st->fork_error);
	}
	return 0;
}

static int module_clear(PyObject *m)
{
	modstate *st = PyModule_GetState(m);
	if (st != NULL) {
		Py_CLEAR(st->array_type);
		Py_CLEAR(st->fork_error);
	}
	return 0;
}

static void module_free(void *m)
{
	module_clear(m);
}

static PyModuleDef_Slot module_slots[] = {
	{Py_mod_exec, module_exec},
#if PY_VERSION_HEX >= 0x030C0000
	{Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
	{Py_mod_gil, Py_MOD_GIL_USED},
#endif
	{0, NULL},
};

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT,
	.m_size = sizeof(modstate),
	.m_slots = module_slots,
	.m_traverse = module_traverse,
	.m_clear = module_clear,
	.m_free = module_free,
};

/* ubx_module_init is PyInit_<name> of a module named name (the build
 * writes PyInit_<last part of name> to call it). */
PyObject *ubx_module_init(const char *name)
{
	if (module_name == NULL)
		module_name = strdup(name);
	moddef.m_name = module_name;
	return PyModuleDef_Init(&moddef);
}

#else

typedef int ubx_module_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
