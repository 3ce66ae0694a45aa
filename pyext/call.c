/*
 * call.c: binding and calling a Go function: the arguments placed at their
 * parameters with CPython's errors (bind_args), each read for Go
 * (read_arg.c), one call into Go (ubx_go_call, with the GIL), the result
 * made (make_result), and what C held of the arguments released. Every
 * module function, method, constructor and property of a class calls Go
 * through call_go.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* A call's arguments (bound, vals, holds) live on the stack for functions
 * of up to INLINE_PARAMS parameters, the usual case, and in one heap block
 * for more: pyext.Func and pyext.Method take a func of any arity, so no
 * number of parameters may size a stack array (a stack array of 64 was
 * written past by a function of 70). */
#define INLINE_PARAMS 8

void *ubx_save_thread(void)
{
	return PyEval_SaveThread();
}

void ubx_restore_thread(void *ts)
{
	PyEval_RestoreThread(ts);
}

/* bind_args places positional and keyword arguments at their parameters,
 * with CPython's errors. */
static inline __attribute__((always_inline)) int bind_args(const ubx_func *f, PyObject *const *args, Py_ssize_t nargs,
							     PyObject *kwnames, PyObject **bound)
{
	int32_t npos = 0;
	while (npos < f->nparams && !(f->params[npos].flags & UBX_F_KWONLY))
		npos++;
	if (nargs > npos) {
		PyErr_Format(PyExc_TypeError, "%s() takes %s %d positional argument%s (%zd given)", f->name,
			     npos == f->nparams ? "at most" : "at most", npos, npos == 1 ? "" : "s", nargs);
		return -1;
	}
	for (Py_ssize_t i = 0; i < nargs; i++)
		bound[i] = args[i];
	if (kwnames != NULL) {
		Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
		for (Py_ssize_t k = 0; k < nk; k++) {
			PyObject *key = PyTuple_GET_ITEM(kwnames, k);
			int32_t j;
			for (j = 0; j < f->nparams; j++)
				if (PyUnicode_CompareWithASCIIString(key, f->params[j].name) == 0)
					break;
			if (j == f->nparams) {
				PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", f->name, key);
				return -1;
			}
			if (f->params[j].flags & UBX_F_POSONLY) {
				PyErr_Format(PyExc_TypeError,
					     "%s() got some positional-only arguments passed as keyword arguments: '%s'",
					     f->name, f->params[j].name);
				return -1;
			}
			if (bound[j] != NULL) {
				PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", f->name,
					     f->params[j].name);
				return -1;
			}
			bound[j] = args[nargs + k];
		}
	}
	for (int32_t j = 0; j < f->nparams; j++) {
		if (bound[j] == NULL && !(f->params[j].flags & UBX_F_OPTIONAL)) {
			PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", f->name,
				     f->params[j].name, j + 1);
			return -1;
		}
	}
	return 0;
}

static inline __attribute__((always_inline)) PyObject *make_one(ubx_result *r, PyObject **bound, ubx_value *vals,
								hold *holds, int32_t n, Instance *into);

/* make_tuple makes a tuple of the results at r->obj, each made (and so
 * consumed) whatever became of the others, then frees them: the first
 * failure is the exception, raised once every one is made and let go. */
static PyObject *make_tuple(ubx_result *r, PyObject **bound, ubx_value *vals, hold *holds, int32_t n)
{
	ubx_result *rs = (ubx_result *)r->obj;
	PyObject *t = PyTuple_New((Py_ssize_t)r->n), *et = NULL, *ev = NULL, *tb = NULL;
	if (t == NULL)
		PyErr_Fetch(&et, &ev, &tb);
	for (int64_t k = 0; k < r->n; k++) {
		PyObject *x = make_one(&rs[k], bound, vals, holds, n, NULL);
		if (x == NULL) {
			if (et == NULL && ev == NULL)
				PyErr_Fetch(&et, &ev, &tb);
			else
				PyErr_Clear();
		} else if (t != NULL && et == NULL && ev == NULL) {
			PyTuple_SET_ITEM(t, (Py_ssize_t)k, x);
		} else {
			Py_DECREF(x);
		}
	}
	free(rs);
	if (et != NULL || ev != NULL) {
		Py_XDECREF(t);
		PyErr_Restore(et, ev, tb);
		return NULL;
	}
	return t;
}

/* make_one makes the object of one result (no tuple: Go makes none of
 * tuples), consuming what the result holds whether or not it can. */
static inline __attribute__((always_inline)) PyObject *make_one(ubx_result *r, PyObject **bound, ubx_value *vals,
								hold *holds, int32_t n, Instance *into)
{
	switch (r->kind) {
	case UBX_R_NONE:
		Py_RETURN_NONE;
	case UBX_R_INT:
		return PyLong_FromLongLong(r->i);
	case UBX_R_UINT:
		return PyLong_FromUnsignedLongLong((unsigned long long)r->i);
	case UBX_R_FLOAT:
		return PyFloat_FromDouble(r->f);
	case UBX_R_BOOL:
		return PyBool_FromLong((long)r->i);
	case UBX_R_STR: {
		PyObject *s = PyUnicode_FromStringAndSize(r->s, (Py_ssize_t)r->n);
		free(r->s);
		return s;
	}
	case UBX_R_OBJECT:
		return r->obj;
	case UBX_R_ARRAY:
		return new_array_from_result(r);
	case UBX_R_ARG:
		if (r->arg >= 0 && r->arg < n && bound[r->arg] != NULL) {
			Py_INCREF(bound[r->arg]);
			return bound[r->arg];
		}
		break;
	case UBX_R_ARG_ARRAY:
		if (r->arg >= 0 && r->arg < n)
			return hold_array(&vals[r->arg], &holds[r->arg]);
		break;
	case UBX_R_INSTANCE:
		return ubx_instance_result(r, into);
	}
	PyErr_Format(PyExc_SystemError, "a Go function returned a result of unknown kind %d", (int)r->kind);
	return NULL;
}

/* make_result makes the object of a call's result: one, or a tuple. */
static inline __attribute__((always_inline)) PyObject *make_result(ubx_result *r, PyObject **bound, ubx_value *vals,
								   hold *holds, int32_t n, Instance *into)
{
	if (r->kind == UBX_R_TUPLE)
		return make_tuple(r, bound, vals, holds, n);
	return make_one(r, bound, vals, holds, n, into);
}

/* operand_refused reports whether the argument C could not read (its
 * TypeError pending) is the other operand of a binary special method,
 * a == b or a + b: then the method returns NotImplemented, as a Python
 * class's does, and Python tries the other operand's method (or, for ==
 * and !=, compares identity) instead of raising. The error is cleared: a
 * refused operand is the expected answer there. */
static int operand_refused(const ubx_func *f, int32_t i)
{
	static const char *const binary[] = {
	    "__eq__",       "__ne__",        "__lt__",       "__le__",      "__gt__",       "__ge__",
	    "__add__",      "__radd__",      "__iadd__",     "__sub__",     "__rsub__",     "__isub__",
	    "__mul__",      "__rmul__",      "__imul__",     "__matmul__",  "__rmatmul__",  "__imatmul__",
	    "__truediv__",  "__rtruediv__",  "__itruediv__", "__floordiv__", "__rfloordiv__", "__ifloordiv__",
	    "__mod__",      "__rmod__",      "__imod__",     "__divmod__",  "__rdivmod__",  "__pow__",
	    "__rpow__",     "__ipow__",      "__lshift__",   "__rlshift__", "__ilshift__",  "__rshift__",
	    "__rrshift__",  "__irshift__",   "__and__",      "__rand__",    "__iand__",     "__xor__",
	    "__rxor__",     "__ixor__",      "__or__",       "__ror__",     "__ior__",      NULL};
	if (i != 1 || !(f->params[0].flags & UBX_F_SELF) || !PyErr_ExceptionMatches(PyExc_TypeError))
		return 0;
	const char *attr = strrchr(f->name, '.');
	attr = attr != NULL ? attr + 1 : f->name;
	for (const char *const *op = binary; *op != NULL; op++) {
		if (strcmp(attr, *op) == 0) {
			PyErr_Clear();
			return 1;
		}
	}
	return 0;
}

/* call_func calls f with the arguments; into, for a constructor, is the
 * object its result's value goes to (the object __new__ made). It and what
 * it calls per call (bind_args, make_result) are inlined into call_go, as
 * the single function call_go was: GCC left them out of line once call_go
 * and call_go_into both called them, a few nanoseconds per call. */
static inline __attribute__((always_inline)) PyObject *call_func(const ubx_func *f, PyObject *const *args,
								 Py_ssize_t nargsf, PyObject *kwnames, Instance *into)
{
	int32_t n = f->nparams;
	PyObject *bound_inline[INLINE_PARAMS];
	ubx_value vals_inline[INLINE_PARAMS];
	hold holds_inline[INLINE_PARAMS];
	PyObject **bound = bound_inline;
	ubx_value *vals = vals_inline;
	hold *holds = holds_inline;
	void *block = NULL;
	if (n > INLINE_PARAMS) {
		size_t each = sizeof(PyObject *) + sizeof(ubx_value) + sizeof(hold);
		if ((size_t)n > PY_SSIZE_T_MAX / each || (block = PyMem_Malloc(each * (size_t)n)) == NULL)
			return PyErr_NoMemory();
		/* Three arrays in one block: each element's size is a multiple
		 * of its alignment (8), so each array starts aligned. */
		holds = block;
		vals = (ubx_value *)(holds + n);
		bound = (PyObject **)(vals + n);
	}
	memset(bound, 0, sizeof(PyObject *) * (size_t)n);
	PyObject *out = NULL;
	int32_t i = 0;
	if (bind_args(f, args, PyVectorcall_NARGS(nargsf), kwnames, bound) < 0)
		goto done;
	for (i = 0; i < n; i++) {
		/* Everything but the view, which read_arg writes whole for an
		 * array (a memset of all of it was a tenth of an empty call). */
		vals[i].kind = UBX_V_MISSING;
		vals[i].pad = 0;
		vals[i].i = 0;
		vals[i].f = 0;
		vals[i].s = NULL;
		vals[i].n = 0;
		vals[i].obj = NULL;
		holds[i].kind = HOLD_NONE;
		holds[i].capsule = NULL;
		holds[i].dims = NULL;
		if (read_arg(f, &f->params[i], bound[i], &holds[i], &vals[i]) < 0) {
			if (operand_refused(f, i))
				out = Py_NewRef(Py_NotImplemented);
			i++;
			goto done;
		}
	}
	ubx_result res;
	result_init(&res);
	call_ctx c = {vals, holds, n};
	if (go_status(ubx_go_call(f->index, vals, n, &res, &c)) == 0)
		out = make_result(&res, bound, vals, holds, n, into);
done:
	for (int32_t j = 0; j < i; j++) {
		if (vals[j].kind == UBX_V_INSTANCE)
			ubx_release_instance(&vals[j]);
		else if (vals[j].kind == UBX_V_NEW && vals[j].i != 0 && ubx_instance_adopt(&vals[j]) < 0)
			Py_CLEAR(out); /* its exception is raised */
		hold_release(&holds[j]);
	}
	PyMem_Free(block);
	return out;
}

PyObject *call_go(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
	if (forked())
		return NULL;
	const ubx_func *f = PyCapsule_GetPointer(self, NULL);
	if (f == NULL)
		return NULL;
	return call_func(f, args, nargsf, kwnames, NULL);
}

PyObject *call_go_into(const ubx_func *f, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Instance *into)
{
	if (forked())
		return NULL;
	return call_func(f, args, nargs, kwnames, into);
}

#else

#include "ubx.h"

/* Without Python: what Go calls during a call exists, and is never called. */
void *ubx_save_thread(void) { return NULL; }
void ubx_restore_thread(void *ts) {}

#endif /* UBX_MODULE */
