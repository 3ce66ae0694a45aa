package dlpack

import (
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/ffi"
)

// Managed is a pointer to a DLManagedTensorVersioned or a legacy
// DLManagedTensor in C memory, tagged with which of the two it is (the
// capsule name says so in Python: "dltensor_versioned" or "dltensor").
type Managed struct {
	ptr       uintptr
	versioned bool
}

// UnsafeManaged wraps a raw pointer received from a producer. The caller
// guarantees that p points to a live struct of the stated layout whose
// ownership it holds.
func UnsafeManaged(p uintptr, versioned bool) Managed { return Managed{p, versioned} }

// Pointer returns the address of the struct.
func (m Managed) Pointer() uintptr { return m.ptr }

// Versioned reports whether the struct is a DLManagedTensorVersioned.
func (m Managed) Versioned() bool { return m.versioned }

// versionedView and legacyView read the struct in place.
func (m Managed) versionedView() *dlabi.ManagedTensorVersioned {
	return (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.ptr))
}

func (m Managed) legacyView() *dlabi.ManagedTensor { return (*dlabi.ManagedTensor)(cmem.Ptr(m.ptr)) }

// deleterPtr reads the deleter field, which sits in the ABI-stable prefix
// of the versioned layout, so it can be read whatever the major version.
func (m Managed) deleterPtr() uintptr {
	if m.versioned {
		return m.versionedView().Deleter
	}
	return m.legacyView().Deleter
}

// Delete calls the tensor's deleter, handing it back to its producer. Use
// it for a tensor that will not be imported; after it, m must not be used.
// A NULL deleter is allowed (nothing to call).
func (m Managed) Delete() {
	if m.ptr == 0 {
		return
	}
	callDeleter(m.deleterPtr(), m.ptr)
}

// callDeleter calls a producer's deleter. Our own deleters are called
// directly, without a trip through C.
func callDeleter(fn, self uintptr) {
	if fn == 0 {
		return
	}
	if leg, ver := deleterPtrs(); fn == leg {
		legacyDeleter(self)
		return
	} else if fn == ver {
		versionedDeleter(self)
		return
	}
	ffi.Fn(fn).Call1(self)
}
