/*
 * ubx_c.h: what the C files of pyext's C half share with each other
 * (module.c, class.c), with Python's headers: only an extension module's
 * build (UBX_MODULE) includes it. Hidden: the names stay inside the
 * library, so two modules in one process never resolve each other's.
 */
#ifndef UBX_C_H
#define UBX_C_H

#include <Python.h>

#include "ubx.h"

#define UBX_HIDDEN __attribute__((visibility("hidden")))

/* module.c */

/* call_go is a Go function's call: self is a capsule of its ubx_func. */
UBX_HIDDEN PyObject *call_go(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames);
/* go_failed raises what Go failed with; NULL, to return. */
UBX_HIDDEN void *go_failed(void);

/* class.c */

/* ubx_function_new is a module's function: ml's C function called with
 * self (PyCFunction's contract), as a callable that Python documents and
 * inspects as a function of module modname (help, inspect.signature). */
UBX_HIDDEN PyObject *ubx_function_new(PyMethodDef *ml, PyObject *self, PyObject *modname);
/* ubx_add_classes makes the module's classes and adds them to m. */
UBX_HIDDEN int ubx_add_classes(PyObject *m, const ubx_module_def *def);
/* ubx_read_instance reads an argument of class p->cls (UBX_P_INSTANCE):
 * 0, or -1 with CPython's TypeError. A value it read is the call's until
 * ubx_release_instance, which the call runs when it ends. */
UBX_HIDDEN int ubx_read_instance(const ubx_func *f, const ubx_param *p, PyObject *o, ubx_value *val);
UBX_HIDDEN void ubx_release_instance(ubx_value *val);
/* ubx_instance_result is the object of a UBX_R_INSTANCE result. */
UBX_HIDDEN PyObject *ubx_instance_result(const ubx_result *r);

#endif
