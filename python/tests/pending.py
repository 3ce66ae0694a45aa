"""Deterministic "long pending work" on a dpctl.SyclQueue on OpenCL.

SYCL gives no way to hold a queue back, but the cl_command_queue under an
OpenCL SYCL queue does: a marker that waits for a user event
(clCreateUserEvent) blocks every later command of an in-order queue until
the test completes the event. The native queue comes from SYCL's exported
sycl::queue::getNative(int&) called on the queue's DPCTLSyclQueueRef (a
sycl::queue*); for OpenCL it returns the cl_command_queue, retained for
the caller. Tests use this through ctypes; the library does not.
"""
import ctypes

CL_QUEUE_CONTEXT = 0x1090
CL_COMPLETE = 0


def _libsycl():
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if "/libsycl.so" in path:
                return ctypes.CDLL(path, mode=4 | ctypes.RTLD_GLOBAL)  # RTLD_NOLOAD
    raise RuntimeError("libsycl is not loaded (import dpctl first)")


def _cl():
    cl = ctypes.CDLL("libOpenCL.so.1")
    vp, u = ctypes.c_void_p, ctypes.c_uint
    cl.clCreateUserEvent.restype = vp
    cl.clCreateUserEvent.argtypes = [vp, ctypes.POINTER(ctypes.c_int)]
    cl.clGetCommandQueueInfo.argtypes = [vp, u, ctypes.c_size_t, vp, vp]
    cl.clEnqueueMarkerWithWaitList.argtypes = [vp, u, vp, vp]
    cl.clSetUserEventStatus.argtypes = [vp, ctypes.c_int]
    cl.clReleaseEvent.argtypes = [vp]
    cl.clReleaseCommandQueue.argtypes = [vp]
    return cl


class Pending:
    """Holds back every later command of the in-order dpctl queue q until
    complete() is called. On an out-of-order queue (out_of_order=True) it
    holds back only what depends on it: a barrier submitted after it, and
    the commands that depend on that barrier."""

    def __init__(self, q, out_of_order=False):
        if not q.is_in_order and not out_of_order:
            raise ValueError("Pending needs an in-order queue")
        sycl, self.cl = _libsycl(), _cl()
        get_native = sycl._ZNK4sycl3_V15queue9getNativeERi
        get_native.restype = ctypes.c_void_p
        get_native.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        desc = ctypes.c_int(0)
        self.native = get_native(q.addressof_ref(), ctypes.byref(desc))
        if not self.native:
            raise RuntimeError("no native cl_command_queue")
        ctx = ctypes.c_void_p()
        assert self.cl.clGetCommandQueueInfo(self.native, CL_QUEUE_CONTEXT, 8, ctypes.byref(ctx), None) == 0
        err = ctypes.c_int()
        self.event = ctypes.c_void_p(self.cl.clCreateUserEvent(ctx, ctypes.byref(err)))
        assert err.value == 0 and self.event
        assert self.cl.clEnqueueMarkerWithWaitList(self.native, 1, ctypes.byref(self.event), None) == 0
        self.done = False

    def complete(self):
        if not self.done:
            self.done = True
            assert self.cl.clSetUserEventStatus(self.event, CL_COMPLETE) == 0
            self.cl.clReleaseEvent(self.event)
            self.cl.clReleaseCommandQueue(self.native)
