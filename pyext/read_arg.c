/*
 * read_arg.c: an argument of a Go function, read as its parameter's kind
 * says (ubx.h's UBX_P_*): scalars here, with CPython's conversions and
 * errors naming the function and the parameter; an array by the reader of
 * its producer's kind (read_numpy.c, read_buffer.c, read_dlpack.c, or its
 * SUAI left to Go); an object of a class by instance.c.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* read_usm leaves a USM argument o to Go: its SUAI as read_suai read it
 * (the hold keeps the dict for the call), or none (a NULL dict: the getter
 * raised AttributeError, and Go takes o as a DLPack producer without
 * calling it again). 0, or -1 with an exception. */
static int read_usm(PyObject *o, hold *h, ubx_value *val)
{
	ubx_suai *s = &h->u.suai;
	int r = read_suai(o, s);
	if (r < 0)
		return -1;
	if (r == 0) {
		s->dict = NULL; /* the hold holds nothing (HOLD_NONE) */
		s->looked = 0;
		s->pad = 0;
	} else {
		h->kind = HOLD_SUAI;
	}
	val->kind = UBX_V_SUAI;
	val->suai = s;
	return 0;
}

/* read_array reads an array argument: one of this module's Arrays as it is,
 * host memory through the buffer protocol or DLPack in C; anything else
 * (USM, SUAI, an exchange table) is left to Go as an object. 0, or -1 with
 * an exception. */
static int read_array(PyObject *o, int writable, hold *h, ubx_value *val)
{
	val->obj = o;
	if (is_array(o)) {
		val->v = ((Array *)o)->v;
		val->kind = UBX_V_ARRAY;
		return 0;
	}
	val->kind = UBX_V_OBJECT;
	int r = read_numpy(o, h, val);
	if (r != 0)
		return r < 0 ? -1 : 0;
	if (PyCapsule_CheckExact(o))
		return take_capsule(o, h, val) < 0 ? -1 : 0;
	unsigned int f;
	if (type_facts(Py_TYPE(o), &f) < 0)
		return -1;
	if (f & FACT_SUAI) {
		/* USM (Go binds its SUAI), unless the object says it is on the host
		 * and has the buffer protocol (another module's host Array). */
		if (!PyObject_CheckBuffer(o) || !(f & FACT_DLPACK_DEVICE))
			return read_usm(o, h, val);
		PyObject *dev = PyObject_CallMethodNoArgs(o, s_dlpack_device);
		if (dev == NULL)
			return -1; /* the producer's exception, as itself */
		long long type, id;
		int host = pair(dev, &type, &id) && type == UB_DL_CPU;
		Py_DECREF(dev);
		if (!host)
			return read_usm(o, h, val);
		return read_buffer(o, writable, (f & FACT_DLPACK) != 0, h, val) < 0 ? -1 : 0;
	}
	if (f & FACT_EXCHANGE)
		return 0;
	if (PyObject_CheckBuffer(o))
		return read_buffer(o, writable, (f & FACT_DLPACK) != 0, h, val) < 0 ? -1 : 0;
	if ((r = host_producer(o)) <= 0)
		return r;
	PyObject *cap = call_dlpack(o);
	if (cap == NULL)
		return -1;
	r = take_capsule(cap, h, val);
	if (r == 0) {
		h->capsule = cap; /* Go imports it and says what is wrong */
		val->obj = cap;
		return 0;
	}
	Py_DECREF(cap);
	return r < 0 ? -1 : 0;
}

/* Argument errors name the function and the parameter, as CPython's do. */
static int arg_type_error(const ubx_func *f, const ubx_param *p, const char *want, PyObject *got)
{
	PyErr_Format(PyExc_TypeError, "%s() argument '%s' must be %s, not %.200s", f->name, p->name, want,
		     Py_TYPE(got)->tp_name);
	return -1;
}

/* arg_type_error_from is arg_type_error for an argument whose own
 * conversion (__index__, __float__) raised TypeError: the new TypeError
 * names the parameter, and the object's exception is its __cause__, as
 * `raise ... from e` chains it. Any other exception propagates as itself. */
static int arg_type_error_from(const ubx_func *f, const ubx_param *p, const char *want, PyObject *got)
{
	if (!PyErr_ExceptionMatches(PyExc_TypeError))
		return -1;
	PyObject *ev = fetch_pending();
	arg_type_error(f, p, want, got);
	chain_cause(ev);
	return -1;
}

int read_arg(const ubx_func *f, const ubx_param *p, PyObject *o, hold *h, ubx_value *val)
{
	val->obj = o;
	if (o == NULL) {
		val->kind = UBX_V_MISSING;
		return 0;
	}
	if (o == Py_None && (p->flags & UBX_F_NONE)) {
		val->kind = UBX_V_NONE;
		return 0;
	}
	switch (p->kind) {
	case UBX_P_INT: {
		if (!PyLong_Check(o) && !PyIndex_Check(o))
			return arg_type_error(f, p, "int", o);
		int overflow;
		PyObject *i = PyNumber_Index(o);
		if (i == NULL)
			return arg_type_error_from(f, p, "int", o);
		val->i = PyLong_AsLongLongAndOverflow(i, &overflow);
		Py_DECREF(i);
		if (val->i == -1 && PyErr_Occurred())
			return -1;
		if (overflow) {
			PyErr_Format(PyExc_OverflowError, "%s() argument '%s' does not fit in a 64-bit integer", f->name,
				     p->name);
			return -1;
		}
		val->kind = UBX_V_INT;
		return 0;
	}
	case UBX_P_UINT: {
		/* uint64 and uint: the whole range, 0 ... 2**64-1, bits in i. */
		if (!PyLong_Check(o) && !PyIndex_Check(o))
			return arg_type_error(f, p, "int", o);
		PyObject *i = PyNumber_Index(o);
		if (i == NULL)
			return arg_type_error_from(f, p, "int", o);
		unsigned long long u = PyLong_AsUnsignedLongLong(i); /* negative or too large: OverflowError */
		Py_DECREF(i);
		if (u == (unsigned long long)-1 && PyErr_Occurred()) {
			if (!PyErr_ExceptionMatches(PyExc_OverflowError))
				return -1;
			PyObject *ev = fetch_pending(); /* said again, naming the parameter, and chained */
			PyErr_Format(PyExc_OverflowError, "%s() argument '%s' does not fit in a 64-bit unsigned integer",
				     f->name, p->name);
			chain_cause(ev);
			return -1;
		}
		val->i = (int64_t)u;
		val->kind = UBX_V_INT;
		return 0;
	}
	case UBX_P_FLOAT:
		if (!PyFloat_Check(o) && !PyLong_Check(o) && Py_TYPE(o)->tp_as_number == NULL)
			return arg_type_error(f, p, "float", o);
		val->f = PyFloat_AsDouble(o);
		if (val->f == -1.0 && PyErr_Occurred()) {
			if (PyLong_Check(o) && PyErr_ExceptionMatches(PyExc_OverflowError)) {
				/* CPython's "int too large to convert to float", said
				 * again naming the parameter, and chained. */
				PyObject *ev = fetch_pending();
				PyErr_Format(PyExc_OverflowError, "%s() argument '%s' is too large for a float", f->name,
					     p->name);
				chain_cause(ev);
				return -1;
			}
			return arg_type_error_from(f, p, "float", o);
		}
		val->kind = UBX_V_FLOAT;
		return 0;
	case UBX_P_BOOL:
		if (!PyBool_Check(o))
			return arg_type_error(f, p, "bool", o);
		val->i = o == Py_True;
		val->kind = UBX_V_BOOL;
		return 0;
	case UBX_P_STR: {
		if (!PyUnicode_Check(o))
			return arg_type_error(f, p, "str", o);
		Py_ssize_t n;
		val->s = PyUnicode_AsUTF8AndSize(o, &n);
		if (val->s == NULL)
			return -1;
		val->n = n;
		val->kind = UBX_V_STR;
		return 0;
	}
	case UBX_P_ARRAY:
		return read_array(o, p->flags & UBX_F_WRITABLE, h, val);
	case UBX_P_INSTANCE:
		return ubx_read_instance(f, p, o, val);
	default:
		val->kind = UBX_V_OBJECT;
		return 0;
	}
}

#else

typedef int ubx_read_arg_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
