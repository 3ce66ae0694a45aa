/*
 * function.c: the module's functions and its classes' methods as Python
 * objects. A function or method is a callable of its own type rather than
 * a PyCFunction bound to a capsule (which help() showed as a "method of
 * builtins.PyCapsule instance"): it calls the C function it was made with
 * (call.c's call_go for Go functions, fromdlpack.c's converters) through
 * vectorcall, and answers __name__, __qualname__, __module__, __doc__ and
 * __text_signature__ as CPython's built-in functions do, so help() and
 * inspect.signature read it as one. A method's type is a method descriptor
 * (obj.run(x) is one vectorcall of [obj, x], without a bound method); its
 * receiver, the function's first parameter (UBX_F_SELF), must be an object
 * of its class.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

typedef struct {
	PyObject_HEAD
	PyMethodDef *ml;    /* its Python name, C function, flags and doc (with the signature) */
	PyObject *self;     /* what ml's function gets as self: a capsule of the ubx_func */
	PyObject *module;   /* __module__ */
	PyObject *qualname; /* "f", "Plan.run" */
	PyTypeObject *cls;  /* a member's class; NULL for a function of the module */
	vectorcallfunc vectorcall;
	int binding; /* FN_*: what __get__ binds */
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
	if (Py_TYPE(f) == method_type)
		return PyUnicode_FromFormat("<method '%s' of '%s' objects>", f->ml->ml_name, f->cls->tp_name);
	return PyUnicode_FromFormat("<built-in function %s>", f->ml->ml_name);
}

/* A function is never bound (as a built-in function; a static method, as
 * Python's staticmethod), a method is (as a Python function): obj.run is a
 * bound method; the class's run, the function. A class method is bound to
 * the class it is looked up on, or the object's (as classmethod). */
static PyObject *function_get(PyObject *self, PyObject *obj, PyObject *type)
{
	Function *f = (Function *)self;
	if (f->binding == FN_CLASSMETHOD)
		return PyMethod_New(self, type != NULL ? type : (PyObject *)Py_TYPE(obj));
	if (f->binding != FN_METHOD || obj == NULL || obj == Py_None)
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

PyObject *function_make(PyMethodDef *ml, PyObject *self, PyObject *modname, PyTypeObject *cls, int binding)
{
	if (function_types() < 0)
		return NULL;
	/* Only a method's type is a method descriptor: CPython calls obj.f(x)
	 * as f(obj, x) for one, which a static or class method is not. */
	Function *f = PyObject_GC_New(Function, binding == FN_METHOD ? method_type : function_type);
	if (f == NULL)
		return NULL;
	f->ml = ml;
	f->self = Py_NewRef(self);
	f->module = Py_NewRef(modname);
	f->cls = (PyTypeObject *)Py_XNewRef((PyObject *)cls);
	f->vectorcall = function_vectorcall;
	f->binding = binding;
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

#else

typedef int ubx_function_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
