package pybridge

import (
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// arrayHelpersPy defines what ArrayObject hands Python: OneCapsule, the
// producer a consumer's from_dlpack takes for host memory, which gives
// the capsule made for that consumer once, whatever the keywords (the
// export already waited on the array's queue, so no stream is needed);
// and usm_ndarray, which makes a usm_ndarray over USM from its SUAI, the
// way dpctl's SUAI consumers do (dpctl.memory.as_usm_memory, then the
// array over that memory), with an object that keeps the Go memory
// alive (keep, an unconsumed DLPack capsule, whose destructor releases
// it) for as long as the memory object lives. The dict's data is the
// lowest byte the array touches and its offset leads to element 0, so
// that the memory object starts there whatever the strides' signs.
const arrayHelpersPy = `
class OneCapsule:
    __slots__ = ("capsule", "device")
    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device
    def __dlpack__(self, **kw):
        c, self.capsule = self.capsule, None
        return c
    def __dlpack_device__(self):
        return self.device

class SUAIKeeper:
    __slots__ = ("__sycl_usm_array_interface__", "keep")
    def __init__(self, suai, keep):
        self.__sycl_usm_array_interface__, self.keep = suai, keep

def usm_ndarray(dpt, suai, keep):
    import dpctl.memory
    mem = dpctl.memory.as_usm_memory(SUAIKeeper(suai, keep))
    a = dpt.usm_ndarray(suai["shape"], dtype=suai["typestr"], strides=suai["strides"], buffer=mem, offset=suai["offset"])
    if suai["data"][1]:
        a.flags["W"] = False
    return a
`

// ArrayObject puts a Go array into Python as an array every consumer
// takes without a copy, holding arr's Owner until the Python array goes,
// with the read-only flag kept: a numpy.ndarray for host memory (kDLCPU),
// made by numpy.from_dlpack from a DLPack export of arr; a
// dpnp.tensor.usm_ndarray (dpctl.tensor's, with older dpctl) for USM
// (kDLOneAPI), made from arr's SUAI (GIL.SUAI) as dpctl's SUAI consumers
// make one. USM goes through SUAI because its syclobj names the context
// the memory belongs to (a queue on a SYCL context made from the opencl
// backend's native one, say), where a DLPack tensor names a device only,
// and dpnp's from_dlpack takes a pointer only in that device's default
// SYCL context (RATIONALE.md, "Native allocations and SYCL consumers").
// Memory no SYCL context can reach is SUAI's ValueError, which says to
// allocate through dpctl instead; ToDLPack still hands it to consumers
// that are not SYCL. NumPy (or dpnp or dpctl, for USM) must be installed
// in the interpreter; otherwise the ImportError is the error. An array
// whose memory has been freed is refused (usm.ErrClosed).
func (g *GIL) ArrayObject(arr *usm.Array) (Object, error) {
	if arr.DLDevice.Type == dlabi.OneAPI {
		return g.usmArrayObject(arr)
	}
	consumer, err := g.arrayModule(arr.DLDevice)
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(consumer)
	fromDLPack, err := g.getAttr(consumer, "from_dlpack")
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(fromDLPack)
	c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: &maxVersion})
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(c)
	one, err := g.arrayHelper("OneCapsule")
	if err != nil {
		return Object{}, err
	}
	dev, err := g.fromGo([]any{int64(arr.DLDevice.Type), int64(arr.DLDevice.ID)})
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(dev)
	producer, err := g.call(Object{one}, []any{c, dev}, nil)
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(producer)
	return g.call(fromDLPack, []any{producer}, nil)
}

// usmArrayObject is ArrayObject of USM: a usm_ndarray over arr's memory
// from its SUAI, kept alive by a DLPack export of arr that no consumer
// takes (its capsule's destructor releases arr's Owner).
func (g *GIL) usmArrayObject(arr *usm.Array) (Object, error) {
	win, err := arr.Window()
	if err != nil {
		return Object{}, err
	}
	low := *arr // the same array, described from the lowest byte it touches
	low.Data = arr.Data + uintptr(win.Lo)
	low.Offset = (arr.Offset*int64(arr.DType.Size()) - win.Lo) / int64(arr.DType.Size())
	suai, err := g.SUAI(&low, Object{}) // waits on the array's queue
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(suai)
	dpt, err := g.arrayModule(arr.DLDevice)
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(dpt)
	m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &maxVersion, NoSync: true})
	if err != nil {
		return Object{}, err
	}
	keep, err := g.capsule(m)
	if err != nil {
		return Object{}, err
	}
	defer g.DecRef(keep)
	mk, err := g.arrayHelper("usm_ndarray")
	if err != nil {
		return Object{}, err
	}
	return g.call(Object{mk}, []any{dpt, suai, keep}, nil)
}

// arrayModule imports the library whose arrays hold memory of device d.
func (g *GIL) arrayModule(d dlabi.Device) (Object, error) {
	switch d.Type {
	case dlabi.CPU:
		return g.importModule("numpy")
	case dlabi.OneAPI:
		m, err := g.importModule("dpnp.tensor")
		if err == nil {
			return m, nil
		}
		g.ReleaseError(err)
		return g.importModule("dpctl.tensor")
	}
	return Object{}, errkind.New(errkind.Buffer, "pybridge.ArrayObject", "no Python array library holds memory of "+d.String())
}

// arrayHelper is the object of arrayHelpersPy named name, defined once
// (a borrowed reference kept for the life of the interpreter).
func (g *GIL) arrayHelper(name string) (uintptr, error) {
	key := "\x00arrayHelpers." + name
	if o := g.py.internedObject(key); o != 0 {
		return o, nil
	}
	a := g.api()
	ns := a.DictNew()
	if ns == 0 {
		return 0, g.fetch("arrayHelpers")
	}
	defer a.DecRef(ns)
	builtins, err := g.importModule("builtins")
	if err != nil {
		return 0, err
	}
	defer g.DecRef(builtins)
	exec, err := g.getAttr(builtins, "exec")
	if err != nil {
		return 0, err
	}
	defer g.DecRef(exec)
	r, err := g.call(exec, []any{arrayHelpersPy, Object{ns}}, nil)
	if err != nil {
		return 0, err
	}
	g.DecRef(r)
	var found uintptr
	for _, n := range []string{"OneCapsule", "usm_ndarray"} {
		o := a.DictGetItemString(ns, n)
		if o == 0 {
			return 0, errkind.New(errkind.Value, "pybridge.ArrayObject", n+" was not defined")
		}
		a.IncRef(o)
		o = g.py.keepObject("\x00arrayHelpers."+n, o)
		if n == name {
			found = o
		}
	}
	return found, nil
}
