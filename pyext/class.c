/*
 * class.c: the module's functions as Python objects, and its classes
 * (pyext.NewClass): Go types whose Python objects hold a Go value by
 * handle. Go's class.go defines them; RATIONALE.md, "Go types as Python
 * classes", says why they are the way they are.
 *
 * A function or method is a callable of its own type rather than a
 * PyCFunction bound to a capsule (which help() showed as a "method of
 * builtins.PyCapsule instance"): it calls the C function it was made with
 * (module.c's call_go for Go functions) through vectorcall, and answers
 * __name__, __qualname__, __module__, __doc__ and __text_signature__ as
 * CPython's built-in functions do, so help() and inspect.signature read it
 * as one. A method's type is a method descriptor (obj.run(x) is one
 * vectorcall of [obj, x], without a bound method); its receiver, the
 * function's first parameter (UBX_F_SELF), must be an object of its class.
 *
 * Only an extension module's build (UBX_MODULE) compiles it.
 */
#ifndef UBX_MODULE
typedef int ubx_class_c_unused; /* nothing without Python */
#else

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdlib.h>
#include <string.h>

#include "ubx_c.h"
#include "_cgo_export.h"

/* ---- functions and methods ------------------------------------------------ */

typedef struct {
	PyObject_HEAD
	PyMethodDef *ml;    /* its Python name, C function, flags and doc (with the signature) */
	PyObject *self;     /* what ml's function gets as self: a capsule of the ubx_func */
	PyObject *module;   /* __module__ */
	PyObject *qualname; /* "f", "Plan.run" */
	PyTypeObject *cls;  /* a method's class; NULL for a function */
	vectorcallfunc vectorcall;
} Function;

static PyTypeObject *function_type, *method_type;

/* METH_FASTCALL | METH_KEYWORDS (CPython names the type only from 3.13). */
typedef PyObject *(*fastcall_kw)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);

static PyObject *function_vectorcall(PyObject *o, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
	Function *f = (Function *)o;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	if (f->ml->ml_flags & METH_O) {
		if (nargs != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)) {
			PyErr_Format(PyExc_TypeError, "%s() takes exactly one argument (%zd given)", f->ml->ml_name,
				     nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0));
			return NULL;
		}
		return f->ml->ml_meth(f->self, args[0]);
	}
	return ((fastcall_kw)(void (*)(void))f->ml->ml_meth)(f->self, args, (Py_ssize_t)nargsf, kwnames);
}

/* The signature part of a doc made with CPython's "name(sig)\n--\n\n"
 * prefix: [*start, *end) is "(sig)"; 0 when the doc has none. */
static int doc_signature(const char *doc, const char **start, const char **end)
{
	const char *sep = doc != NULL ? strstr(doc, ")\n--\n\n") : NULL;
	const char *open = doc != NULL ? strchr(doc, '(') : NULL;
	if (sep == NULL || open == NULL || open > sep)
		return 0;
	*start = open;
	*end = sep + 1;
	return 1;
}

static PyObject *function_doc(Function *f, void *unused)
{
	const char *s, *e, *doc = f->ml->ml_doc;
	if (doc == NULL)
		Py_RETURN_NONE;
	if (doc_signature(doc, &s, &e))
		doc = e + 5; /* past ")\n--\n\n" less the ')' */
	if (*doc == '\0')
		Py_RETURN_NONE;
	return PyUnicode_FromString(doc);
}

static PyObject *function_text_signature(Function *f, void *unused)
{
	const char *s, *e;
	if (!doc_signature(f->ml->ml_doc, &s, &e))
		Py_RETURN_NONE;
	return PyUnicode_FromStringAndSize(s, e - s);
}

static PyObject *function_name(Function *f, void *unused)
{
	return PyUnicode_FromString(f->ml->ml_name);
}

static PyObject *function_qualname(Function *f, void *unused)
{
	return Py_NewRef(f->qualname);
}

static PyObject *function_objclass(Function *f, void *unused)
{
	if (f->cls == NULL) {
		PyErr_SetString(PyExc_AttributeError, "__objclass__");
		return NULL;
	}
	return Py_NewRef((PyObject *)f->cls);
}

static PyObject *function_repr(Function *f)
{
	if (f->cls != NULL)
		return PyUnicode_FromFormat("<method '%s' of '%s' objects>", f->ml->ml_name, f->cls->tp_name);
	return PyUnicode_FromFormat("<built-in function %s>", f->ml->ml_name);
}

/* A function is never bound (as a built-in function), a method is (as a
 * Python function): obj.run is a bound method; the class's run, the
 * function. */
static PyObject *function_get(PyObject *self, PyObject *obj, PyObject *type)
{
	if (((Function *)self)->cls == NULL || obj == NULL || obj == Py_None)
		return Py_NewRef(self);
	return PyMethod_New(self, obj);
}

static int function_traverse(Function *f, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(f));
	Py_VISIT(f->self);
	Py_VISIT(f->module);
	Py_VISIT(f->qualname);
	Py_VISIT((PyObject *)f->cls);
	return 0;
}

static int function_clear(Function *f)
{
	Py_CLEAR(f->self);
	Py_CLEAR(f->module);
	Py_CLEAR(f->qualname);
	Py_CLEAR(f->cls);
	return 0;
}

static void function_dealloc(Function *f)
{
	PyTypeObject *tp = Py_TYPE(f);
	PyObject_GC_UnTrack(f);
	function_clear(f);
	PyObject_GC_Del(f);
	Py_DECREF(tp);
}

static PyGetSetDef function_getset[] = {
	{"__doc__", (getter)function_doc, NULL, NULL, NULL},
	{"__text_signature__", (getter)function_text_signature, NULL, NULL, NULL},
	{"__name__", (getter)function_name, NULL, NULL, NULL},
	{"__qualname__", (getter)function_qualname, NULL, NULL, NULL},
	{"__objclass__", (getter)function_objclass, NULL, NULL, NULL},
	{NULL},
};

static PyMemberDef function_members[] = {
	{"__module__", T_OBJECT, offsetof(Function, module), 0, NULL},
	{"__vectorcalloffset__", T_PYSSIZET, offsetof(Function, vectorcall), READONLY, NULL},
	{NULL},
};

static PyType_Slot function_slots[] = {
	{Py_tp_dealloc, function_dealloc},
	{Py_tp_traverse, function_traverse},
	{Py_tp_clear, function_clear},
	{Py_tp_call, PyVectorcall_Call},
	{Py_tp_descr_get, function_get},
	{Py_tp_repr, function_repr},
	{Py_tp_getset, function_getset},
	{Py_tp_members, function_members},
	{0, NULL},
};

static PyType_Spec function_spec = {
	.name = "pyext.function",
	.basicsize = sizeof(Function),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
		 Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = function_slots,
};

/* A method's type is a method descriptor: CPython calls obj.run(x) as
 * run(obj, x), without binding. */
static PyType_Spec method_spec = {
	.name = "pyext.method",
	.basicsize = sizeof(Function),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
		 Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_METHOD_DESCRIPTOR,
	.slots = function_slots,
};

/* The types are made once per process (sub-interpreters are refused) and
 * kept. */
static int function_types(void)
{
	if (function_type == NULL && (function_type = (PyTypeObject *)PyType_FromSpec(&function_spec)) == NULL)
		return -1;
	if (method_type == NULL && (method_type = (PyTypeObject *)PyType_FromSpec(&method_spec)) == NULL)
		return -1;
	return 0;
}

static PyObject *function_make(PyMethodDef *ml, PyObject *self, PyObject *modname, PyTypeObject *cls)
{
	if (function_types() < 0)
		return NULL;
	Function *f = PyObject_GC_New(Function, cls != NULL ? method_type : function_type);
	if (f == NULL)
		return NULL;
	f->ml = ml;
	f->self = Py_NewRef(self);
	f->module = Py_NewRef(modname);
	f->cls = (PyTypeObject *)Py_XNewRef((PyObject *)cls);
	f->vectorcall = function_vectorcall;
	f->qualname = cls != NULL ? PyUnicode_FromFormat("%s.%s", strrchr(cls->tp_name, '.') != NULL ?
									  strrchr(cls->tp_name, '.') + 1 :
									  cls->tp_name,
							   ml->ml_name) :
				    PyUnicode_FromString(ml->ml_name);
	if (f->qualname == NULL) {
		Py_DECREF(f);
		return NULL;
	}
	PyObject_GC_Track(f);
	return (PyObject *)f;
}

PyObject *ubx_function_new(PyMethodDef *ml, PyObject *self, PyObject *modname)
{
	return function_make(ml, self, modname, NULL);
}

/* ---- objects of classes ------------------------------------------------------ */

typedef struct {
	PyObject_HEAD
	int64_t handle; /* Go's value (values.go's table); 0 once given back */
	/* The calls that read the object as an argument and have not ended
	 * (ubx_read_instance to ubx_release_instance): while there are any,
	 * the handle stays the object's and Go's value open, for the call
	 * runs on it. A clear meanwhile (cleared) ends the object's use from
	 * Python at once and gives the value back when the last call ends. */
	int32_t calls;
	int32_t cleared;
	PyObject *weakrefs;
} Instance;

/* A class as C keeps it: its type, and its properties' accessors. */
typedef struct {
	PyObject *get, *set; /* capsules of the accessors' ubx_funcs (set: NULL) */
	const char *name;
} prop_entry;

/* The module's classes and their defs; made by the first import, kept. */
static PyTypeObject **class_types;
static const ubx_class *class_defs;
static int32_t nclasses;

/* The living object of each handle (borrowed: an object removes itself when
 * its value is dropped), so that a value Go returns again is its object
 * again. Guarded by the GIL. */
static PyObject **objects;
static int64_t nobjects;

static int class_of(PyTypeObject *tp)
{
	for (int32_t k = 0; k < nclasses; k++)
		if (class_types[k] == tp)
			return k;
	return -1;
}

/* give_back gives an object's Go value back to Go, which closes it if it
 * is an io.Closer. A forked child leaves it (it cannot enter Go). */
static void give_back(Instance *o)
{
	int64_t h = o->handle;
	o->handle = 0;
	o->cleared = 0;
	if (ubx_forked()) {
		fork_skip();
		return;
	}
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	if (ubx_go_drop_value(h) != 0) {
		go_failed();
		/* The type, not the object, which may be being freed. */
		PyErr_WriteUnraisable((PyObject *)Py_TYPE(o));
	}
	PyErr_Restore(et, ev, tb);
}

/* instance_drop ends an object's Go value, when the object is freed or
 * cleared: no longer its object's (objects), and given back to Go, at once
 * or, while calls run on it, when the last ends. */
static void instance_drop(Instance *o)
{
	int64_t h = o->handle;
	if (h == 0 || o->cleared)
		return;
	if (h < nobjects && objects[h] == (PyObject *)o)
		objects[h] = NULL;
	if (o->calls > 0) {
		o->cleared = 1;
		return;
	}
	give_back(o);
}

void ubx_release_instance(ubx_value *val)
{
	Instance *o = (Instance *)val->obj;
	if (--o->calls == 0 && o->cleared)
		give_back(o);
}

static int instance_clear(Instance *o)
{
	instance_drop(o);
	return 0;
}

static int instance_traverse(Instance *o, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(o));
	return 0;
}

static void instance_dealloc(Instance *o)
{
	PyTypeObject *tp = Py_TYPE(o);
	PyObject_GC_UnTrack(o);
	if (o->weakrefs != NULL)
		PyObject_ClearWeakRefs((PyObject *)o);
	instance_drop(o);
	PyObject_GC_Del(o);
	Py_DECREF(tp);
}

/* Plan(...): the constructor, a Go function whose result is the object. */
static PyObject *instance_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	int k = class_of(type);
	if (k < 0 || class_defs[k].ctor == NULL) {
		PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", type->tp_name);
		return NULL;
	}
	PyObject *cap = PyCapsule_New((void *)class_defs[k].ctor, NULL, NULL);
	if (cap == NULL)
		return NULL;
	Py_ssize_t na = PyTuple_GET_SIZE(args), nk = kwds != NULL ? PyDict_GET_SIZE(kwds) : 0;
	PyObject **stack = PyMem_Malloc(sizeof(PyObject *) * (size_t)(na + nk + 1));
	PyObject *kwnames = nk > 0 ? PyTuple_New(nk) : NULL, *out = NULL;
	if (stack == NULL || (nk > 0 && kwnames == NULL)) {
		PyErr_NoMemory();
		goto done;
	}
	for (Py_ssize_t i = 0; i < na; i++)
		stack[i] = PyTuple_GET_ITEM(args, i);
	Py_ssize_t pos = 0, i = 0;
	PyObject *key, *value;
	while (nk > 0 && PyDict_Next(kwds, &pos, &key, &value)) {
		PyTuple_SET_ITEM(kwnames, i, Py_NewRef(key));
		stack[na + i++] = value;
	}
	out = call_go(cap, stack, na, kwnames);
done:
	PyMem_Free(stack);
	Py_XDECREF(kwnames);
	Py_DECREF(cap);
	return out;
}

static PyObject *prop_get(PyObject *self, void *closure)
{
	prop_entry *p = closure;
	PyObject *argv[1] = {self};
	return call_go(p->get, argv, 1, NULL);
}

static int prop_set(PyObject *self, PyObject *value, void *closure)
{
	prop_entry *p = closure;
	if (value == NULL) {
		PyErr_Format(PyExc_TypeError, "cannot delete attribute '%s' of '%s' objects", p->name,
			     Py_TYPE(self)->tp_name);
		return -1;
	}
	PyObject *argv[2] = {self, value};
	PyObject *r = call_go(p->set, argv, 2, NULL);
	if (r == NULL)
		return -1;
	Py_DECREF(r);
	return 0;
}

int ubx_read_instance(const ubx_func *f, const ubx_param *p, PyObject *o, ubx_value *val)
{
	val->obj = o;
	PyTypeObject *tp = p->cls >= 0 && p->cls < nclasses ? class_types[p->cls] : NULL;
	if (tp == NULL) {
		PyErr_Format(PyExc_SystemError, "%s() argument '%s': no class %d", f->name, p->name, (int)p->cls);
		return -1;
	}
	if (Py_TYPE(o) != tp) {
		if (p->flags & UBX_F_SELF) {
			const char *attr = strrchr(f->name, '.');
			PyErr_Format(PyExc_TypeError, "descriptor '%s' for '%s' objects doesn't apply to a '%.200s' object",
				     attr != NULL ? attr + 1 : f->name, tp->tp_name, Py_TYPE(o)->tp_name);
		} else {
			PyErr_Format(PyExc_TypeError, "%s() argument '%s' must be %s, not %.200s", f->name, p->name,
				     tp->tp_name, Py_TYPE(o)->tp_name);
		}
		return -1;
	}
	Instance *in = (Instance *)o;
	int64_t h = in->handle;
	if (h == 0 || in->cleared) {
		if (p->flags & UBX_F_SELF)
			PyErr_Format(PyExc_TypeError,
				     "%s(): the %s object's Go value is gone (the garbage collector cleared it)", f->name,
				     tp->tp_name);
		else
			PyErr_Format(PyExc_TypeError,
				     "%s() argument '%s' is a %s object whose Go value is gone (the garbage collector cleared it)",
				     f->name, p->name, tp->tp_name);
		return -1;
	}
	/* The call holds the value (o is the caller's, alive for the call):
	 * reading the later arguments may run Python that clears o, and a new
	 * object must not take its handle before Go reads it. */
	in->calls++;
	val->i = h;
	val->kind = UBX_V_INSTANCE;
	return 0;
}

PyObject *ubx_instance_result(const ubx_result *r)
{
	int64_t h = r->i;
	if (r->arg < 0 || r->arg >= nclasses || h <= 0) {
		PyErr_Format(PyExc_SystemError, "a Go function returned an object of no class (%d, %lld)", (int)r->arg,
			     (long long)h);
		return NULL;
	}
	if (r->n != 0) { /* the value's object is alive */
		if (h < nobjects && objects[h] != NULL)
			return Py_NewRef(objects[h]);
		PyErr_SetString(PyExc_RuntimeError, "a Go function returned a value whose object is being made or freed");
		return NULL;
	}
	if (h >= nobjects) {
		int64_t n = nobjects > 0 ? nobjects : 64;
		while (n <= h)
			n *= 2;
		PyObject **grown = realloc(objects, sizeof(PyObject *) * (size_t)n);
		if (grown == NULL) {
			if (ubx_go_drop_value(h) != 0)
				PyErr_Clear();
			return PyErr_NoMemory();
		}
		memset(grown + nobjects, 0, sizeof(PyObject *) * (size_t)(n - nobjects));
		objects = grown;
		nobjects = n;
	}
	Instance *o = PyObject_GC_New(Instance, class_types[r->arg]);
	if (o == NULL) {
		if (ubx_go_drop_value(h) != 0)
			PyErr_Clear();
		return NULL;
	}
	o->handle = h;
	o->calls = 0;
	o->cleared = 0;
	o->weakrefs = NULL;
	objects[h] = (PyObject *)o;
	PyObject_GC_Track(o);
	return (PyObject *)o;
}

/* ---- making the classes ----------------------------------------------------- */

static PyMemberDef instance_members[] = {
	{"__weaklistoffset__", T_PYSSIZET, offsetof(Instance, weakrefs), READONLY, NULL},
	{NULL},
};

/* add_method sets the class's attribute: a method object over f. */
static int add_method(PyTypeObject *tp, const ubx_func *f, PyObject *modname)
{
	PyMethodDef *ml = calloc(1, sizeof(PyMethodDef)); /* lives as long as the process, like the def */
	if (ml == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	const char *attr = strrchr(f->name, '.');
	ml->ml_name = attr != NULL ? attr + 1 : f->name;
	ml->ml_doc = f->doc;
	ml->ml_meth = (PyCFunction)(void (*)(void))call_go;
	ml->ml_flags = METH_FASTCALL | METH_KEYWORDS;
	PyObject *self = PyCapsule_New((void *)f, NULL, NULL);
	PyObject *fn = self != NULL ? function_make(ml, self, modname, tp) : NULL;
	Py_XDECREF(self);
	if (fn == NULL)
		return -1;
	/* Through the type's setattr, so that a special method (__repr__,
	 * __len__, __call__, ...) fills its slot as in a Python class. */
	int r = PyObject_SetAttrString((PyObject *)tp, ml->ml_name, fn);
	Py_DECREF(fn);
	return r;
}

static PyTypeObject *make_class(PyObject *m, const ubx_class *c)
{
	PyGetSetDef *getset = calloc((size_t)c->nprops + 1, sizeof(PyGetSetDef)); /* lives as long as the process */
	prop_entry *props = calloc((size_t)c->nprops + 1, sizeof(prop_entry));
	if (getset == NULL || props == NULL) {
		free(getset);
		free(props);
		PyErr_NoMemory();
		return NULL;
	}
	for (int32_t i = 0; i < c->nprops; i++) {
		const ubx_prop *p = &c->props[i];
		props[i].name = p->name;
		props[i].get = PyCapsule_New((void *)p->get, NULL, NULL);
		props[i].set = p->set != NULL ? PyCapsule_New((void *)p->set, NULL, NULL) : NULL;
		if (props[i].get == NULL || (p->set != NULL && props[i].set == NULL))
			return NULL; /* leaked: the import fails */
		getset[i] = (PyGetSetDef){(char *)p->name, prop_get, p->set != NULL ? prop_set : NULL, (char *)p->doc, &props[i]};
	}
	PyType_Slot slots[] = {
		{Py_tp_dealloc, instance_dealloc},
		{Py_tp_traverse, instance_traverse},
		{Py_tp_clear, instance_clear},
		{Py_tp_doc, (void *)c->doc},
		{Py_tp_members, instance_members},
		{Py_tp_getset, getset},
		{c->ctor != NULL ? Py_tp_new : 0, instance_new},
		{0, NULL},
	};
	PyType_Spec spec = {
		.name = c->name,
		.basicsize = sizeof(Instance),
		/* Final: no Py_TPFLAGS_BASETYPE (RATIONALE.md, "Go types as Python classes"). */
		.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | (c->ctor == NULL ? Py_TPFLAGS_DISALLOW_INSTANTIATION : 0),
		.slots = slots,
	};
	PyTypeObject *tp = (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, NULL);
	if (tp == NULL)
		return NULL;
	PyObject *modname = PyModule_GetNameObject(m);
	if (modname == NULL) {
		Py_DECREF(tp);
		return NULL;
	}
	int eq = 0, hash = 0;
	for (int32_t i = 0; i < c->nmethods; i++) {
		if (add_method(tp, &c->methods[i], modname) < 0) {
			Py_DECREF(modname);
			Py_DECREF(tp);
			return NULL;
		}
		const char *attr = strrchr(c->methods[i].name, '.');
		attr = attr != NULL ? attr + 1 : c->methods[i].name;
		eq |= strcmp(attr, "__eq__") == 0;
		hash |= strcmp(attr, "__hash__") == 0;
	}
	Py_DECREF(modname);
	/* A class that defines __eq__ and not __hash__ is unhashable, as a
	 * Python class is: equal objects must hash alike, and the identity
	 * hash it would keep does not. */
	if (eq && !hash && PyObject_SetAttrString((PyObject *)tp, "__hash__", Py_None) < 0) {
		Py_DECREF(tp);
		return NULL;
	}
	return tp;
}

int ubx_add_classes(PyObject *m, const ubx_module_def *def)
{
	if (function_types() < 0)
		return -1;
	if (class_types == NULL && def->nclasses > 0) {
		class_types = calloc((size_t)def->nclasses, sizeof(PyTypeObject *));
		if (class_types == NULL) {
			PyErr_NoMemory();
			return -1;
		}
	}
	class_defs = def->classes;
	nclasses = def->nclasses;
	for (int32_t k = 0; k < def->nclasses; k++) {
		const ubx_class *c = &def->classes[k];
		/* One class per process: a module made again after it left
		 * sys.modules names the class the first one made, so that the
		 * objects made before are still of it (their methods, and the
		 * functions that take them, check the type against this one). */
		PyTypeObject *tp = class_types[k] != NULL ? (PyTypeObject *)Py_NewRef((PyObject *)class_types[k]) : make_class(m, c);
		if (tp == NULL)
			return -1;
		if (class_types[k] == NULL)
			class_types[k] = (PyTypeObject *)Py_NewRef((PyObject *)tp);
		const char *attr = strrchr(c->name, '.');
		if (PyModule_AddObject(m, attr != NULL ? attr + 1 : c->name, (PyObject *)tp) < 0) {
			Py_DECREF(tp);
			return -1;
		}
	}
	return 0;
}

#endif /* UBX_MODULE */
