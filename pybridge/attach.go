package pybridge

import (
	"errors"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// Attach returns the interpreter of the Python process this Go code runs
// in: a Go library that Python loaded (an extension module built with
// pyext, a c-shared library opened with ctypes). It finds libpython (or the
// executable's own symbols) and uses that interpreter, which must be
// running; it never initialises one. A program that hosts Python calls
// Embed instead. Attach and Embed return the same *Python on every call.
func Attach() (*Python, error) { return attach() }

// UnsafeObject wraps a PyObject* that C code handed over, for a caller that
// holds the GIL and keeps the object alive while it uses the Object (a
// borrowed reference). 0 is the NULL object.
func UnsafeObject(p uintptr) Object { return Object{p} }

// Ptr returns the object's PyObject* (0 for NULL), for C code. The Object
// does not give up its reference: who owns it is the caller's business.
func (o Object) Ptr() uintptr { return o.p }

// Raise sets err as the current Python exception, so that Go code Python
// called can return NULL: the very exception object for an *Exception
// (behind wrappers that add no error kind), else the class err's kind
// names (usm.PythonException) with err's message, chained to the Python
// exception it wraps as __cause__. The reference err held goes to Python.
func (g *GIL) Raise(err error) {
	g.raise(err)
	g.releaseError(err)
}

// ExceptionOf returns the Python exception object for err, a new
// reference, without raising it: the very object for an *Exception (behind
// wrappers that add no error kind), else a new exception of the class err's
// kind names with err's message, chained to the Python exception it wraps.
// C code that Go returns to raises it (PyErr_SetRaisedException, or
// PyErr_Restore before 3.12). The reference err held goes to the result.
func (g *GIL) ExceptionOf(err error) Object {
	a := g.api()
	aside := g.setAside()
	g.raise(err)
	g.releaseError(err)
	t, v := a.ErrTake()
	if t != 0 {
		a.DecRef(t)
	}
	if aside != 0 {
		a.ErrRestore(aside)
	}
	return Object{v}
}

// ErrorOf is the inverse of ExceptionOf: the error of an exception object
// C code took (PyErr_GetRaisedException), an *Exception that holds the
// reference it is given (raising the error raises the same object).
func (g *GIL) ErrorOf(exc Object) error {
	if exc.p == 0 {
		return &Exception{Type: "SystemError", Message: "a C call failed without setting an exception"}
	}
	g.api().ErrRestore(exc.p)
	return g.fetch("")
}

// Hold returns a strong reference to o as a usm.Owner: Release drops it,
// from any goroutine (taking the GIL). It keeps memory o owns alive for an
// array whose Owner it is.
func (g *GIL) Hold(o Object) usm.Owner { return g.newRef(o) }

// ImportCapsule takes a DLPack capsule ("dltensor_versioned" or
// "dltensor"), as from_dlpack does with what __dlpack__ returned: the
// tensor is imported (reg resolves kDLOneAPI devices; nil: dpctl's) and
// the capsule renamed used_* only once the import succeeded, so a refused
// capsule still deletes its tensor when it goes. A consumed capsule is
// usm.ErrValue; anything else usm.ErrType.
func (g *GIL) ImportCapsule(c Object, reg *usm.Registry) (*dlpack.Tensor, error) {
	return g.importCapsule(c, reg)
}

// ArrayFromSUAI binds d, the __sycl_usm_array_interface__ dict the caller
// read from obj, with reg (nil: dpctl's registry, importing dpctl if
// needed), as AsArray does after reading the attribute. The array has no
// Owner: the caller keeps obj alive for as long as the array is used. so is
// the dpctl.SyclQueue or SyclContext the array was bound to (a new
// reference; NULL for other syclobj forms), which a re-export names.
func (g *GIL) ArrayFromSUAI(obj, d Object, reg *usm.Registry) (arr *usm.Array, so Object, err error) {
	if reg == nil {
		dp, err := g.dpctlUnderGIL()
		if err != nil {
			return nil, Object{}, err
		}
		reg = dp.Registry()
	}
	if d.isNil() {
		return nil, Object{}, g.noSUAIError(obj)
	}
	g.api().IncRef(d.p)
	s, err := g.readSUAIDictOf(obj, d)
	if err != nil {
		return nil, Object{}, err
	}
	arr, ref, err := g.bindSUAI(obj, s, reg, true)
	if err != nil {
		return nil, Object{}, err
	}
	arr.Owner.Release() // the caller keeps obj alive
	arr.Owner = nil
	if ref != nil {
		so = ref.Object()
		g.api().IncRef(so.p)
		ref.ReleaseHeld(g)
	}
	return arr, so, nil
}

// Export is ToDLPack without the capsule: the managed tensor, which the
// caller hands to a consumer or deletes (Managed.Delete).
func (g *GIL) Export(arr *usm.Array, opts dlpack.ExportOptions) (dlpack.Managed, error) {
	return g.export(arr, opts)
}

// DLPackOptions reads __dlpack__'s keywords for an array on dev, with the
// array API's rules and exceptions (and dpctl's for streams): stream None,
// -1 (no synchronization, kDLOneAPI arrays only) or a dpctl.SyclQueue;
// max_version and dl_device 2-tuples of ints; copy None, True or False.
// NULL Objects are keywords not given.
func (g *GIL) DLPackOptions(dev dlpack.Device, stream, maxVersion, dlDevice, copyArg Object) (dlpack.ExportOptions, error) {
	return g.parseDLPackArgs(dev, stream, maxVersion, dlDevice, copyArg)
}

// AcceptsNoSync reports whether __dlpack__(stream=-1) is accepted for an
// array on dev: only kDLOneAPI arrays have streams (DLPackOptions).
func AcceptsNoSync(dev dlpack.Device) bool { return acceptsNoSyncStream(dev) }

// FromGo converts a Go value to a new Python object: nil (None), bool,
// integers, floats, strings, slices and arrays (lists), maps with string
// keys (dicts), Objects (a new reference), nested up to 64 levels. The
// caller owns the result (DecRef).
func (g *GIL) FromGo(v any) (Object, error) { return g.fromGo(v) }

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
	if a.HasAttrString(a.Type(o.p), "__sycl_usm_array_interface__") {
		return g.AsArray(o, reg)
	}
	t, err := g.FromDLPack(o, FromDLPackOptions{Registry: reg})
	if err != nil {
		if errors.Is(err, errkind.Attribute) {
			return nil, errkind.New(errkind.Type, "pybridge.ReadArray", "expected an array (the buffer protocol, DLPack or __sycl_usm_array_interface__), got "+g.objTypeName(o))
		}
		return nil, err
	}
	return &t.Array, nil
}

// WorkQueue is the queue usmbridge uses for dev: nil for kDLCPU, for
// kDLOneAPI the dpctl queue imports of that device are bound to (made once
// per process; its Ref is the DPCTLSyclQueueRef). It is what the DLPack C
// exchange API's current_work_stream answers.
func (g *GIL) WorkQueue(dev dlpack.Device) (usm.Queue, error) {
	if dev.Type == dlabi.CPU {
		return nil, nil
	}
	ref, err := g.currentWorkStream(dev)
	if err != nil {
		return nil, err
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil, err
	}
	return d.UnsafeBorrowQueue(ref), nil
}

// TakeError takes the Python exception that is set as an error (an
// *Exception holding the object), for Go code C called after a C API call
// failed; a SystemError-like error if none is set.
func (g *GIL) TakeError() error { return g.fetch("") }

// IncRef adds a reference to o (the counterpart of DecRef).
func (g *GIL) IncRef(o Object) {
	if o.p != 0 {
		g.api().IncRef(o.p)
	}
}

// Live returns pybridge's counts for leak tests: "exchange_imports", the
// tensors FromDLPack took through a producer's DLPack C exchange table.
func Live() map[string]int64 {
	return map[string]int64{"exchange_imports": exchangeImports.Load()}
}
