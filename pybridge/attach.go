package pybridge

import (
	"errors"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/opencl"
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
	g.ReleaseError(err)
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

// ReadSUAIArray is ReadArray for an object obj whose
// __sycl_usm_array_interface__ the caller read into d (see SUAIDict): it
// binds it with reg (nil: dpctl's registry), and the array's Owner holds
// obj, as ReadArray's does. A zero d.Dict says reading the attribute
// raised AttributeError (an instance in host memory): obj is then read as
// any other DLPack producer, without asking for the attribute again.
func (g *GIL) ReadSUAIArray(obj Object, d *SUAIDict, reg *usm.Registry) (*usm.Array, error) {
	return g.readSUAIArray(obj, d, reg, nil, nil)
}

// ReadSUAIArrayInto is ReadSUAIArray writing the Array to *dst, with
// its Shape and Strides in dims when they fit (as
// usm.Registry.ParseFieldsInto). A caller that reads array after array
// into storage of its own, and keeps d from one to the next (d holds the
// room an exact dict's values are read in), allocates only the Owner:
// an extension module's arguments, call after call. On an error *dst is
// unspecified.
func (g *GIL) ReadSUAIArrayInto(obj Object, d *SUAIDict, reg *usm.Registry, dst *usm.Array, dims []int64) error {
	_, err := g.readSUAIArray(obj, d, reg, dst, dims)
	return err
}

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

// FromGo converts a Go value to a new Python object: nil → None, an
// Object → a new reference to it, bool → bool, signed and unsigned
// integers of every size → int, float64 → float, string → str, slices and
// arrays of any element type ([]byte included) → tuple, map[string]any →
// dict (keys inserted in sorted order). Other types (float32, structs,
// other maps) are a usm.ErrType error, and a value nested deeper than 64
// containers (one that contains itself, say) a usm.ErrValue error. The
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
			arr, err := g.ReadSUAIArray(o, &SUAIDict{Dict: Object{d}}, reg) // borrows d
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
		if _, own := RaisedAsItself(err); !own && errors.Is(err, errkind.Attribute) { // no producer methods (notAProducer), not its AttributeError
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

// Live returns pybridge's counts for leak tests: "exchange_imports", the
// tensors FromDLPack took through a producer's DLPack C exchange table.
func Live() map[string]int64 {
	return map[string]int64{"exchange_imports": exchangeImports.Load()}
}

// GetAttr returns o.name (a new reference); an exception the lookup
// raises is the error.
func (g *GIL) GetAttr(o Object, name string) (Object, error) { return g.getAttr(o, name) }

// IsNone reports whether o is None.
func (g *GIL) IsNone(o Object) bool { return g.isNone(o) }

// AsString returns the text of o when o is a str (or a subclass); false
// for anything else, which String would convert with str().
func (g *GIL) AsString(o Object) (string, bool) {
	a := g.api()
	if o.p == 0 || !a.HasFlag(o.p, pyapi.TPFlagsUnicodeSubclass) {
		return "", false
	}
	s, ok := a.UnicodeAsString(o.p)
	if !ok {
		a.ErrClear()
	}
	return s, ok
}

// QueueObject returns a new dpctl.SyclQueue over the same SYCL queue as q,
// a queue of the interpreter's dpctl (an array's Queue): what a Python
// consumer of the array orders its work with (a usm_ndarray made from the
// array, by dpnp.tensor.asarray of an object with its
// __sycl_usm_array_interface__ or by ArrayObject, is on the queue the
// interface's syclobj names and keeps the memory; dpnp.asarray of such an
// object copies it, with dpnp 0.20, and refuses copy=False). For a queue
// of the opencl backend it is the queue on a SYCL context made from the
// queue's native context (dpctl.Backend.InteropQueue, which imports dpctl
// if needed). NULL, and no error, for any other queue, where no SYCL
// context can be made, or when dpctl is not imported.
func (g *GIL) QueueObject(q usm.Queue) (Object, error) {
	o, _, err := g.syclQueueOf(q)
	return o, err
}

// syclQueueOf is QueueObject, with why a queue of a native backend has no
// SYCL queue (nil otherwise).
func (g *GIL) syclQueueOf(q usm.Queue) (o Object, why, err error) {
	var dq *dpctl.Queue
	switch x := q.(type) {
	case *dpctl.Queue:
		dq = x
	case *opencl.Queue:
		d, err := g.dpctlUnderGIL()
		if errors.Is(err, usm.ErrNotAvailable) {
			return Object{}, errNoDpctl, nil
		}
		if err != nil { // a KeyboardInterrupt during the import, say
			return Object{}, nil, err
		}
		if dq, err = d.InteropQueue(x); err != nil {
			return Object{}, err, nil
		}
	default:
		return Object{}, nil, nil
	}
	ty := g.dpctlTypes()
	if ty.queueMake == 0 {
		return Object{}, nil, nil
	}
	p := ty.queueMake.Call1(dq.Ref()) // copies the ref: the object owns its own
	if p == 0 {
		return Object{}, nil, g.fetch("SyclQueue_Make")
	}
	return Object{p}, nil, nil
}

// IsSyclQueue reports whether o is a dpctl.SyclQueue (false before dpctl
// is imported).
// SyclQueueOf is the queue a dpctl.SyclQueue object o holds, as the
// queue arrays bound to it get (a copy of the same SYCL queue, equal to
// o's for dpctl and dpnp), and the position of its device in dpctl's
// registry: what a function binds results to when the caller names a queue
// (pyext's Device). ok is false for anything but an exact dpctl.SyclQueue;
// an error only when dpctl cannot be loaded for one.
func (g *GIL) SyclQueueOf(o Object) (q *dpctl.Queue, device int, ok bool, err error) {
	if !g.IsSyclQueue(o) {
		return nil, -1, false, nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil, -1, false, err
	}
	pin := g.py.queuePin(g, d, o.p)
	if pin == nil || pin.Queue() == nil || pin.Device() < 0 {
		return nil, -1, false, errkind.New(errkind.Value, "pybridge.SyclQueueOf", "the dpctl.SyclQueue's device is not one of dpctl's devices with USM")
	}
	return pin.Queue(), pin.Device(), true, nil
}

func (g *GIL) IsSyclQueue(o Object) bool {
	ty := g.dpctlTypes()
	return o.p != 0 && ty.queue != 0 && g.api().Type(o.p) == ty.queue
}

// Call calls fn(*args) and returns the result (a new reference); an
// exception fn raises is the error, as the same object (Raise gives it
// back to Python unchanged).
func (g *GIL) Call(fn Object, args ...Object) (Object, error) {
	a := g.api()
	t := a.TupleNew(len(args))
	if t == 0 {
		return Object{}, g.fetch("call")
	}
	defer a.DecRef(t)
	for i, o := range args {
		a.IncRef(o.p)
		a.TupleSetItem(t, i, o.p) // steals
	}
	r := a.Call(fn.p, t, 0)
	if r == 0 {
		return Object{}, g.fetch("")
	}
	return Object{r}, nil
}

// IncRef adds a reference to o (the counterpart of DecRef).
func (g *GIL) IncRef(o Object) {
	if o.p != 0 {
		g.api().IncRef(o.p)
	}
}
