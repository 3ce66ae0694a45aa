/*
 * instance.c: objects of the module's classes (pyext.NewClass), each
 * holding a Go value by handle: their lifetime (the value goes back to Go
 * when the object goes), the object of each live handle (so that a value
 * Go returns again is its object again), an argument of a class read for
 * Go, and a result that is a class's object. Making the classes is
 * class.c's; RATIONALE.md, "Go types as Python classes", says why they are
 * the way they are.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* The module's classes, made by the first import and kept (class.c). */
PyTypeObject **class_types;
int32_t nclasses;

/* The living object of each handle (borrowed: an object removes itself when
 * its value is dropped), so that a value Go returns again is its object
 * again. Guarded by the GIL. */
static PyObject **objects;

static int64_t nobjects;

/* give_back gives an object's Go value back to Go, which closes it if it
 * is an io.Closer. A forked child leaves it (it cannot enter Go). */
static void give_back(Instance *o)
{
	int64_t h = o->handle;
	o->handle = 0;
	o->cleared = INSTANCE_GONE;
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
		o->cleared = INSTANCE_CLEARING;
		return;
	}
	give_back(o);
}

void ubx_release_instance(ubx_value *val)
{
	Instance *o = (Instance *)val->obj;
	if (--o->calls == 0 && o->cleared == INSTANCE_CLEARING)
		give_back(o);
}

int instance_clear(Instance *o)
{
	instance_drop(o);
	return 0;
}

int instance_traverse(Instance *o, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(o));
	return 0;
}

void instance_dealloc(Instance *o)
{
	PyTypeObject *tp = Py_TYPE(o);
	PyObject_GC_UnTrack(o);
	if (o->weakrefs != NULL)
		PyObject_ClearWeakRefs((PyObject *)o);
	instance_drop(o);
	tp->tp_free(o); /* a Python subclass's object has more than an Instance (its __dict__) */
	Py_DECREF(tp);
}

int ubx_read_instance(const ubx_func *f, const ubx_param *p, PyObject *o, ubx_value *val)
{
	val->obj = o;
	PyTypeObject *tp = p->cls >= 0 && p->cls < nclasses ? class_types[p->cls] : NULL;
	if (tp == NULL) {
		PyErr_Format(PyExc_SystemError, "%s() argument '%s': no class %d", f->name, p->name, (int)p->cls);
		return -1;
	}
	if (Py_TYPE(o) != tp && !PyType_IsSubtype(Py_TYPE(o), tp)) { /* the class, or a Python subclass */
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
	if (h == 0 && in->cleared == INSTANCE_OPEN && (p->flags & UBX_F_NEW)) {
		/* __setstate__ of an object unpickling made: Go makes its value,
		 * which the object gets when the call succeeds. */
		val->kind = UBX_V_NEW;
		val->i = 0;
		return 0;
	}
	if (h == 0 && in->cleared == INSTANCE_OPEN) {
		if (p->flags & UBX_F_SELF)
			PyErr_Format(PyExc_TypeError,
				     "%s(): the %.200s object has no Go value: %s.__init__ did not run on it (a subclass's "
				     "__init__ calls super().__init__(...))",
				     f->name, Py_TYPE(o)->tp_name, tp->tp_name);
		else
			PyErr_Format(PyExc_TypeError,
				     "%s() argument '%s' is a %.200s object without its Go value (%s.__init__ did not run on it)",
				     f->name, p->name, Py_TYPE(o)->tp_name, tp->tp_name);
		return -1;
	}
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

/* objects_room makes room in objects for handle h: 0, or -1 (no memory). */
static int objects_room(int64_t h)
{
	if (h < nobjects)
		return 0;
	int64_t n = nobjects > 0 ? nobjects : 64;
	while (n <= h)
		n *= 2;
	PyObject **grown = realloc(objects, sizeof(PyObject *) * (size_t)n);
	if (grown == NULL)
		return -1;
	memset(grown + nobjects, 0, sizeof(PyObject *) * (size_t)(n - nobjects));
	objects = grown;
	nobjects = n;
	return 0;
}

/* drop_new gives back a value whose object cannot have it (its exception
 * pending): Go closes it, as the object's end would have. */
static void drop_new(int64_t h)
{
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	if (ubx_go_drop_value(h) != 0) {
		go_failed(); /* what its Close failed with, as give_back reports it */
		PyErr_WriteUnraisable(NULL);
	}
	PyErr_Restore(et, ev, tb);
}

/* attach makes o, an object without a value, the object of Go value h:
 * 0, or -1 with an exception (h given back). */
static int attach(Instance *o, int64_t h, const char *fn)
{
	if (o->handle != 0 || o->cleared != INSTANCE_OPEN) {
		PyErr_Format(PyExc_TypeError, "%s(): the %.200s object got a Go value meanwhile", fn, Py_TYPE(o)->tp_name);
		drop_new(h);
		return -1;
	}
	if (objects_room(h) < 0) {
		PyErr_NoMemory();
		drop_new(h);
		return -1;
	}
	o->handle = h;
	objects[h] = (PyObject *)o;
	return 0;
}

int ubx_instance_adopt(ubx_value *val)
{
	return attach((Instance *)val->obj, val->i, "__setstate__");
}

PyObject *ubx_instance_result(const ubx_result *r, Instance *into)
{
	int64_t h = r->i;
	if (r->arg < 0 || r->arg >= nclasses || h <= 0) {
		PyErr_Format(PyExc_SystemError, "a Go function returned an object of no class (%d, %lld)", (int)r->arg,
			     (long long)h);
		return NULL;
	}
	if (r->n != 0) { /* the value's object is alive (Go refuses it for a constructor) */
		if (into == NULL && h < nobjects && objects[h] != NULL)
			return Py_NewRef(objects[h]);
		PyErr_SetString(PyExc_RuntimeError, "a Go function returned a value whose object is being made or freed");
		return NULL;
	}
	if (into != NULL) { /* a constructor's: the object __new__ made gets the value */
		if (!PyObject_TypeCheck((PyObject *)into, class_types[r->arg])) {
			PyErr_Format(PyExc_SystemError, "a constructor returned a value of class %d for a %.200s object",
				     (int)r->arg, Py_TYPE(into)->tp_name);
			drop_new(h);
			return NULL;
		}
		if (attach(into, h, class_types[r->arg]->tp_name) < 0)
			return NULL;
		return Py_NewRef((PyObject *)into);
	}
	if (objects_room(h) < 0) {
		PyErr_NoMemory();
		drop_new(h);
		return NULL;
	}
	Instance *o = PyObject_GC_New(Instance, class_types[r->arg]);
	if (o == NULL) {
		drop_new(h);
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

PyMemberDef instance_members[] = {
	{"__weaklistoffset__", T_PYSSIZET, offsetof(Instance, weakrefs), READONLY, NULL},
	{NULL},
};

#else

typedef int ubx_instance_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
