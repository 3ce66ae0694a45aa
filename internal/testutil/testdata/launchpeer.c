/*
 * The peers of the kernel launch benchmarks: each runtime's own launch of
 * an empty kernel, called from C in a loop, as a C program would. Each
 * function runs iters launches, each waited for and its event released,
 * through the entry points the Go benchmark passes in (resolved from the
 * same libraries usmbridge uses), so both sides run on the very same
 * runtime objects. Built at test time by testutil.BuildLaunchPeer. Two
 * more peers of the same kind are here: the runtime calls the extent
 * check of a SUAI import makes (peer_cl_alloc_info), and dpctl's own
 * host wait on a queue (peer_dpctl_queue_wait).
 */
#include <stddef.h>
#include <stdint.h>

typedef int32_t (*cl_enqueue_fn)(void *q, void *k, uint32_t dims, const size_t *off, const size_t *global,
                                 const size_t *local, uint32_t nwait, const void *wait, void **ev);
typedef int32_t (*cl_wait_fn)(uint32_t n, void *const *evs);
typedef int32_t (*cl_release_fn)(void *ev);

/* OpenCL: clEnqueueNDRangeKernel over one work-item, clWaitForEvents,
 * clReleaseEvent. Returns the first error, else 0. */
int32_t peer_cl_launch(cl_enqueue_fn enqueue, cl_wait_fn wait, cl_release_fn release, void *q, void *k, long iters) {
    size_t global = 1;
    for (long i = 0; i < iters; i++) {
        void *ev = NULL;
        int32_t r = enqueue(q, k, 1, NULL, &global, NULL, 0, NULL, &ev);
        if (r) return r;
        if ((r = wait(1, &ev))) return r;
        if ((r = release(ev))) return r;
    }
    return 0;
}

typedef struct { uint32_t x, y, z; } group_count;
typedef uint32_t (*ze_append_fn)(void *list, void *k, const group_count *count, void *signal, uint32_t nwait, void *waits);
typedef uint32_t (*ze_sync_fn)(void *ev, uint64_t timeout);
typedef uint32_t (*ze_reset_fn)(void *ev);

/* Level Zero: zeCommandListAppendLaunchKernel of one group signalling ev,
 * zeEventHostSynchronize, zeEventHostReset; with no ev (a synchronous
 * list, whose append returns once the launch is done), the append alone. */
uint32_t peer_ze_launch(ze_append_fn append, ze_sync_fn sync, ze_reset_fn reset, void *list, void *k, void *ev, long iters) {
    group_count one = {1, 1, 1};
    for (long i = 0; i < iters; i++) {
        uint32_t r = append(list, k, &one, ev, 0, NULL);
        if (r) return r;
        if (!ev) continue;
        if ((r = sync(ev, UINT64_MAX))) return r;
        if ((r = reset(ev))) return r;
    }
    return 0;
}

typedef void *(*dpctl_submit_fn)(void *k, void *q, void **args, const int *types, size_t nargs, const size_t *range,
                                 size_t ndims, void *const *deps, size_t ndeps);
typedef void (*dpctl_event_fn)(void *ev);

/* dpctl: DPCTLQueue_SubmitRange over one work-item, DPCTLEvent_Wait,
 * DPCTLEvent_Delete. Returns 0, or -1 when a submit failed. */
int32_t peer_dpctl_launch(dpctl_submit_fn submit, dpctl_event_fn wait, dpctl_event_fn del, void *k, void *q, long iters) {
    size_t range[3] = {1, 1, 1};
    for (long i = 0; i < iters; i++) {
        void *ev = submit(k, q, NULL, NULL, 0, range, 1, NULL, 0);
        if (!ev) return -1;
        wait(ev);
        del(ev);
    }
    return 0;
}

typedef int32_t (*cl_alloc_info_fn)(void *ctx, const void *ptr, uint32_t param, size_t size, void *value,
                                    size_t *size_ret);

/* OpenCL (cl_intel_unified_shared_memory): what the extent check of a SUAI
 * import asks the runtime of a pointer its context did not allocate, in a
 * context of one device: clGetMemAllocInfoINTEL for the allocation's type
 * (CL_MEM_ALLOC_TYPE_INTEL), base (CL_MEM_ALLOC_BASE_PTR_INTEL) and size
 * (CL_MEM_ALLOC_SIZE_INTEL). Returns the first error, -1 if the runtime
 * does not know ptr, else 0. */
int32_t peer_cl_alloc_info(cl_alloc_info_fn info, void *ctx, const void *ptr, long iters) {
    for (long i = 0; i < iters; i++) {
        uint32_t type = 0;
        void *base = NULL;
        size_t size = 0;
        int32_t r = info(ctx, ptr, 0x419A, sizeof type, &type, NULL);
        if (r) return r;
        if ((r = info(ctx, ptr, 0x419B, sizeof base, &base, NULL))) return r;
        if ((r = info(ctx, ptr, 0x419C, sizeof size, &size, NULL))) return r;
        if (type == 0x4196 /* CL_MEM_TYPE_UNKNOWN_INTEL */ || base == NULL || size == 0) return -1;
    }
    return 0;
}

typedef void (*dpctl_queue_fn)(void *q);

/* dpctl: DPCTLQueue_Wait, the host wait dpctl's SyclQueue.wait() and the
 * __sycl_usm_array_interface__ of dpnp's arrays make (usmbridge submits a
 * barrier and waits on its event instead: RATIONALE.md, "A host wait on a
 * dpctl queue is a barrier and its event"). */
void peer_dpctl_queue_wait(dpctl_queue_fn wait, void *q, long iters) {
    for (long i = 0; i < iters; i++)
        wait(q);
}
