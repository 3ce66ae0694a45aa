/*
 * fakeze: a Level Zero driver that runs on the host CPU, written for
 * usmbridge's tests. The real loader (Debian's libze1) loads it through
 * ZE_ENABLE_ALT_DRIVERS=/abs/path/libfakeze.so, so every call the Go code
 * makes goes through the loader (and, when enabled, its validation layer)
 * exactly as it would with Intel's driver.
 *
 * It is compiled at test time with `go env CC` against the installed
 * headers (libze-dev), so every struct and DDI-table layout comes from the
 * official headers, never from a hand copy:
 *
 *   cc -std=c11 -fPIC -shared -fvisibility=hidden -o libfakeze.so fakeze.c -lpthread
 *
 * Only the 53 *ProcAddrTable getters are exported (the headers mark them
 * ZE_DLLEXPORT; everything else is hidden). The loader refuses a driver
 * that lacks any of them.
 *
 * Behaviour follows what a real driver (NEO) does where the spec leaves
 * room (docs/native.md):
 *  - allocations live in a driver-wide registry; property queries accept
 *    interior pointers; an unknown pointer is SUCCESS + ZE_MEMORY_TYPE_UNKNOWN;
 *    GetAddressRange of an unknown pointer is ERROR_UNKNOWN;
 *  - immediate command lists execute each append before returning; regular
 *    lists record and are replayed by zeCommandQueueExecuteCommandLists.
 *    An immediate list created with ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS
 *    does not block the appending thread on a wait for an event that is
 *    not signalled: from that command on, its appends queue up in order
 *    (the list's backlog) and run when the event is signalled, by the host
 *    (zeEventHostSignal) or by another list, in the signalling thread. So
 *    tests can hold a list back, as real work would, and see whether
 *    anything waits on the host;
 *  - events are one atomic flag each; HostSynchronize spins with
 *    sched_yield so another thread's zeEventHostSignal releases it;
 *  - IPC works in-process only: the handle carries a tag, the pid and the
 *    base address;
 *  - modules are SPIR-V: zeModuleCreate checks the module's header and
 *    reads its entry points and their parameter counts (OpEntryPoint,
 *    OpFunction, OpFunctionParameter), and a module that is not SPIR-V
 *    fails the build with a build log saying why. It compiles nothing:
 *    zeKernelCreate makes only kernels it knows by name and runs with C
 *    code of its own (the kernels of internal/testutil/testdata/kernels.cl:
 *    saxpy, iota2d, fill, scale_add, empty), checking each argument's size,
 *    and any other entry point is UNSUPPORTED_FEATURE. A launch runs every
 *    work-item of the group count times the group size, in order, as a
 *    command of the list like a copy.
 * Newer DDI fields (pfnInitDrivers 1.10, pfnHostSynchronize and
 * pfnPutIpcHandle 1.6) are written only when the loader's version allows:
 * loader 1.8.12 passes 1.4-sized tables that must not be overrun.
 *
 * Test hooks are reached the official way, through
 * zeDriverGetExtensionFunctionAddress: "zexFakeGetStats" reports live
 * objects (for leak checks) and the version the loader asked for, and
 * "zexFakeFailNext" makes the next call of a named entry point fail, so
 * tests can break a multi-step operation halfway.
 */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zet_ddi.h>
#include <level_zero/zes_ddi.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 4

/* Every handle the fake gives out points to a struct starting with a tag,
 * so a handle of the wrong kind is refused instead of misread. */
enum tag {
    TAG_DRIVER = 0x44525652, TAG_DEVICE = 0x44455643, TAG_CONTEXT = 0x43545854,
    TAG_QUEUE = 0x51554555, TAG_LIST = 0x4c495354, TAG_POOL = 0x504f4f4c,
    TAG_EVENT = 0x45564e54, TAG_MODULE = 0x4d4f4455, TAG_KERNEL = 0x4b45524e,
    TAG_BUILDLOG = 0x424c4f47, TAG_DEAD = 0x44454144,
};

struct driver { uint32_t tag; };
struct device { uint32_t tag; uint32_t index; };
struct context { uint32_t tag; };

struct pool {
    uint32_t tag;
    uint32_t count, flags;
    atomic_int *state;  /* one flag per slot: 1 = signalled */
    uint8_t *used;      /* slot has a live event */
};
struct event { uint32_t tag; struct pool *pool; uint32_t index; };

enum op { OP_COPY, OP_FILL, OP_SIGNAL, OP_WAIT, OP_RESET, OP_BARRIER, OP_LAUNCH };
#define MAX_ARGS 8
struct known; /* a kernel the fake runs (see "modules and kernels") */
struct cmd {
    enum op op;
    void *dst; const void *src; size_t size;
    uint8_t pattern[128]; size_t pattern_size;
    struct event *ev;
    /* OP_LAUNCH: the kernel, a copy of its arguments, its range */
    const struct known *kern; uint64_t args[MAX_ARGS]; uint32_t group[3], count[3];
};
struct list {
    uint32_t tag;
    int immediate, closed;
    struct cmd *cmds; size_t n, cap;
    int async;                        /* immediate, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS */
    struct cmd *backlog; size_t bhead, bn, bcap; /* held back behind a wait (under prog) */
    struct list *next_pending;        /* in the pending chain while its backlog is not empty */
};
struct queue { uint32_t tag; };

static struct driver the_driver = {TAG_DRIVER};
static struct device devices[MAX_DEVICES];
static uint32_t num_devices = 1;

/* ---- global state: allocation registry and counters ------------------- */

struct alloc { uintptr_t base; size_t size; ze_memory_type_t type; uint64_t id; struct device *dev; int ipc_open; };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs; static size_t nallocs, capallocs;
static uint64_t next_id = 1;
static atomic_long live_contexts, live_queues, live_lists, live_pools, live_events, live_ipc;
static atomic_long live_modules, live_kernels, launches, module_creates;
static atomic_uint loader_version; /* what the loader passed to the getters */

/* zexFakeFailNext: pending injected failures. */
struct failure { char name[64]; ze_result_t result; int armed; };
static struct failure failures[8];

static ze_result_t injected(const char *name) {
    ze_result_t r = ZE_RESULT_SUCCESS;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 8; i++) {
        if (failures[i].armed && strcmp(failures[i].name, name) == 0) {
            failures[i].armed = 0;
            r = failures[i].result;
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    return r;
}
#define INJECT(name) do { ze_result_t r_ = injected(name); if (r_ != ZE_RESULT_SUCCESS) return r_; } while (0)

static ze_result_t fake_fail_next(const char *name, ze_result_t result) {
    if (!name || strlen(name) >= 64) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 8; i++) {
        if (!failures[i].armed) {
            strcpy(failures[i].name, name);
            failures[i].result = result;
            failures[i].armed = 1;
            pthread_mutex_unlock(&mu);
            return ZE_RESULT_SUCCESS;
        }
    }
    pthread_mutex_unlock(&mu);
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

/* zexFakeGetStats fills out[0..12]: allocations, contexts, queues, lists,
 * event pools, events, open IPC mappings, modules, kernels, the loader's
 * API version, the number of armed failures not yet triggered, the
 * kernel launches run so far, and the calls of zeModuleCreate so far
 * (whatever their module). */
static ze_result_t fake_get_stats(uint64_t *out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_mutex_lock(&mu);
    out[0] = nallocs;
    int armed = 0;
    for (int i = 0; i < 8; i++) armed += failures[i].armed;
    pthread_mutex_unlock(&mu);
    out[1] = (uint64_t)live_contexts; out[2] = (uint64_t)live_queues; out[3] = (uint64_t)live_lists;
    out[4] = (uint64_t)live_pools; out[5] = (uint64_t)live_events; out[6] = (uint64_t)live_ipc;
    out[7] = (uint64_t)live_modules; out[8] = (uint64_t)live_kernels;
    out[9] = loader_version; out[10] = (uint64_t)armed; out[11] = (uint64_t)launches;
    out[12] = (uint64_t)module_creates;
    return ZE_RESULT_SUCCESS;
}

/* find returns the allocation containing p (interior pointers too); the
 * caller holds mu. */
static struct alloc *find(uintptr_t p) {
    for (size_t i = 0; i < nallocs; i++)
        if (p >= allocs[i].base && p < allocs[i].base + allocs[i].size) return &allocs[i];
    return NULL;
}

static int is_device(ze_device_handle_t h) {
    for (uint32_t i = 0; i < num_devices; i++)
        if ((struct device *)h == &devices[i]) return 1;
    return 0;
}
static int is_context(ze_context_handle_t h) { return h && ((struct context *)h)->tag == TAG_CONTEXT; }

/* ---- global / driver / device ----------------------------------------- */

static ze_result_t fz_init(ze_init_flags_t flags) {
    /* A GPU driver serves "all" (0) and GPU_ONLY; VPU_ONLY is not us. */
    if (flags != 0 && !(flags & ZE_INIT_FLAG_GPU_ONLY)) return ZE_RESULT_ERROR_UNINITIALIZED;
    return ZE_RESULT_SUCCESS;
}

/* Mirror of ze_init_driver_type_desc_t (spec 1.10; absent from the 1.8
 * headers this file is compiled against). */
struct init_driver_type_desc { uint32_t stype; const void *pNext; uint32_t flags; };

static ze_result_t fz_init_drivers(uint32_t *count, ze_driver_handle_t *out, struct init_driver_type_desc *desc) {
    if (!count || !desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint32_t n = (desc->flags & 1u) ? 1 : 0; /* ZE_INIT_DRIVER_TYPE_FLAG_GPU */
    if (*count == 0 || !out) { *count = n; return ZE_RESULT_SUCCESS; }
    if (n && *count >= 1) out[0] = (ze_driver_handle_t)&the_driver;
    *count = n < *count ? n : *count;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_driver_get(uint32_t *count, ze_driver_handle_t *out) {
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*count == 0 || !out) { *count = 1; return ZE_RESULT_SUCCESS; }
    out[0] = (ze_driver_handle_t)&the_driver;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_driver_api_version(ze_driver_handle_t d, ze_api_version_t *v) {
    if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!v) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *v = ZE_API_VERSION_1_4;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_driver_props(ze_driver_handle_t d, ze_driver_properties_t *p) {
    if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (int i = 0; i < ZE_MAX_DRIVER_UUID_SIZE; i++) p->uuid.id[i] = (uint8_t)(0xf0 + i);
    p->driverVersion = 0x00010002;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_driver_ipc_props(ze_driver_handle_t d, ze_driver_ipc_properties_t *p) {
    if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = ZE_IPC_PROPERTY_FLAG_MEMORY;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_driver_ext_props(ze_driver_handle_t d, uint32_t *count, ze_driver_extension_properties_t *p) {
    (void)p;
    if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_driver_ext_fn(ze_driver_handle_t d, const char *name, void **fn) {
    if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!name || !fn) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (strcmp(name, "zexFakeGetStats") == 0) { *fn = (void *)fake_get_stats; return ZE_RESULT_SUCCESS; }
    if (strcmp(name, "zexFakeFailNext") == 0) { *fn = (void *)fake_fail_next; return ZE_RESULT_SUCCESS; }
    *fn = NULL;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

static ze_result_t fz_device_get(ze_driver_handle_t d, uint32_t *count, ze_device_handle_t *out) {
    if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*count == 0 || !out) { *count = num_devices; return ZE_RESULT_SUCCESS; }
    uint32_t n = *count < num_devices ? *count : num_devices;
    for (uint32_t i = 0; i < n; i++) out[i] = (ze_device_handle_t)&devices[i];
    *count = n;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_device_subdevices(ze_device_handle_t d, uint32_t *count, ze_device_handle_t *out) {
    (void)out;
    if (!is_device(d)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_device_props(ze_device_handle_t h, ze_device_properties_t *p) {
    if (!is_device(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct device *d = (struct device *)h;
    /* Keep stype and pNext as the caller set them; fill the payload. */
    p->type = ZE_DEVICE_TYPE_GPU;
    p->vendorId = 0x8086;
    p->deviceId = 0xfa4e;
    p->flags = 0;
    p->subdeviceId = 0;
    p->coreClockRate = 1000;
    p->maxMemAllocSize = (uint64_t)1 << 32;
    p->maxHardwareContexts = 64;
    p->maxCommandQueuePriority = 0;
    p->numThreadsPerEU = 8;
    p->physicalEUSimdWidth = 8;
    p->numEUsPerSubslice = 8;
    p->numSubslicesPerSlice = 1;
    p->numSlices = 1;
    p->timerResolution = 1;
    p->timestampValidBits = 64;
    p->kernelTimestampValidBits = 32;
    memset(p->uuid.id, 0, ZE_MAX_DEVICE_UUID_SIZE);
    memcpy(p->uuid.id, "fakeze-device-", 14);
    p->uuid.id[14] = (uint8_t)('0' + d->index);
    p->uuid.id[15] = 0x42;
    memset(p->name, 0, ZE_MAX_DEVICE_NAME);
    strcpy(p->name, "usmbridge fake GPU ");
    p->name[strlen(p->name)] = (char)('0' + d->index);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_device_mem_access(ze_device_handle_t h, ze_device_memory_access_properties_t *p) {
    if (!is_device(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    ze_memory_access_cap_flags_t rw = ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC;
    p->hostAllocCapabilities = rw;
    p->deviceAllocCapabilities = rw;
    p->sharedSingleDeviceAllocCapabilities = rw;
    p->sharedCrossDeviceAllocCapabilities = 0;
    p->sharedSystemAllocCapabilities = 0;
    return ZE_RESULT_SUCCESS;
}

/* ---- context ------------------------------------------------------------ */

static ze_result_t fz_context_create(ze_driver_handle_t d, const ze_context_desc_t *desc, ze_context_handle_t *out) {
    if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    INJECT("zeContextCreate");
    struct context *c = calloc(1, sizeof *c);
    if (!c) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    c->tag = TAG_CONTEXT;
    live_contexts++;
    *out = (ze_context_handle_t)c;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_context_destroy(ze_context_handle_t h) {
    if (!is_context(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    ((struct context *)h)->tag = TAG_DEAD;
    free(h);
    live_contexts--;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_context_status(ze_context_handle_t h) {
    return is_context(h) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

static ze_result_t fz_context_resident(ze_context_handle_t h, ze_device_handle_t d, void *p, size_t n) {
    (void)p; (void)n;
    if (!is_context(h) || !is_device(d)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return ZE_RESULT_SUCCESS;
}

/* ---- memory ------------------------------------------------------------- */

static ze_result_t do_alloc(const char *call, ze_context_handle_t ctx, size_t size, size_t align,
                            ze_device_handle_t dev, ze_memory_type_t type, void **out) {
    if (!is_context(ctx)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (dev && !is_device(dev)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (align & (align - 1)) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    if (size > ((size_t)1 << 40)) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    INJECT(call);
    void *p = NULL;
    if (posix_memalign(&p, align > 64 ? align : 64, size) != 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    pthread_mutex_lock(&mu);
    if (nallocs == capallocs) {
        size_t nc = capallocs ? 2 * capallocs : 16;
        struct alloc *na = realloc(allocs, nc * sizeof *na);
        if (!na) { pthread_mutex_unlock(&mu); free(p); return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY; }
        allocs = na; capallocs = nc;
    }
    allocs[nallocs++] = (struct alloc){(uintptr_t)p, size, type, next_id++, (struct device *)dev, 0};
    pthread_mutex_unlock(&mu);
    *out = p;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_alloc_host(ze_context_handle_t ctx, const ze_host_mem_alloc_desc_t *hd, size_t size, size_t align, void **out) {
    if (!hd) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return do_alloc("zeMemAllocHost", ctx, size, align, NULL, ZE_MEMORY_TYPE_HOST, out);
}

static ze_result_t fz_alloc_device(ze_context_handle_t ctx, const ze_device_mem_alloc_desc_t *dd, size_t size, size_t align,
                                   ze_device_handle_t dev, void **out) {
    if (!dd) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!dev) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return do_alloc("zeMemAllocDevice", ctx, size, align, dev, ZE_MEMORY_TYPE_DEVICE, out);
}

static ze_result_t fz_alloc_shared(ze_context_handle_t ctx, const ze_device_mem_alloc_desc_t *dd, const ze_host_mem_alloc_desc_t *hd,
                                   size_t size, size_t align, ze_device_handle_t dev, void **out) {
    if (!dd || !hd) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return do_alloc("zeMemAllocShared", ctx, size, align, dev, ZE_MEMORY_TYPE_SHARED, out);
}

static ze_result_t fz_free(ze_context_handle_t ctx, void *p) {
    if (!is_context(ctx)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    INJECT("zeMemFree");
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nallocs; i++) {
        if (allocs[i].base == (uintptr_t)p) {
            live_ipc -= allocs[i].ipc_open;
            allocs[i] = allocs[--nallocs];
            pthread_mutex_unlock(&mu);
            free(p);
            return ZE_RESULT_SUCCESS;
        }
    }
    pthread_mutex_unlock(&mu);
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

static ze_result_t fz_alloc_props(ze_context_handle_t ctx, const void *p, ze_memory_allocation_properties_t *props, ze_device_handle_t *dev) {
    if (!is_context(ctx)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!props) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_mutex_lock(&mu);
    struct alloc *a = find((uintptr_t)p);
    if (a) {
        props->type = a->type;
        props->id = a->id;
        props->pageSize = 4096;
        if (dev) *dev = a->type == ZE_MEMORY_TYPE_HOST ? NULL : (ze_device_handle_t)a->dev;
    } else {
        /* The spec: memory unrelated to the context is UNKNOWN, SUCCESS. */
        props->type = ZE_MEMORY_TYPE_UNKNOWN;
        props->id = 0;
        props->pageSize = 0;
        if (dev) *dev = NULL;
    }
    pthread_mutex_unlock(&mu);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_address_range(ze_context_handle_t ctx, const void *p, void **base, size_t *size) {
    if (!is_context(ctx)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    pthread_mutex_lock(&mu);
    struct alloc *a = find((uintptr_t)p);
    ze_result_t r = ZE_RESULT_ERROR_UNKNOWN; /* what NEO answers for foreign pointers */
    if (a) {
        if (base) *base = (void *)a->base;
        if (size) *size = a->size;
        r = ZE_RESULT_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

/* IPC handle bytes: "FAKEZEIP", pid (4), pad (4), base (8), id (8). */
struct ipc_payload { char magic[8]; int32_t pid; uint32_t pad; uint64_t base; uint64_t id; };
_Static_assert(sizeof(struct ipc_payload) <= ZE_MAX_IPC_HANDLE_SIZE, "IPC payload too large");

static ze_result_t fz_get_ipc(ze_context_handle_t ctx, const void *p, ze_ipc_mem_handle_t *h) {
    if (!is_context(ctx)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!p || !h) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    INJECT("zeMemGetIpcHandle");
    pthread_mutex_lock(&mu);
    struct alloc *a = find((uintptr_t)p);
    if (!a || a->base != (uintptr_t)p) { pthread_mutex_unlock(&mu); return ZE_RESULT_ERROR_INVALID_ARGUMENT; }
    struct ipc_payload pl = {{'F', 'A', 'K', 'E', 'Z', 'E', 'I', 'P'}, (int32_t)getpid(), 0, a->base, a->id};
    pthread_mutex_unlock(&mu);
    memset(h->data, 0, sizeof h->data);
    memcpy(h->data, &pl, sizeof pl);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t decode_ipc(ze_ipc_mem_handle_t h, struct alloc **out) {
    struct ipc_payload pl;
    memcpy(&pl, h.data, sizeof pl);
    if (memcmp(pl.magic, "FAKEZEIP", 8) != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (pl.pid != (int32_t)getpid()) return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* no cross-process IPC */
    struct alloc *a = find((uintptr_t)pl.base);
    if (!a || a->base != pl.base || a->id != pl.id) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = a;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_open_ipc(ze_context_handle_t ctx, ze_device_handle_t dev, ze_ipc_mem_handle_t h, ze_ipc_memory_flags_t flags, void **out) {
    (void)flags;
    if (!is_context(ctx) || !is_device(dev)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    INJECT("zeMemOpenIpcHandle");
    pthread_mutex_lock(&mu);
    struct alloc *a;
    ze_result_t r = decode_ipc(h, &a);
    if (r == ZE_RESULT_SUCCESS) {
        a->ipc_open++;
        live_ipc++;
        *out = (void *)a->base; /* deviation: a real driver maps a new address */
    }
    pthread_mutex_unlock(&mu);
    return r;
}

static ze_result_t fz_close_ipc(ze_context_handle_t ctx, const void *p) {
    if (!is_context(ctx)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    pthread_mutex_lock(&mu);
    struct alloc *a = find((uintptr_t)p);
    ze_result_t r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (a && a->base == (uintptr_t)p && a->ipc_open > 0) {
        a->ipc_open--;
        live_ipc--;
        r = ZE_RESULT_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

static ze_result_t fz_put_ipc(ze_context_handle_t ctx, ze_ipc_mem_handle_t h) {
    if (!is_context(ctx)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct ipc_payload pl;
    memcpy(&pl, h.data, sizeof pl);
    return memcmp(pl.magic, "FAKEZEIP", 8) == 0 ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* ---- events --------------------------------------------------------------- */

static void progress(void);

static int is_event(ze_event_handle_t h) { return h && ((struct event *)h)->tag == TAG_EVENT; }
static int signalled(struct event *e) { return atomic_load(&e->pool->state[e->index]) != 0; }
static void set_event(struct event *e, int v) { atomic_store(&e->pool->state[e->index], v); }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* wait_event spins, yielding the CPU, until e is signalled or timeout ns
 * pass (UINT64_MAX: forever; 0: poll once). */
static ze_result_t wait_event(struct event *e, uint64_t timeout) {
    if (signalled(e)) return ZE_RESULT_SUCCESS;
    if (timeout == 0) return ZE_RESULT_NOT_READY;
    uint64_t start = now_ns();
    for (;;) {
        sched_yield();
        if (signalled(e)) return ZE_RESULT_SUCCESS;
        if (timeout != UINT64_MAX && now_ns() - start >= timeout) return ZE_RESULT_NOT_READY;
    }
}

static ze_result_t fz_pool_create(ze_context_handle_t ctx, const ze_event_pool_desc_t *desc, uint32_t ndev, ze_device_handle_t *devs, ze_event_pool_handle_t *out) {
    if (!is_context(ctx)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < ndev; i++)
        if (!devs || !is_device(devs[i])) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    INJECT("zeEventPoolCreate");
    struct pool *p = calloc(1, sizeof *p);
    if (!p) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    p->state = calloc(desc->count, sizeof *p->state);
    p->used = calloc(desc->count, 1);
    if (!p->state || !p->used) { free(p->state); free(p->used); free(p); return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY; }
    p->tag = TAG_POOL; p->count = desc->count; p->flags = desc->flags;
    live_pools++;
    *out = (ze_event_pool_handle_t)p;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_pool_destroy(ze_event_pool_handle_t h) {
    struct pool *p = (struct pool *)h;
    if (!p || p->tag != TAG_POOL) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    for (uint32_t i = 0; i < p->count; i++)
        if (p->used[i]) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    p->tag = TAG_DEAD;
    free(p->state); free(p->used); free(p);
    live_pools--;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_event_create(ze_event_pool_handle_t h, const ze_event_desc_t *desc, ze_event_handle_t *out) {
    struct pool *p = (struct pool *)h;
    if (!p || p->tag != TAG_POOL) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->index >= p->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (p->used[desc->index]) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    INJECT("zeEventCreate");
    struct event *e = calloc(1, sizeof *e);
    if (!e) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    e->tag = TAG_EVENT; e->pool = p; e->index = desc->index;
    p->used[desc->index] = 1;
    atomic_store(&p->state[desc->index], 0);
    live_events++;
    *out = (ze_event_handle_t)e;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_event_destroy(ze_event_handle_t h) {
    if (!is_event(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct event *e = (struct event *)h;
    e->pool->used[e->index] = 0;
    e->tag = TAG_DEAD;
    free(e);
    live_events--;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_event_signal(ze_event_handle_t h) {
    if (!is_event(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    set_event((struct event *)h, 1);
    progress(); /* lists held back on it run now */
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_event_sync(ze_event_handle_t h, uint64_t timeout) {
    if (!is_event(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return wait_event((struct event *)h, timeout);
}

static ze_result_t fz_event_query(ze_event_handle_t h) {
    if (!is_event(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return signalled((struct event *)h) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t fz_event_reset(ze_event_handle_t h) {
    if (!is_event(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    set_event((struct event *)h, 0);
    return ZE_RESULT_SUCCESS;
}

/* ---- command lists and queues ------------------------------------------- */

static int is_list(ze_command_list_handle_t h) { return h && ((struct list *)h)->tag == TAG_LIST; }

/* prog guards every backlog and the chain of lists that have one. It is
 * never held while a synchronous append spins in wait_event. */
static pthread_mutex_t prog = PTHREAD_MUTEX_INITIALIZER;
static struct list *pending;

static int blocked(const struct cmd *c) { return c->op == OP_WAIT && !atomic_load(&c->ev->pool->state[c->ev->index]); }
static void run(const struct cmd *c);
static void run_launch(const struct cmd *c);

/* progress_locked runs what the backlogs can run now, until nothing moves
 * (a command that signals may release another list). */
static void progress_locked(void) {
    for (int moved = 1; moved;) {
        moved = 0;
        for (struct list **pp = &pending; *pp;) {
            struct list *l = *pp;
            while (l->bhead < l->bn && !blocked(&l->backlog[l->bhead])) {
                run(&l->backlog[l->bhead++]);
                moved = 1;
            }
            if (l->bhead == l->bn) {
                l->bhead = l->bn = 0;
                *pp = l->next_pending;
                l->next_pending = NULL;
            } else {
                pp = &l->next_pending;
            }
        }
    }
}

static void progress(void) {
    pthread_mutex_lock(&prog);
    progress_locked();
    pthread_mutex_unlock(&prog);
}

/* defer_locked appends c to l's backlog and puts l on the chain. */
static ze_result_t defer_locked(struct list *l, struct cmd c) {
    if (l->bn == l->bcap) {
        size_t nc = l->bcap ? 2 * l->bcap : 8;
        struct cmd *n = realloc(l->backlog, nc * sizeof *n);
        if (!n) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        l->backlog = n; l->bcap = nc;
    }
    if (l->bn == l->bhead) { /* was empty: join the chain */
        l->next_pending = pending;
        pending = l;
    }
    l->backlog[l->bn++] = c;
    return ZE_RESULT_SUCCESS;
}

/* unchain_locked takes l off the chain (before it is destroyed). */
static void unchain_locked(struct list *l) {
    for (struct list **pp = &pending; *pp; pp = &(*pp)->next_pending)
        if (*pp == l) { *pp = l->next_pending; break; }
    free(l->backlog);
}

static void run(const struct cmd *c) {
    switch (c->op) {
    case OP_COPY: memmove(c->dst, c->src, c->size); break;
    case OP_FILL:
        for (size_t off = 0; off < c->size; off += c->pattern_size) {
            size_t n = c->size - off < c->pattern_size ? c->size - off : c->pattern_size;
            memcpy((uint8_t *)c->dst + off, c->pattern, n);
        }
        break;
    case OP_SIGNAL: set_event(c->ev, 1); break;
    case OP_WAIT: wait_event(c->ev, UINT64_MAX); break;
    case OP_RESET: set_event(c->ev, 0); break;
    case OP_BARRIER: break; /* everything before it has already run */
    case OP_LAUNCH: run_launch(c); break;
    }
}

/* push executes c on an immediate list, or records it on a regular one. */
static ze_result_t push(struct list *l, struct cmd c) {
    if (l->immediate && l->async) {
        pthread_mutex_lock(&prog);
        ze_result_t r = ZE_RESULT_SUCCESS;
        if (l->bn > l->bhead || blocked(&c)) r = defer_locked(l, c);
        else run(&c);
        progress_locked();
        pthread_mutex_unlock(&prog);
        return r;
    }
    if (l->immediate) {
        run(&c);
        if (c.op == OP_SIGNAL) progress();
        return ZE_RESULT_SUCCESS;
    }
    if (l->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 8;
        struct cmd *n = realloc(l->cmds, nc * sizeof *n);
        if (!n) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        l->cmds = n; l->cap = nc;
    }
    l->cmds[l->n++] = c;
    return ZE_RESULT_SUCCESS;
}

/* append wraps an operation with its wait list and signal event, the
 * pattern every zeCommandListAppend* shares. */
static ze_result_t append(ze_command_list_handle_t h, struct cmd op, ze_event_handle_t sig, uint32_t nwait, ze_event_handle_t *waits) {
    if (!is_list(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (sig && !is_event(sig)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (nwait && !waits) return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < nwait; i++)
        if (!is_event(waits[i])) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct list *l = (struct list *)h;
    ze_result_t r;
    for (uint32_t i = 0; i < nwait; i++)
        if ((r = push(l, (struct cmd){.op = OP_WAIT, .ev = (struct event *)waits[i]})) != ZE_RESULT_SUCCESS) return r;
    if ((r = push(l, op)) != ZE_RESULT_SUCCESS) return r;
    if (sig) return push(l, (struct cmd){.op = OP_SIGNAL, .ev = (struct event *)sig});
    return ZE_RESULT_SUCCESS;
}

static ze_result_t new_list(ze_context_handle_t ctx, ze_device_handle_t dev, int immediate, ze_command_list_handle_t *out) {
    if (!is_context(ctx) || !is_device(dev)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    INJECT(immediate ? "zeCommandListCreateImmediate" : "zeCommandListCreate");
    struct list *l = calloc(1, sizeof *l);
    if (!l) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    l->tag = TAG_LIST; l->immediate = immediate;
    live_lists++;
    *out = (ze_command_list_handle_t)l;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_list_create(ze_context_handle_t ctx, ze_device_handle_t dev, const ze_command_list_desc_t *desc, ze_command_list_handle_t *out) {
    if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return new_list(ctx, dev, 0, out);
}

static ze_result_t fz_list_create_imm(ze_context_handle_t ctx, ze_device_handle_t dev, const ze_command_queue_desc_t *desc, ze_command_list_handle_t *out) {
    if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    ze_result_t r = new_list(ctx, dev, 1, out);
    if (r == ZE_RESULT_SUCCESS) ((struct list *)*out)->async = desc->mode == ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    return r;
}

static ze_result_t fz_list_destroy(ze_command_list_handle_t h) {
    if (!is_list(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct list *l = (struct list *)h;
    pthread_mutex_lock(&prog);
    unchain_locked(l);
    pthread_mutex_unlock(&prog);
    l->tag = TAG_DEAD;
    free(l->cmds); free(l);
    live_lists--;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_list_close(ze_command_list_handle_t h) {
    if (!is_list(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    ((struct list *)h)->closed = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_list_reset(ze_command_list_handle_t h) {
    if (!is_list(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct list *l = (struct list *)h;
    l->closed = 0; l->n = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_append_copy(ze_command_list_handle_t h, void *dst, const void *src, size_t size, ze_event_handle_t sig, uint32_t nwait, ze_event_handle_t *waits) {
    if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    INJECT("zeCommandListAppendMemoryCopy");
    return append(h, (struct cmd){.op = OP_COPY, .dst = dst, .src = src, .size = size}, sig, nwait, waits);
}

static ze_result_t fz_append_fill(ze_command_list_handle_t h, void *ptr, const void *pattern, size_t psize, size_t size, ze_event_handle_t sig, uint32_t nwait, ze_event_handle_t *waits) {
    if (!ptr || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (psize == 0 || psize > 128 || (psize & (psize - 1))) return ZE_RESULT_ERROR_INVALID_SIZE;
    struct cmd c = {.op = OP_FILL, .dst = ptr, .size = size, .pattern_size = psize};
    memcpy(c.pattern, pattern, psize);
    return append(h, c, sig, nwait, waits);
}

static ze_result_t fz_append_barrier(ze_command_list_handle_t h, ze_event_handle_t sig, uint32_t nwait, ze_event_handle_t *waits) {
    INJECT("zeCommandListAppendBarrier");
    return append(h, (struct cmd){.op = OP_BARRIER}, sig, nwait, waits);
}

static ze_result_t fz_append_signal(ze_command_list_handle_t h, ze_event_handle_t ev) {
    if (!is_event(ev)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return append(h, (struct cmd){.op = OP_SIGNAL, .ev = (struct event *)ev}, NULL, 0, NULL);
}

static ze_result_t fz_append_wait(ze_command_list_handle_t h, uint32_t n, ze_event_handle_t *evs) {
    return append(h, (struct cmd){.op = OP_BARRIER}, NULL, n, evs);
}

static ze_result_t fz_append_reset(ze_command_list_handle_t h, ze_event_handle_t ev) {
    if (!is_event(ev)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return append(h, (struct cmd){.op = OP_RESET, .ev = (struct event *)ev}, NULL, 0, NULL);
}

/* zeCommandListHostSynchronize (spec 1.6): immediate lists only. */
static ze_result_t fz_list_host_sync(ze_command_list_handle_t h, uint64_t timeout) {
    if (!is_list(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct list *l = (struct list *)h;
    if (!l->immediate) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    uint64_t start = now_ns();
    for (;;) { /* until the backlog has run */
        pthread_mutex_lock(&prog);
        int empty = l->bn == l->bhead;
        pthread_mutex_unlock(&prog);
        if (empty) return ZE_RESULT_SUCCESS;
        if (timeout != UINT64_MAX && now_ns() - start >= timeout) return ZE_RESULT_NOT_READY;
        sched_yield();
    }
}

static ze_result_t fz_queue_create(ze_context_handle_t ctx, ze_device_handle_t dev, const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *out) {
    if (!is_context(ctx) || !is_device(dev)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    INJECT("zeCommandQueueCreate");
    struct queue *q = calloc(1, sizeof *q);
    if (!q) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    q->tag = TAG_QUEUE;
    live_queues++;
    *out = (ze_command_queue_handle_t)q;
    return ZE_RESULT_SUCCESS;
}

static int is_queue(ze_command_queue_handle_t h) { return h && ((struct queue *)h)->tag == TAG_QUEUE; }

static ze_result_t fz_queue_destroy(ze_command_queue_handle_t h) {
    if (!is_queue(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    ((struct queue *)h)->tag = TAG_DEAD;
    free(h);
    live_queues--;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_queue_execute(ze_command_queue_handle_t h, uint32_t n, ze_command_list_handle_t *lists, ze_fence_handle_t fence) {
    (void)fence;
    if (!is_queue(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (n == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (!lists) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < n; i++) {
        if (!is_list(lists[i])) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        struct list *l = (struct list *)lists[i];
        if (l->immediate || !l->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct list *l = (struct list *)lists[i];
        for (size_t j = 0; j < l->n; j++) run(&l->cmds[j]);
    }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_queue_sync(ze_command_queue_handle_t h, uint64_t timeout) {
    (void)timeout;
    return is_queue(h) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE; /* work ran in Execute */
}

/* ---- modules and kernels ------------------------------------------------ */

/* The kernels the fake runs, by name, with the size of each argument:
 * internal/testutil/testdata/kernels.cl in C, one work-item per call. */
typedef void (*item_fn)(const uint64_t *args, uint32_t i, uint32_t j, uint32_t k);

static float f32(uint64_t v) { float f; uint32_t u = (uint32_t)v; memcpy(&f, &u, 4); return f; }

static void k_saxpy(const uint64_t *a, uint32_t i, uint32_t j, uint32_t k) {
    (void)j; (void)k;
    const float *x = (const float *)(uintptr_t)a[1];
    float *y = (float *)(uintptr_t)a[3];
    int64_t sx = (int64_t)a[2], sy = (int64_t)a[4];
    y[(int64_t)i * sy] += f32(a[0]) * x[(int64_t)i * sx];
}
static void k_iota2d(const uint64_t *a, uint32_t i, uint32_t j, uint32_t k) {
    (void)k;
    int32_t *out = (int32_t *)(uintptr_t)a[0];
    int32_t w = (int32_t)a[1], add = (int32_t)a[2];
    out[(int64_t)j * w + i] = 1000 * (int32_t)j + (int32_t)i + add;
}
static void k_fill(const uint64_t *a, uint32_t i, uint32_t j, uint32_t k) {
    (void)j; (void)k;
    ((float *)(uintptr_t)a[0])[i] = f32(a[1]);
}
static void k_scale_add(const uint64_t *a, uint32_t i, uint32_t j, uint32_t k) {
    (void)j; (void)k;
    float *y = (float *)(uintptr_t)a[0];
    y[i] = y[i] * f32(a[1]) + f32(a[2]);
}
static void k_empty(const uint64_t *a, uint32_t i, uint32_t j, uint32_t k) { (void)a; (void)i; (void)j; (void)k; }

struct known { const char *name; item_fn fn; uint32_t nargs; uint32_t size[MAX_ARGS]; };
static const struct known knowns[] = {
    {"saxpy", k_saxpy, 5, {4, 8, 8, 8, 8}},
    {"iota2d", k_iota2d, 3, {8, 4, 4}},
    {"fill", k_fill, 2, {8, 4}},
    {"scale_add", k_scale_add, 3, {8, 4, 4}},
    {"empty", k_empty, 0, {0}},
};

#define MAX_ENTRIES 32
struct entry { char name[64]; uint32_t nparams; };
struct module { uint32_t tag; uint32_t n; struct entry e[MAX_ENTRIES]; atomic_int kernels; };
struct kernel {
    uint32_t tag;
    struct module *m;
    const struct known *k;
    uint64_t args[MAX_ARGS]; uint32_t set; /* bit i: argument i was set */
    uint32_t group[3];
};
struct buildlog { uint32_t tag; char text[256]; };

static int is_module(ze_module_handle_t h) { return h && ((struct module *)h)->tag == TAG_MODULE; }
static int is_kernel(ze_kernel_handle_t h) { return h && ((struct kernel *)h)->tag == TAG_KERNEL; }

static struct buildlog *new_log(const char *text) {
    struct buildlog *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->tag = TAG_BUILDLOG;
    snprintf(l->text, sizeof l->text, "%s", text);
    return l;
}

/* parse reads the entry points of a SPIR-V module and the number of
 * parameters of their functions; an error text if it is not SPIR-V. */
static const char *parse(const uint8_t *b, size_t n, struct module *m) {
    if (n < 20 || n % 4) return "fakeze: not a SPIR-V module (its size is not a whole number of words past the header)";
    const uint32_t *w = (const uint32_t *)b;
    size_t nw = n / 4;
    if (w[0] != 0x07230203) return "fakeze: not a SPIR-V module (bad magic number)";
    uint32_t ids[MAX_ENTRIES];
    uint32_t fn = 0, params = 0;
    for (size_t i = 5; i < nw;) {
        uint32_t len = w[i] >> 16, op = w[i] & 0xffff;
        if (len == 0 || i + len > nw) return "fakeze: SPIR-V instruction runs past the end of the module";
        if (op == 15 && len >= 4 && m->n < MAX_ENTRIES) { /* OpEntryPoint model id name... */
            size_t max = (len - 3) * 4;
            const char *name = (const char *)&w[i + 3];
            size_t k = 0;
            while (k < max && name[k]) k++;
            if (k == max || k >= sizeof m->e[0].name) return "fakeze: SPIR-V entry point name is not terminated";
            memcpy(m->e[m->n].name, name, k + 1);
            ids[m->n++] = w[i + 2];
        } else if (op == 54 && len >= 3) { /* OpFunction type result ... */
            fn = w[i + 2]; params = 0;
        } else if (op == 55) { /* OpFunctionParameter */
            params++;
        } else if (op == 56) { /* OpFunctionEnd */
            for (uint32_t e = 0; e < m->n; e++)
                if (ids[e] == fn) m->e[e].nparams = params;
            fn = 0;
        }
        i += len;
    }
    if (m->n == 0) return "fakeze: the SPIR-V module has no entry point";
    return NULL;
}

static ze_result_t fz_module_create(ze_context_handle_t ctx, ze_device_handle_t dev, const ze_module_desc_t *desc,
                                    ze_module_handle_t *out, ze_module_build_log_handle_t *log) {
    module_creates++;
    if (!is_context(ctx) || !is_device(dev)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!desc || !out || !desc->pInputModule) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (log) *log = NULL;
    if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    INJECT("zeModuleCreate");
    struct module *m = calloc(1, sizeof *m);
    if (!m) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    const char *why = parse(desc->pInputModule, desc->inputSize, m);
    if (!why && desc->pBuildFlags && strstr(desc->pBuildFlags, "-fakeze-fail"))
        why = "fakeze: build failed: -fakeze-fail given";
    if (why) {
        free(m);
        if (log) *log = (ze_module_build_log_handle_t)new_log(why);
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    m->tag = TAG_MODULE;
    live_modules++;
    *out = (ze_module_handle_t)m;
    if (log) *log = (ze_module_build_log_handle_t)new_log("");
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_module_destroy(ze_module_handle_t h) {
    if (!is_module(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct module *m = (struct module *)h;
    if (atomic_load(&m->kernels)) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    m->tag = TAG_DEAD;
    free(m);
    live_modules--;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_log_destroy(ze_module_build_log_handle_t h) {
    struct buildlog *l = (struct buildlog *)h;
    if (!l || l->tag != TAG_BUILDLOG) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    l->tag = TAG_DEAD;
    free(l);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_log_string(ze_module_build_log_handle_t h, size_t *size, char *out) {
    struct buildlog *l = (struct buildlog *)h;
    if (!l || l->tag != TAG_BUILDLOG) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    size_t n = strlen(l->text) + 1;
    if (!out) { *size = n; return ZE_RESULT_SUCCESS; }
    if (*size < n) return ZE_RESULT_ERROR_INVALID_SIZE;
    memcpy(out, l->text, n);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_kernel_create(ze_module_handle_t h, const ze_kernel_desc_t *desc, ze_kernel_handle_t *out) {
    if (!is_module(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!desc || !out || !desc->pKernelName) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct module *m = (struct module *)h;
    const struct entry *e = NULL;
    for (uint32_t i = 0; i < m->n; i++)
        if (strcmp(m->e[i].name, desc->pKernelName) == 0) e = &m->e[i];
    if (!e) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    const struct known *k = NULL;
    for (size_t i = 0; i < sizeof knowns / sizeof knowns[0]; i++)
        if (strcmp(knowns[i].name, e->name) == 0 && knowns[i].nargs == e->nparams) k = &knowns[i];
    if (!k) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* a kernel the fake cannot run */
    struct kernel *kn = calloc(1, sizeof *kn);
    if (!kn) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    kn->tag = TAG_KERNEL; kn->m = m; kn->k = k;
    kn->group[0] = kn->group[1] = kn->group[2] = 1;
    atomic_fetch_add(&m->kernels, 1);
    live_kernels++;
    *out = (ze_kernel_handle_t)kn;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_kernel_destroy(ze_kernel_handle_t h) {
    if (!is_kernel(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct kernel *k = (struct kernel *)h;
    atomic_fetch_sub(&k->m->kernels, 1);
    k->tag = TAG_DEAD;
    free(k);
    live_kernels--;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_kernel_group_size(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z) {
    if (!is_kernel(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!x || !y || !z || (uint64_t)x * y * z > 1024) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    struct kernel *k = (struct kernel *)h;
    k->group[0] = x; k->group[1] = y; k->group[2] = z;
    return ZE_RESULT_SUCCESS;
}

/* suggest: the largest power of two up to 256 that divides the extent. */
static uint32_t suggest(uint32_t n) {
    uint32_t g = 1;
    while (g < 256 && n % (g * 2) == 0) g *= 2;
    return g;
}

static ze_result_t fz_kernel_suggest(ze_kernel_handle_t h, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t *x, uint32_t *y, uint32_t *z) {
    if (!is_kernel(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!x || !y || !z) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!gx || !gy || !gz) return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
    *x = suggest(gx); *y = suggest(gy); *z = suggest(gz);
    while ((uint64_t)*x * *y * *z > 1024) { if (*z > 1) *z /= 2; else if (*y > 1) *y /= 2; else *x /= 2; }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_kernel_arg(ze_kernel_handle_t h, uint32_t i, size_t size, const void *v) {
    if (!is_kernel(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct kernel *k = (struct kernel *)h;
    if (i >= k->k->nargs) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    if (size != k->k->size[i]) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    if (!v) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint64_t x = 0;
    memcpy(&x, v, size);
    k->args[i] = x;
    k->set |= 1u << i;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fz_kernel_props(ze_kernel_handle_t h, ze_kernel_properties_t *p) {
    if (!is_kernel(h)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct kernel *k = (struct kernel *)h;
    p->numKernelArgs = k->k->nargs;
    p->requiredGroupSizeX = p->requiredGroupSizeY = p->requiredGroupSizeZ = 0;
    p->maxSubgroupSize = 8;
    return ZE_RESULT_SUCCESS;
}

static void run_launch(const struct cmd *c) {
    uint32_t n[3];
    for (int d = 0; d < 3; d++) n[d] = c->group[d] * c->count[d];
    for (uint32_t kk = 0; kk < n[2]; kk++)
        for (uint32_t j = 0; j < n[1]; j++)
            for (uint32_t i = 0; i < n[0]; i++) c->kern->fn(c->args, i, j, kk);
    launches++;
}

static ze_result_t fz_append_launch(ze_command_list_handle_t h, ze_kernel_handle_t kh, const ze_group_count_t *count,
                                    ze_event_handle_t sig, uint32_t nwait, ze_event_handle_t *waits) {
    if (!is_kernel(kh)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct kernel *k = (struct kernel *)kh;
    if (k->set != (1u << k->k->nargs) - 1) return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* an argument never set */
    INJECT("zeCommandListAppendLaunchKernel");
    struct cmd c = {.op = OP_LAUNCH, .kern = k->k};
    memcpy(c.args, k->args, sizeof c.args);
    memcpy(c.group, k->group, sizeof c.group);
    c.count[0] = count->groupCountX; c.count[1] = count->groupCountY; c.count[2] = count->groupCountZ;
    return append(h, c, sig, nwait, waits);
}

/* ---- DDI table getters ---------------------------------------------------- */

static void note_version(ze_api_version_t v) { atomic_store(&loader_version, (unsigned)v); }

static void setup_devices(void) {
    const char *env = getenv("FAKEZE_DEVICES");
    if (env && env[0] >= '1' && env[0] <= '0' + MAX_DEVICES && env[1] == 0) num_devices = (uint32_t)(env[0] - '0');
    for (uint32_t i = 0; i < MAX_DEVICES; i++) devices[i] = (struct device){TAG_DEVICE, i};
}

#define CHECK_ARGS(t) do { if (!(t)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER; if (ZE_MAJOR_VERSION(version) != 1) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION; } while (0)

/* The appended fields are addressed through wrappers whose prefix is the
 * 1.4 table from the installed headers. */
struct global_table_1_10 { ze_global_dditable_t v1_4; void *pfnInitDrivers; };
struct list_table_1_6 { ze_command_list_dditable_t v1_4; void *pfnHostSynchronize; };
struct mem_table_1_6 { ze_mem_dditable_t v1_4; void *pfnPutIpcHandle; };

ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version, ze_global_dditable_t *t) {
    CHECK_ARGS(t);
    note_version(version);
    setup_devices();
    t->pfnInit = fz_init;
    if (version >= ZE_MAKE_VERSION(1, 10)) ((struct global_table_1_10 *)t)->pfnInitDrivers = (void *)fz_init_drivers;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version, ze_driver_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnGet = fz_driver_get;
    t->pfnGetApiVersion = fz_driver_api_version;
    t->pfnGetProperties = fz_driver_props;
    t->pfnGetIpcProperties = fz_driver_ipc_props;
    t->pfnGetExtensionProperties = fz_driver_ext_props;
    t->pfnGetExtensionFunctionAddress = fz_driver_ext_fn;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version, ze_device_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnGet = fz_device_get;
    t->pfnGetSubDevices = fz_device_subdevices;
    t->pfnGetProperties = fz_device_props;
    t->pfnGetMemoryAccessProperties = fz_device_mem_access;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version, ze_context_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnCreate = fz_context_create;
    t->pfnDestroy = fz_context_destroy;
    t->pfnGetStatus = fz_context_status;
    t->pfnMakeMemoryResident = fz_context_resident;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetCommandQueueProcAddrTable(ze_api_version_t version, ze_command_queue_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnCreate = fz_queue_create;
    t->pfnDestroy = fz_queue_destroy;
    t->pfnExecuteCommandLists = fz_queue_execute;
    t->pfnSynchronize = fz_queue_sync;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t version, ze_command_list_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnCreate = fz_list_create;
    t->pfnCreateImmediate = fz_list_create_imm;
    t->pfnDestroy = fz_list_destroy;
    t->pfnClose = fz_list_close;
    t->pfnReset = fz_list_reset;
    t->pfnAppendBarrier = fz_append_barrier;
    t->pfnAppendMemoryCopy = fz_append_copy;
    t->pfnAppendMemoryFill = fz_append_fill;
    t->pfnAppendSignalEvent = fz_append_signal;
    t->pfnAppendWaitOnEvents = fz_append_wait;
    t->pfnAppendEventReset = fz_append_reset;
    t->pfnAppendLaunchKernel = fz_append_launch;
    if (version >= ZE_MAKE_VERSION(1, 6)) ((struct list_table_1_6 *)t)->pfnHostSynchronize = (void *)fz_list_host_sync;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t version, ze_event_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnCreate = fz_event_create;
    t->pfnDestroy = fz_event_destroy;
    t->pfnHostSignal = fz_event_signal;
    t->pfnHostSynchronize = fz_event_sync;
    t->pfnQueryStatus = fz_event_query;
    t->pfnHostReset = fz_event_reset;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t version, ze_event_pool_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnCreate = fz_pool_create;
    t->pfnDestroy = fz_pool_destroy;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t version, ze_mem_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnAllocShared = fz_alloc_shared;
    t->pfnAllocDevice = fz_alloc_device;
    t->pfnAllocHost = fz_alloc_host;
    t->pfnFree = fz_free;
    t->pfnGetAllocProperties = fz_alloc_props;
    t->pfnGetAddressRange = fz_address_range;
    t->pfnGetIpcHandle = fz_get_ipc;
    t->pfnOpenIpcHandle = fz_open_ipc;
    t->pfnCloseIpcHandle = fz_close_ipc;
    if (version >= ZE_MAKE_VERSION(1, 6)) ((struct mem_table_1_6 *)t)->pfnPutIpcHandle = (void *)fz_put_ipc;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetModuleProcAddrTable(ze_api_version_t version, ze_module_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnCreate = fz_module_create;
    t->pfnDestroy = fz_module_destroy;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetModuleBuildLogProcAddrTable(ze_api_version_t version, ze_module_build_log_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnDestroy = fz_log_destroy;
    t->pfnGetString = fz_log_string;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetKernelProcAddrTable(ze_api_version_t version, ze_kernel_dditable_t *t) {
    CHECK_ARGS(t);
    t->pfnCreate = fz_kernel_create;
    t->pfnDestroy = fz_kernel_destroy;
    t->pfnSetGroupSize = fz_kernel_group_size;
    t->pfnSuggestGroupSize = fz_kernel_suggest;
    t->pfnSetArgumentValue = fz_kernel_arg;
    t->pfnGetProperties = fz_kernel_props;
    return ZE_RESULT_SUCCESS;
}

/* The remaining getters hand back empty tables: the loader requires every
 * one of them to exist, and reports UNSUPPORTED_FEATURE for NULL slots. */
#define STUB(name, table) \
    ze_result_t ZE_APICALL name(ze_api_version_t version, table *t) { CHECK_ARGS(t); return ZE_RESULT_SUCCESS; }

STUB(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
STUB(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
STUB(zeGetFenceProcAddrTable, ze_fence_dditable_t)
STUB(zeGetImageProcAddrTable, ze_image_dditable_t)
STUB(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
STUB(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
STUB(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
STUB(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
STUB(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
STUB(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
STUB(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)

STUB(zetGetDeviceProcAddrTable, zet_device_dditable_t)
STUB(zetGetContextProcAddrTable, zet_context_dditable_t)
STUB(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
STUB(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
STUB(zetGetModuleProcAddrTable, zet_module_dditable_t)
STUB(zetGetDebugProcAddrTable, zet_debug_dditable_t)
STUB(zetGetMetricProcAddrTable, zet_metric_dditable_t)
STUB(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
STUB(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
STUB(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
STUB(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
STUB(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
STUB(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)

STUB(zesGetDeviceProcAddrTable, zes_device_dditable_t)
STUB(zesGetDriverProcAddrTable, zes_driver_dditable_t)
STUB(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
STUB(zesGetEngineProcAddrTable, zes_engine_dditable_t)
STUB(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
STUB(zesGetFanProcAddrTable, zes_fan_dditable_t)
STUB(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
STUB(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
STUB(zesGetLedProcAddrTable, zes_led_dditable_t)
STUB(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
STUB(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
STUB(zesGetPowerProcAddrTable, zes_power_dditable_t)
STUB(zesGetPsuProcAddrTable, zes_psu_dditable_t)
STUB(zesGetRasProcAddrTable, zes_ras_dditable_t)
STUB(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
STUB(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
STUB(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
