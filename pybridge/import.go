package pybridge

import (
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/usm"
)

// importCapsule consumes a DLPack capsule: "dltensor_versioned" or
// "dltensor" are imported with dlpack.Import (reg resolves kDLOneAPI
// devices; nil uses the interpreter's dpctl when the tensor is kDLOneAPI)
// and renamed to used_* only once the import succeeded, so a refused
// capsule keeps its name and its own destructor releases it. A used_*
// capsule is a usm.ErrValue error; anything else is usm.ErrType.
func (g *GIL) importCapsule(c Object, reg *usm.Registry) (*dlpack.Tensor, error) {
	a := g.api()
	if a.Type(c.p) != a.CapsuleType {
		return nil, errkind.New(errkind.Type, "pybridge.ImportCapsule", "expected a 'dltensor' capsule, got "+g.objTypeName(c))
	}
	var name, used *byte
	versioned := false
	switch n := pyapi.GoString(a.CapsuleGetName(c.p)); n {
	case "dltensor":
		name, used = cDLTensor, cUsedDLTensor
	case "dltensor_versioned":
		name, used, versioned = cDLTensorVersioned, cUsedDLTensorVersioned, true
	case "used_dltensor", "used_dltensor_versioned":
		return nil, errkind.New(errkind.Value, "pybridge.ImportCapsule", "A DLPack tensor object can not be consumed multiple times")
	default:
		return nil, errkind.New(errkind.Type, "pybridge.ImportCapsule", "expected a 'dltensor' capsule, got a capsule named "+errkind.Quote(n))
	}
	p := a.CapsuleGetPointer(c.p, name)
	if p == 0 {
		return nil, g.fetch("pybridge.ImportCapsule")
	}
	reg, err := g.importRegistry(reg, p, versioned, "pybridge.ImportCapsule")
	if err != nil {
		return nil, err
	}
	t, err := dlpack.Import(dlpack.UnsafeManaged(p, versioned), dlpack.ImportOptions{Registry: reg, KeepOnError: true})
	if err != nil {
		return nil, err
	}
	a.CapsuleSetName(c.p, used)
	return t, nil
}

// deviceType reads the DLTensor's device type in place.
func deviceType(p uintptr, versioned bool) dlabi.DeviceType {
	var t *dlabi.Tensor
	if versioned {
		t = &(*dlabi.ManagedTensorVersioned)(cmem.Ptr(p)).DLTensor
	} else {
		t = &(*dlabi.ManagedTensor)(cmem.Ptr(p)).DLTensor
	}
	return t.Device.Type
}

// importRegistry is the registry the tensor at p is imported with: reg
// when given; else, for a kDLOneAPI tensor, the interpreter's dpctl
// registry, and nil (dlpack.Import's host default) for any other device.
func (g *GIL) importRegistry(reg *usm.Registry, p uintptr, versioned bool, op string) (*usm.Registry, error) {
	if reg != nil || deviceType(p, versioned) != dlabi.OneAPI {
		return reg, nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil, errkind.Wrap(errkind.Buffer, op, "a kDLOneAPI tensor needs dpctl", err)
	}
	return d.Registry(), nil
}

// importManaged takes ownership of a producer's versioned tensor (the C
// exchange API's import, managed_tensor_to_py_object_no_sync, steals it):
// dlpack.Import with reg, or the interpreter's dpctl registry for a
// kDLOneAPI tensor when reg is nil. On error the tensor's deleter has
// been called.
func (g *GIL) importManaged(m dlpack.Managed, reg *usm.Registry) (*dlpack.Tensor, error) {
	if m.Pointer() == 0 {
		return nil, errkind.New(errkind.Value, "pybridge.importManaged", "NULL managed tensor")
	}
	reg, err := g.importRegistry(reg, m.Pointer(), m.Versioned(), "pybridge.importManaged")
	if err != nil {
		m.Delete()
		return nil, err
	}
	return dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
}

// ImportCapsule takes a DLPack capsule ("dltensor_versioned" or
// "dltensor"), as from_dlpack does with what __dlpack__ returned: the
// tensor is imported (reg resolves kDLOneAPI devices; nil: dpctl's) and
// the capsule renamed used_* only once the import succeeded, so a refused
// capsule still deletes its tensor when it goes. A consumed capsule is
// usm.ErrValue; anything else usm.ErrType.
func (g *GIL) ImportCapsule(c Object, reg *usm.Registry) (*dlpack.Tensor, error) {
	return g.importCapsule(c, reg)
}
