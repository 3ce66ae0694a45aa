package pybridge

import (
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// oneCapsulePy defines the producer ArrayObject hands a consumer's
// from_dlpack: it gives the capsule made for that consumer once, whatever
// the keywords (the export already waited on the array's queue, so no
// stream is needed).
const oneCapsulePy = `
class OneCapsule:
    __slots__ = ("capsule", "device")
    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device
    def __dlpack__(self, **kw):
        c, self.capsule = self.capsule, None
        return c
    def __dlpack_device__(self):
        return self.device
`

// ArrayObject puts a Go array into Python as an array every consumer
// takes without a copy: a numpy.ndarray for host memory (kDLCPU), a
// dpnp.tensor.usm_ndarray (dpctl.tensor's, with older dpctl) for USM
// (kDLOneAPI), each made by its library's from_dlpack from a DLPack export
// of arr. The read-only flag is kept; arr's Owner is retained until the
// Python array goes. NumPy (or dpnp or dpctl for USM) must be installed in
// the interpreter; otherwise the ImportError is the error. ToDLPack gives
// the bare capsule instead, for a consumer of capsules (ImportCapsule).
func (g *GIL) ArrayObject(arr *usm.Array) (Object, error) {
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
	one, err := g.oneCapsuleClass()
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

// oneCapsuleClass is the OneCapsule class, defined once (a borrowed
// reference kept for the life of the interpreter).
func (g *GIL) oneCapsuleClass() (uintptr, error) {
	const key = "\x00OneCapsule"
	if o := g.py.internedObject(key); o != 0 {
		return o, nil
	}
	a := g.api()
	ns := a.DictNew()
	if ns == 0 {
		return 0, g.fetch("OneCapsule")
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
	r, err := g.call(exec, []any{oneCapsulePy, Object{ns}}, nil)
	if err != nil {
		return 0, err
	}
	g.DecRef(r)
	cls := a.DictGetItemString(ns, "OneCapsule")
	if cls == 0 {
		return 0, errkind.New(errkind.Value, "pybridge.ArrayObject", "OneCapsule was not defined")
	}
	a.IncRef(cls)
	return g.py.keepObject(key, cls), nil
}
