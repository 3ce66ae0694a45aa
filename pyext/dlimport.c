/*
 * dlimport.c: the import of a host (kDLCPU) DLPack tensor in C, so that
 * from_dlpack of a NumPy array and a NumPy argument of a Go function make
 * no call into Go (fromdlpack.c, read_numpy.c). It repeats dlpack.Import's checks for a
 * tensor without a registry, in Import's order, and the form dlpack.Export
 * gives the result. Go's code is the rule: FuzzHostImport (abi_test.go)
 * feeds the same hostile tensors to both and holds them equal. What Go's
 * rules depend on besides the tensor (the dtypes it accepts, the top of
 * user space) Go writes into the variables below when the module is made,
 * so those stay in one place.
 *
 * No Python here: the fuzz target links this file without Python.h.
 */
#include <string.h>

#include "ubx.h"

uint8_t ubx_dtype_size[UBX_DTYPE_CODES][UBX_DTYPE_BYTES];

uint64_t ubx_max_user_address;
const char *ubx_buffer_format[UBX_DTYPE_CODES][UBX_DTYPE_BYTES];
const char *ubx_suai_keys[UBX_SUAI_KEYS];

/* Overflow-checked int64 arithmetic, as usm's layout math. */
static int mul_ok(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

static int add_ok(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_add_overflow(a, b, r);
}

/* window is usm's byteWindow with offset 0: the bytes [*lo, *hi) relative
 * to element 0 that the array touches (lo == hi == 0 when it is empty); 0
 * when the layout overflows. */
static int window(const int64_t *shape, const int64_t *strides, int32_t ndim, int64_t itemsize, int64_t *lo,
		  int64_t *hi)
{
	int64_t n = 1;
	int zero = 0;
	for (int32_t i = 0; i < ndim; i++) {
		int64_t s = shape[i];
		if (s == 0) {
			zero = 1;
			s = 1;
		}
		if (!mul_ok(n, s, &n))
			return 0;
	}
	*lo = *hi = 0;
	if (zero)
		return 1;
	int64_t nbytes; /* the size in bytes must fit too (usm's byteWindow) */
	if (!mul_ok(n, itemsize, &nbytes))
		return 0;
	int64_t l = 0, h = 0;
	if (strides == NULL) {
		h = n - 1;
	} else {
		for (int32_t i = 0; i < ndim; i++) {
			int64_t d;
			if (!mul_ok(strides[i], shape[i] - 1, &d))
				return 0;
			if (d < 0 ? !add_ok(l, d, &l) : !add_ok(h, d, &h))
				return 0;
		}
	}
	if (!mul_ok(l, itemsize, &l) || !mul_ok(h, itemsize, &h) || !add_ok(h, itemsize, &h))
		return 0;
	int64_t len; /* the length must fit too (dpctl's nbytes is a Py_ssize_t) */
	if (__builtin_sub_overflow(h, l, &len) || len < 0)
		return 0;
	*lo = l;
	*hi = h;
	return 1;
}

int ubx_import_host(const void *m, int versioned, ubx_view *v, int64_t *dims, int32_t max_ndim)
{
	const ub_dl_tensor *t;
	uint64_t flags = UB_DL_FLAG_READ_ONLY; /* a legacy tensor cannot say it is writable */
	if (m == NULL)
		return 0;
	if (versioned) {
		const ub_dl_managed_versioned *mv = m;
		if (mv->version.major != 1)
			return 0;
		flags = mv->flags & UB_DL_FLAG_READ_ONLY;
		t = &mv->dl_tensor;
	} else {
		t = &((const ub_dl_managed *)m)->dl_tensor;
	}
	int32_t ndim = t->ndim;
	if (ndim < 0 || ndim > UBX_MAX_NDIM || ndim > max_ndim || (ndim > 0 && t->shape == NULL))
		return 0;
	ub_dl_dtype dt = t->dtype;
	if (dt.lanes != 1 || dt.code >= UBX_DTYPE_CODES || dt.bits % 8 != 0 || dt.bits / 8 >= UBX_DTYPE_BYTES)
		return 0;
	int64_t itemsize = ubx_dtype_size[dt.code][dt.bits / 8];
	if (itemsize == 0)
		return 0;
	/* Copied by loops: arrays have few dimensions, and memcpy of a
	 * variable size is a rep movs whose start costs more than the copy. */
	int64_t *shape = dims, *strides = dims + ndim;
	for (int32_t i = 0; i < ndim; i++)
		if ((shape[i] = t->shape[i]) < 0)
			return 0;
	const int64_t *given = NULL;
	if (ndim > 0 && t->strides != NULL) {
		for (int32_t i = 0; i < ndim; i++)
			strides[i] = t->strides[i];
		given = strides;
	}

	/* Placement (dlpack's place): data + byte_offset does not wrap, a
	 * non-empty tensor has data, and its bytes stay inside user space. */
	uintptr_t data = (uintptr_t)t->data;
	uint64_t bo = t->byte_offset;
	if (bo > (uint64_t)UINTPTR_MAX || data + (uintptr_t)bo < data)
		return 0;
	uintptr_t e0 = data + (uintptr_t)bo;
	int64_t lo, hi;
	if (!window(shape, given, ndim, itemsize, &lo, &hi))
		return 0;
	if (lo != hi) {
		if (data == 0)
			return 0;
		if (lo < 0 && (uint64_t)-lo > (uint64_t)e0)
			return 0;
		if (hi > 0 && (uint64_t)hi > (uint64_t)(UINTPTR_MAX - e0))
			return 0;
		if ((uint64_t)e0 + (uint64_t)hi > ubx_max_user_address)
			return 0;
	}
	if (t->device.device_type != UB_DL_CPU || t->device.device_id != 0)
		return 0;

	/* Export's form: strides always (C order when the producer gave none),
	 * data at element 0 unless a stride reaches below it. */
	if (ndim > 0 && given == NULL) {
		int64_t acc = 1;
		for (int32_t i = ndim - 1; i >= 0; i--) {
			strides[i] = acc;
			acc *= shape[i] > 1 ? shape[i] : 1;
		}
	}
	memset(v, 0, sizeof *v);
	v->t.data = (void *)e0;
	if (lo < 0) { /* only a non-empty window reaches below element 0 */
		v->t.data = (void *)(e0 - (uintptr_t)-lo);
		v->t.byte_offset = (uint64_t)-lo;
	}
	v->t.device = t->device;
	v->t.ndim = ndim;
	v->t.dtype = dt;
	v->t.shape = ndim > 0 ? shape : NULL;
	v->t.strides = ndim > 0 ? strides : NULL;
	v->flags = flags;
	return 1;
}
