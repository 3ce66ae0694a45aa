/*
 * hold.c: what C holds of an array argument during a call (the states
 * below; the struct is ubx_c.h's), its release when the call ends, and the
 * Array that takes it over when Go keeps the argument or returns it
 * (hold_array, and ubx_hold_array for Go).
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

/* What C holds of an array argument during the call (RATIONALE.md, "One
 * owner per reference: what C holds of an argument"). The hold is in one
 * of three states, and every state owns what it names:
 *  - HOLD_NONE: nothing (the argument is one of this module's Arrays, which
 *    the caller's reference keeps alive for the call, or Go read it);
 *  - HOLD_BUFFER / HOLD_MANAGED: the buffer view C took, or the producer's
 *    tensor C imported (its deleter runs once, when the hold is released);
 *  - HOLD_OBJECT: a reference to a NumPy array read in place (read_numpy):
 *    the array owns its memory;
 *  - HOLD_SUAI: the argument's __sycl_usm_array_interface__ value and
 *    its values, references (read_suai), which Go reads during the call;
 *  - HOLD_ARRAY: an Array that owns that buffer, tensor or NumPy array
 *    now, and one reference to it. A kept view (Go's Keep) and a result
 *    over the argument each own a reference of their own to this Array.
 * A hold moves from BUFFER or MANAGED to ARRAY only by giving the resource
 * to the Array it then references (hold_array): nothing is handed over by
 * emptying the hold, so no state of it names memory it does not keep. */

void hold_release_slow(hold *h)
{
	if (h->kind == HOLD_NONE && h->capsule == NULL && h->dims == NULL)
		return;
	/* Releasing may run Python code (a buffer's __release_buffer__, the
	 * deleter, __del__ of an Array's base): a failed call's exception is
	 * set aside meanwhile (call_deleter keeps it too). A NumPy array read
	 * in place is let go the same way. */
	PyObject *et = NULL, *ev = NULL, *tb = NULL;
	int pending = h->kind != HOLD_MANAGED && h->kind != HOLD_NONE && PyErr_Occurred() != NULL;
	if (pending)
		PyErr_Fetch(&et, &ev, &tb);
	switch (h->kind) {
	case HOLD_BUFFER:
		PyBuffer_Release(&h->u.buf);
		break;
	case HOLD_MANAGED:
		live_c_imports--;
		call_deleter(h->u.managed.m, h->u.managed.versioned);
		break;
	case HOLD_ARRAY:
		Py_DECREF(h->u.array);
		break;
	case HOLD_OBJECT:
		Py_DECREF(h->u.obj);
		break;
	case HOLD_SUAI:
		suai_clear(&h->u.suai);
		break;
	}
	h->kind = HOLD_NONE;
	Py_CLEAR(h->capsule);
	if (h->dims != NULL && h->dims != h->inline_dims)
		free(h->dims);
	h->dims = NULL;
	if (pending)
		PyErr_Restore(et, ev, tb);
}

/* hold_array is the Array that owns an array argument's memory, for a kept
 * view (Go's Keep) or a result over the argument: a new reference. The
 * argument itself when it is one of this module's Arrays; else the Array
 * the hold gave its buffer or tensor to, made the first time (the hold then
 * references it). NULL with an exception. */
PyObject *hold_array(ubx_value *val, hold *h)
{
	if (val->kind != UBX_V_ARRAY) {
		PyErr_SetString(PyExc_SystemError, "only an array argument that C read can be kept or returned");
		return NULL;
	}
	if (val->obj != NULL && is_array(val->obj))
		return Py_NewRef(val->obj);
	if (h->kind == HOLD_ARRAY)
		return Py_NewRef(h->u.array);
	if (h->kind != HOLD_BUFFER && h->kind != HOLD_MANAGED && h->kind != HOLD_OBJECT) {
		PyErr_SetString(PyExc_SystemError, "an array argument C read holds nothing");
		return NULL;
	}
	Array *a = array_alloc(val->v.t.ndim);
	if (a == NULL)
		return NULL;
	if (h->kind == HOLD_BUFFER) {
		a->buffer = PyMem_Malloc(sizeof(Py_buffer));
		if (a->buffer == NULL) {
			Py_DECREF(a);
			return PyErr_NoMemory();
		}
		*a->buffer = h->u.buf;
	} else if (h->kind == HOLD_OBJECT) {
		a->base = h->u.obj; /* the hold's reference, now the Array's */
	} else {
		a->managed = h->u.managed.m;
		a->versioned = h->u.managed.versioned;
	}
	set_view(a, &val->v);
	h->kind = HOLD_ARRAY;
	h->u.array = (PyObject *)a; /* the hold's reference */
	return Py_NewRef((PyObject *)a);
}

/* ubx_hold_array is hold_array for Go: the Array that owns argument i's
 * memory, a new reference Go's kept views share, or NULL with the exception
 * in *exc. Go calls it when the call ends, on the calling thread, with the
 * GIL. */
void *ubx_hold_array(void *call, int32_t i, void **exc)
{
	if (!gil_held("ubx_hold_array"))
		return NULL;
	call_ctx *c = call;
	PyObject *r = NULL;
	if (c == NULL || i < 0 || i >= c->n)
		PyErr_SetString(PyExc_SystemError, "Keep of an argument outside its call");
	else
		r = hold_array(&c->vals[i], &c->holds[i]);
	if (r == NULL)
		take_error(exc);
	return r;
}

/* ubx_hold_leak gives up argument i's hold without releasing what it
 * holds, for Go when the Array kept views were to share could not be made:
 * the memory is leaked (counted) rather than released under them. */
void ubx_hold_leak(void *call, int32_t i)
{
	call_ctx *c = call;
	if (c == NULL || i < 0 || i >= c->n)
		return;
	hold *h = &c->holds[i];
	if (h->kind == HOLD_BUFFER || h->kind == HOLD_MANAGED)
		h->kind = HOLD_NONE; /* leaked on purpose: nothing releases it */
}

#else

#include "ubx.h"

/* Without Python: what Go calls during a call exists, and is never called. */
void *ubx_hold_array(void *call, int32_t i, void **exc) { return NULL; }
void ubx_hold_leak(void *call, int32_t i) {}

#endif /* UBX_MODULE */
