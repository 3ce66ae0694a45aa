/*
 * class.c: the module's classes (pyext.NewClass): Go types whose Python
 * objects hold a Go value by handle (instance.c). Go's class.go defines
 * them; here each becomes a heap type Python may subclass, with its
 * constructor (__init__; __new__ makes an object without a value), its
 * methods (function.c's method objects over call_go, and its functions
 * for static and class methods) and its properties.
 * RATIONALE.md, "Go types as Python classes", says why they are the way
 * they are.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* A class as C keeps it: its type, and its properties' accessors. */
typedef struct {
	PyObject *get, *set; /* capsules of the accessors' ubx_funcs (set: NULL) */
	const char *name;
} prop_entry;

/* The module's classes' definitions (their types are instance.c's
 * class_types); set by the first import, kept. */
static const ubx_class *class_defs;

static int class_of(PyTypeObject *tp)
{
	for (int32_t k = 0; k < nclasses; k++)
		if (class_types[k] == tp)
			return k;
	return -1;
}

/* class_index is the number of the module's class that tp is, or that tp
 * derives from (a Python subclass): -1 for none. */
static int class_index(PyTypeObject *tp)
{
	int k = class_of(tp);
	if (k >= 0 || tp->tp_mro == NULL)
		return k;
	for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(tp->tp_mro); i++)
		if ((k = class_of((PyTypeObject *)PyTuple_GET_ITEM(tp->tp_mro, i))) >= 0)
			return k;
	return -1;
}

/* Plan.__new__: an object without a value (handle 0), of the class or a
 * Python subclass. Its value comes from __init__, the constructor (a
 * subclass's __init__ calls it), or from __setstate__ when pickle made
 * it. */
static PyObject *instance_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	if (class_index(type) < 0) {
		PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", type->tp_name);
		return NULL;
	}
	return type->tp_alloc(type, 0);
}

/* Plan.__init__(...): the constructor, a Go function whose result is the
 * object's value. */
static int instance_init(PyObject *self, PyObject *args, PyObject *kwds)
{
	int k = class_index(Py_TYPE(self));
	if (k < 0 || class_defs[k].ctor == NULL) {
		PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", k < 0 ? Py_TYPE(self)->tp_name : class_types[k]->tp_name);
		return -1;
	}
	Instance *o = (Instance *)self;
	if (o->handle != 0 || o->cleared != INSTANCE_OPEN) {
		PyErr_Format(PyExc_TypeError,
			     "%s.__init__() called on a %.200s object that has had its Go value: the constructor makes a new "
			     "object's",
			     class_types[k]->tp_name, Py_TYPE(self)->tp_name);
		return -1;
	}
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
	out = call_go_into(class_defs[k].ctor, stack, na, kwnames, o);
done:
	PyMem_Free(stack);
	Py_XDECREF(kwnames);
	if (out == NULL)
		return -1;
	Py_DECREF(out);
	return 0;
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

/* add_method sets the class's attribute: a method object over f, or a
 * function that binds nothing (a static method: no receiver) or the class
 * (a class method: its receiver UBX_F_CLS). */
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
	int32_t first = f->nparams > 0 ? f->params[0].flags : 0;
	int binding = (first & UBX_F_SELF) ? FN_METHOD : (first & UBX_F_CLS) ? FN_CLASSMETHOD : FN_PLAIN;
	PyObject *self = PyCapsule_New((void *)f, NULL, NULL);
	PyObject *fn = self != NULL ? function_make(ml, self, modname, tp, binding) : NULL;
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
	/* __new__ makes objects without a value for the constructor to give
	 * one, or for __setstate__ (pickle's copyreg.__newobj__): a class
	 * without either is made only by Go. */
	int makes = c->ctor != NULL;
	for (int32_t i = 0; i < c->nmethods; i++) {
		const char *attr = strrchr(c->methods[i].name, '.');
		makes |= strcmp(attr != NULL ? attr + 1 : c->methods[i].name, "__setstate__") == 0;
	}
	PyType_Slot slots[] = {
		{Py_tp_dealloc, instance_dealloc},
		{Py_tp_traverse, instance_traverse},
		{Py_tp_clear, instance_clear},
		{Py_tp_doc, (void *)c->doc},
		{Py_tp_members, instance_members},
		{Py_tp_getset, getset},
		{Py_tp_init, instance_init},
		{makes ? Py_tp_new : 0, instance_new},
		{0, NULL},
	};
	PyType_Spec spec = {
		.name = c->name,
		.basicsize = sizeof(Instance),
		/* Python may subclass it: the constructor is __init__, and an object
		 * of a subclass is an Instance with more (RATIONALE.md, "Go types as
		 * Python classes"). */
		.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE |
			 (makes ? 0 : Py_TPFLAGS_DISALLOW_INSTANTIATION),
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

int add_classes(PyObject *m, const ubx_module_def *def)
{
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
		if (c->hidden) {
			Py_DECREF(tp); /* class_types keeps it */
			continue;
		}
		if (PyModule_AddObject(m, attr != NULL ? attr + 1 : c->name, (PyObject *)tp) < 0) {
			Py_DECREF(tp);
			return -1;
		}
	}
	return 0;
}

#else

typedef int ubx_class_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
