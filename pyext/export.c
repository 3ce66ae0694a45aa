/*
 * export.c: the tensors an Array exports from its view, as __dlpack__ and
 * the DLPack C exchange table hand them out: blocks that hold a
 * DLManagedTensor(Versioned) each, whose deleter drops the reference to the
 * Array the block holds, and capsules of them (export_view). An export
 * copies the view, which is dlpack.Export's form of the array (Go fills it
 * for the arrays Go makes): C hands out only what Go would.
 */

#ifdef UBX_MODULE

#include "ubx_c.h"

#define BLOCK_LIVE 0x75626c6976652121ULL /* "ublive!!" */
#define BLOCK_FREE 0x75626672656521ULL
#define BLOCK_BATCH 64

static block *free_blocks;

static block *block_get(void)
{
	if (free_blocks == NULL) {
		block *b = calloc(BLOCK_BATCH, sizeof(block));
		if (b == NULL)
			return NULL;
		for (int i = 0; i < BLOCK_BATCH; i++) {
			b[i].magic = BLOCK_FREE;
			b[i].next = free_blocks;
			free_blocks = &b[i];
		}
	}
	block *b = free_blocks;
	free_blocks = b->next;
	return b;
}

/* block_release ends an export: the block goes back to the list and the
 * Array reference the tensor held is dropped. After interpreter shutdown
 * it leaks both rather than touch Python, as NumPy's deleter does. */
static void block_release(block *b, PyObject *owner)
{
	if (!Py_IsInitialized())
		return;
	PyGILState_STATE st = PyGILState_Ensure();
	if (b->magic != BLOCK_LIVE) {
		stray_deletes++;
	} else {
		b->magic = BLOCK_FREE;
		b->next = free_blocks;
		free_blocks = b;
		live_exports--;
		Py_DECREF(owner);
	}
	PyGILState_Release(st);
}

static void delete_legacy(ub_dl_managed *m)
{
	block_release((block *)m, (PyObject *)m->manager_ctx);
}

static void delete_versioned(ub_dl_managed_versioned *m)
{
	block_release((block *)m, (PyObject *)m->manager_ctx);
}

/* export_block fills a block with a's view (versioned with the given
 * minor, or legacy) whose deleter drops a reference to a; the caller makes
 * it live (export_live) once nothing can fail. NULL with an exception. */
block *export_block(Array *a, int versioned, uint32_t minor)
{
	block *b = block_get();
	if (b == NULL) {
		PyErr_NoMemory();
		return NULL;
	}
	if (versioned) {
		b->m.versioned.version.major = def->major;
		b->m.versioned.version.minor = minor;
		b->m.versioned.manager_ctx = a;
		b->m.versioned.deleter = delete_versioned;
		b->m.versioned.flags = a->v.flags & UB_DL_FLAG_READ_ONLY;
		b->m.versioned.dl_tensor = a->v.t;
	} else {
		b->m.legacy.dl_tensor = a->v.t;
		b->m.legacy.manager_ctx = a;
		b->m.legacy.deleter = delete_legacy;
	}
	return b;
}

void export_live(block *b, Array *a)
{
	b->magic = BLOCK_LIVE;
	live_exports++;
	Py_INCREF(a);
}

/* export_view makes a capsule of a's view. NULL with an exception. */
PyObject *export_view(Array *a, int versioned, uint32_t minor)
{
	block *b = export_block(a, versioned, minor);
	if (b == NULL)
		return NULL;
	PyObject *cap = PyCapsule_New(b, versioned ? name_versioned : name_legacy, capsule_destructor);
	if (cap == NULL) {
		b->next = free_blocks;
		free_blocks = b;
		return NULL;
	}
	export_live(b, a);
	return cap;
}

#else

typedef int ubx_export_c_unused; /* nothing without Python */

#endif /* UBX_MODULE */
