package testutil

// Python code shared by the extent tests of pybridge (through the SUAI
// reader) and dpctl (through its backend): allocations of dpctl's and a
// class whose SUAI describes any window of them.

// ExtentPy makes 64-byte allocations in three ways (dpctl.memory, a
// dpnp.tensor array, and dpctl.memory on a queue of a second, non-default
// context) and a class whose SUAI describes any window of them as int32.
const ExtentPy = `
ext_mem = dpctl.memory.MemoryUSMShared(64, queue=q)
ext_arr = dpt.arange(16, dtype='i4', sycl_queue=q)
q2 = dpctl.SyclQueue(dpctl.SyclContext([q.sycl_device]), q.sycl_device)
assert q2.sycl_context != q.sycl_context
ext_mem2 = dpctl.memory.MemoryUSMDevice(64, queue=q2)
ext_ptr = {k: v.__sycl_usm_array_interface__['data'][0] for k, v in
           dict(mem=ext_mem, arr=ext_arr, mem2=ext_mem2).items()}
class ExtWin:
    def __init__(self, buf, so, shape, strides, offset):
        self.d = dict(data=(ext_ptr[buf], False), shape=shape, strides=strides, offset=offset,
                      typestr='<i4', version=1)
        self.so = so
    @property
    def __sycl_usm_array_interface__(self):
        return dict(self.d, syclobj=self.so())
`

// WindowForms are the syclobj forms, per allocation (ExtWin's buf and
// so): every route to a binding (cached queue, uncached queue and context
// refs, a filter string through the default contexts, a non-default
// context).
var WindowForms = []struct{ Buf, So string }{
	{"mem", "lambda: q"},
	{"arr", "lambda: q"},
	{"mem", "lambda: q.sycl_context"},
	{"mem", "lambda: 'opencl:cpu'"},
	{"arr", "lambda: q._get_capsule()"},
	{"arr", "lambda: q.sycl_context._get_capsule()"},
	{"mem2", "lambda: q2"},
	{"mem2", "lambda: q2.sycl_context"},
	{"mem2", "lambda: q2._get_capsule()"},
}
