/*
 * capsule.c: DLPack capsules, both ways: their names, the capsule rule
 * (a capsule that still has its fresh name was never consumed, so its
 * destructor deletes the tensor; a consumer that takes the tensor renames
 * it used_*), and reading a fresh capsule's tensor.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

const char name_legacy[] = "dltensor", name_versioned[] = "dltensor_versioned";
const char used_legacy[] = "used_dltensor", used_versioned[] = "used_dltensor_versioned";

/* The capsule rule: a capsule that still has its fresh name was never
 * consumed, so its destructor deletes the tensor; a consumer that takes the
 * tensor renames it used_*. */
void capsule_destructor(PyObject *cap)
{
	/* A capsule often dies while an exception is on its way out (a
	 * consumer that refused the tensor raised, then dropped it): that
	 * exception is not the destructor's to clear. */
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	const char *name = PyCapsule_GetName(cap);
	if (name != NULL && strcmp(name, name_versioned) == 0) {
		ub_dl_managed_versioned *m = PyCapsule_GetPointer(cap, name);
		if (m != NULL && m->deleter != NULL)
			m->deleter(m);
	} else if (name != NULL && strcmp(name, name_legacy) == 0) {
		ub_dl_managed *m = PyCapsule_GetPointer(cap, name);
		if (m != NULL && m->deleter != NULL)
			m->deleter(m);
	}
	/* A destructor has no caller to raise to: what went wrong is reported
	 * as CPython reports an exception in __del__. */
	if (PyErr_Occurred())
		PyErr_WriteUnraisable(cap);
	PyErr_Restore(et, ev, tb);
}

/* capsule_tensor is a fresh DLPack capsule's tensor: 1 with *p and
 * *versioned, 0 for anything else (Go says what is wrong with it). */
int capsule_tensor(PyObject *cap, void **p, int *versioned)
{
	if (!PyCapsule_CheckExact(cap))
		return 0;
	const char *name = PyCapsule_GetName(cap);
	if (name == NULL) {
		PyErr_Clear();
		return 0;
	}
	*versioned = strcmp(name, name_versioned) == 0;
	if (!*versioned && strcmp(name, name_legacy) != 0)
		return 0;
	*p = PyCapsule_GetPointer(cap, name); /* its own name: no second compare */
	if (*p == NULL) {
		PyErr_Clear();
		return 0;
	}
	return 1;
}

#else

typedef int ubx_capsule_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
