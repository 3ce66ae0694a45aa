package pybridge

import (
	"errors"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// ArrayFromSUAI binds d, the __sycl_usm_array_interface__ the caller
// read from obj (see SUAIDict; a zero d.Dict: obj has no such attribute),
// with reg (nil: dpctl's registry, importing dpctl if needed), as AsArray
// does after reading the attribute. The array has no Owner: the caller
// keeps obj alive for as long as the array is used. so is the
// dpctl.SyclQueue or SyclContext the array was bound to (a new reference;
// NULL for other syclobj forms), which a re-export names.
func (g *GIL) ArrayFromSUAI(obj Object, d *SUAIDict, reg *usm.Registry) (arr *usm.Array, so Object, err error) {
	// The SUAI is read before dpctl is loaded: an object whose SUAI is
	// missing or malformed is refused the same way with or without dpctl.
	if d.Dict.isNil() {
		return nil, Object{}, g.noSUAIError(obj)
	}
	s, err := g.suaiOf(obj, d)
	if err != nil {
		return nil, Object{}, err
	}
	if reg, err = g.registryOr(reg, s); err != nil {
		return nil, Object{}, err
	}
	return g.bindSUAI(Object{}, s, reg, true) // the caller keeps obj alive
}

// ReadSUAIArrayInto is ReadArray for an object obj whose
// __sycl_usm_array_interface__ the caller read into d (see SUAIDict): it
// binds it with reg (nil: dpctl's registry), and the array's Owner holds
// obj, as ReadArray's does. A zero d.Dict says reading the attribute
// raised AttributeError (an instance in host memory): obj is then read as
// any other DLPack producer, without asking for the attribute again.
//
// The Array is written to *dst, with its Shape and Strides in dims when
// they fit (as usm.Registry.ParseFieldsInto). A caller that reads array
// after array into storage of its own, and keeps d from one to the next
// (d holds the room an exact dict's values are read in), allocates only
// the Owner: an extension module's arguments, call after call. On an
// error *dst is unspecified.
func (g *GIL) ReadSUAIArrayInto(obj Object, d *SUAIDict, reg *usm.Registry, dst *usm.Array, dims []int64) error {
	_, err := g.readSUAIArray(obj, d, reg, dst, dims)
	return err
}

// readSUAIArray is ReadSUAIArrayInto, which also returns the array (dst
// when given).
func (g *GIL) readSUAIArray(obj Object, d *SUAIDict, reg *usm.Registry, dst *usm.Array, dims []int64) (*usm.Array, error) {
	if d.Dict.isNil() {
		arr, err := g.readDLPackArray(obj, reg)
		if err == nil && dst != nil {
			*dst = *arr
		}
		return arr, err
	}
	s, err := g.suaiOf(obj, d)
	if err != nil {
		return nil, err
	}
	if reg, err = g.registryOr(reg, s); err != nil {
		return nil, err
	}
	arr, _, err := g.bindSUAIInto(obj, s, reg, false, dst, dims)
	return arr, err
}

// registryOr is reg, or dpctl's registry when reg is nil; s, read before
// dpctl was loaded, is released when that fails.
func (g *GIL) registryOr(reg *usm.Registry, s *suaiDict) (*usm.Registry, error) {
	if reg != nil {
		return reg, nil
	}
	dp, err := g.dpctlUnderGIL()
	if err != nil {
		s.Release(g)
		return nil, err
	}
	return dp.Registry(), nil
}

// ReadArray reads any array object: a DLPack capsule (ImportCapsule), an
// object whose type has __sycl_usm_array_interface__ (AsArray), or any
// other DLPack producer (FromDLPack, without options). reg resolves SYCL
// devices (nil: dpctl's). The array's Owner keeps the memory alive. An
// object that is none of these is a usm.ErrType error.
func (g *GIL) ReadArray(o Object, reg *usm.Registry) (*usm.Array, error) {
	a := g.api()
	if a.Type(o.p) == a.CapsuleType {
		t, err := g.importCapsule(o, reg)
		if err != nil {
			return nil, err
		}
		return &t.Array, nil
	}
	name, err := g.suaiAttrName()
	if err != nil {
		return nil, err
	}
	onType, found := a.LookupAttr(a.Type(o.p), name) // a metaclass's own exception is the caller's
	if found < 0 {
		return nil, g.fetch("")
	}
	a.DecRef(onType)
	if found > 0 {
		// The type has the attribute; an instance in host memory may not
		// (AttributeError): then it is a DLPack producer like any other.
		if d := a.GetAttr(o.p, name); d != 0 {
			arr, err := g.readSUAIArray(o, &SUAIDict{Dict: Object{d}}, reg, nil, nil) // borrows d
			a.DecRef(d)
			return arr, err
		}
		if !a.ErrGivenMatches(a.ErrOccurred(), a.Exc["AttributeError"]) {
			return nil, g.fetch("")
		}
		a.ErrClear()
	}
	return g.readDLPackArray(o, reg)
}

// readDLPackArray is ReadArray of an object without
// __sycl_usm_array_interface__: a DLPack producer, or a usm.ErrType error.
func (g *GIL) readDLPackArray(o Object, reg *usm.Registry) (*usm.Array, error) {
	t, err := g.FromDLPack(o, FromDLPackOptions{Registry: reg})
	if err != nil {
		if _, own := raisedAsItself(err); !own && errors.Is(err, errkind.Attribute) { // no producer methods (notAProducer), not its AttributeError
			return nil, errkind.New(errkind.Type, "pybridge.ReadArray", "expected an array (the buffer protocol, DLPack or __sycl_usm_array_interface__), got "+g.objTypeName(o))
		}
		return nil, err
	}
	return &t.Array, nil
}

// AsArray reads obj's SUAI and binds it with reg (nil: the registry of the
// interpreter's dpctl, which is imported if needed). The array's Owner
// keeps obj alive.
func (g *GIL) AsArray(obj Object, reg *usm.Registry) (*usm.Array, error) {
	s, err := g.readSUAI(obj)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		d, err := g.dpctlUnderGIL()
		if err != nil {
			s.Release(g)
			return nil, err
		}
		reg = d.Registry()
	}
	arr, _, err := g.bindSUAI(obj, s, reg, false)
	return arr, err
}

// bindSUAI is the rest of asArray, with s read from obj: it binds s with
// reg and releases s. The array's Owner holds obj; a NULL obj is a caller
// that keeps the object alive itself (no Owner). With keepSyclobj, so is
// the syclobj when it is a dpctl.SyclQueue or SyclContext (a new
// reference the caller owns), else zero.
func (g *GIL) bindSUAI(obj Object, s *suaiDict, reg *usm.Registry, keepSyclobj bool) (arr *usm.Array, so Object, err error) {
	return g.bindSUAIInto(obj, s, reg, keepSyclobj, nil, nil)
}

// bindSUAIInto is bindSUAI writing the Array to *dst with its Shape and
// Strides in dims (usm.Registry.ParseFieldsInto); a nil dst is
// bindSUAI's own allocation (usm.Registry.ParseFields).
func (g *GIL) bindSUAIInto(obj Object, s *suaiDict, reg *usm.Registry, keepSyclobj bool, dst *usm.Array, dims []int64) (arr *usm.Array, so Object, err error) {
	defer s.Release(g)
	if dst == nil {
		arr, err = reg.ParseFields(s)
	} else {
		arr, err = dst, reg.ParseFieldsInto(s, dst, dims)
	}
	if err != nil {
		return nil, Object{}, err
	}
	if !obj.isNil() {
		arr.Owner = g.py.newRef(obj)
	}
	if p := s.vals[keySyclobj]; keepSyclobj && p != 0 {
		if ty := g.dpctlTypes(); ty.queue != 0 && (g.api().Type(p) == ty.queue || g.api().Type(p) == ty.context) {
			g.api().IncRef(p)
			so = Object{p}
		}
	}
	return arr, so, nil
}
