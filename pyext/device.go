package pyext

import (
	"errors"
	"slices"
	"strings"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// Device is where an array lives, or is to be made: the host, or a SYCL
// device of dpctl's. A parameter of type Device accepts what the array API's
// device keywords do here: "cpu" (the host), a SYCL filter string
// ("opencl:cpu", "level_zero:gpu:0"), a DLPack (device_type, device_id)
// pair, a dpctl.SyclDevice or a dpctl.SyclQueue; None or an omitted
// Optional argument is the host. Default("cpu") and other strings are
// read the same way. A device usmbridge cannot use (none of that name, or
// one that allocates no device USM, where Empty makes its arrays: PoCL's
// CPU device) is refused at the argument, a ValueError naming the
// parameter, as nanobind and PyO3 refuse an argument, not at the first
// allocation. A dpctl.SyclQueue names its queue too: arrays made for the
// Device (Empty) are allocated in the queue's context and bound to it, so
// that dpnp combines them with the caller's arrays on that queue. An array
// argument's own device and queue are its Device method's.
//
// A Device is a value: a class's constructor may keep one, and later
// calls allocate on it (Empty); a function that releases the GIL may too.
type Device struct {
	// DL is the device as DLPack names it: (kDLCPU, 0) for the host,
	// (kDLOneAPI, id) for a SYCL device.
	DL dlpack.Device
	// Backend and Index are the SYCL device in dpctl's registry (nil and
	// -1 for the host).
	Backend usm.Backend
	Index   int
	// Queue is the queue arrays made for the device are bound to (and
	// allocated in the context of): the caller's dpctl.SyclQueue, or an
	// argument's own queue; nil for usmbridge's queue of the device.
	Queue usm.Queue
}

// Host is the host device.
var Host = Device{DL: dlpack.Device{Type: dlpack.CPU}, Index: -1}

// IsHost reports whether d is the host.
func (d Device) IsHost() bool { return d.DL.Type != dlpack.OneAPI }

func (d Device) String() string {
	if d.DL.Type == 0 {
		return "none" // the zero Device
	}
	if d.IsHost() {
		return "cpu"
	}
	return d.DL.String()
}

// Empty allocates a C-contiguous array of shape with elements of type T on
// d: host memory of usmbridge's cpu backend, or device USM in dpctl's
// context for d (memory dpnp and dpctl.tensor read without a copy), on
// d.Queue's context and bound to it when d names a queue. The array's
// Owner holds the allocation: a Go function returning the array hands it
// to Python, which frees it when the Python Array goes.
func Empty[T usm.Element](d Device, shape ...int64) (*usm.Array, error) {
	return emptyOf(dtypeOf[T](), d, usm.KindDevice, shape)
}

// EmptyLike allocates a C-contiguous array of shape (like's own when none
// is given) with elements of type T where the argument like is: the same
// device, bound to the same queue, the same kind of USM (host memory for
// host memory), so that the result combines with the caller's arrays (dpnp
// refuses arrays of two queues). like is an Array or AnyArray argument of
// the call, and EmptyLike is called during it.
func EmptyLike[T usm.Element](like ArrayArgument, shape ...int64) (*usm.Array, error) {
	a, gen := like.argOf()
	var d Device
	var kind usm.Kind
	var likeShape []int64
	var err error
	a.with(gen, func(a *arg) {
		if a == nil {
			err = errkind.New(errkind.Value, "pyext.EmptyLike", "the array is None, or its call has returned")
			return
		}
		d, kind, likeShape = deviceOfArray(&a.arr), a.arr.Memory.Kind, append([]int64{}, a.arr.Shape...)
	})
	if err != nil {
		return nil, err
	}
	if shape == nil {
		shape = likeShape
	}
	if !kind.HostAccessible() && kind != usm.KindDevice {
		kind = usm.KindDevice
	}
	return emptyOf(dtypeOf[T](), d, kind, shape)
}

// ArrayArgument is an array argument of a call: an Array[T] or AnyArray.
type ArrayArgument interface{ argOf() (*arg, uint32) }

// deviceOfArray is where arr lives, with its queue.
func deviceOfArray(arr *usm.Array) Device {
	if arr.DLDevice.Type != dlpack.OneAPI {
		return Host
	}
	return Device{DL: arr.DLDevice, Backend: arr.Backend, Index: arr.Device, Queue: arr.Queue}
}

// emptyOf is Empty of the dtype dt and USM kind (for a SYCL device).
func emptyOf(dt dlabi.DataType, d Device, kind usm.Kind, shape []int64) (*usm.Array, error) {
	if d.DL.Type == 0 {
		return nil, errkind.New(errkind.Value, "pyext.Empty", "no device: the zero Device (an argument's Device() after its call has returned)")
	}
	et, err := dtype.FromDataType(dt)
	if err != nil {
		return nil, err
	}
	probe := usm.Interface{Shape: shape, DType: et}
	win, err := probe.Window()
	if err != nil {
		return nil, err
	}
	size := max(uintptr(win.Len()), uintptr(et.Size()))
	var alloc *usm.Allocation
	var reg *usm.Registry
	if d.IsHost() {
		host := cpu.Default()
		alloc, err = host.AllocHost(size)
		reg = usm.NewRegistry(host)
	} else {
		dq, onQueue := d.Queue.(*dpctl.Queue)
		db, isDpctl := d.Backend.(*dpctl.Backend)
		al, ok := d.Backend.(usm.Allocator)
		switch {
		case onQueue && isDpctl:
			alloc, err = db.AllocOn(dq, d.Index, kind, size)
		case ok:
			alloc, err = al.Alloc(d.Index, kind, size)
		default:
			return nil, errkind.New(errkind.Value, "pyext.Empty", "usmbridge cannot allocate on "+d.String())
		}
		reg = usm.NewRegistry(d.Backend)
	}
	if err != nil {
		return nil, err
	}
	arr, err := reg.NewArray(alloc, et, shape)
	if err != nil {
		_ = alloc.Free()
		return nil, err
	}
	if d.Queue != nil && !d.IsHost() {
		arr.Queue = d.Queue
	}
	return arr, nil
}

// deviceOf reads a device argument (see Device).
func deviceOf(g *pybridge.GIL, o pybridge.Object) (Device, error) {
	if o.Ptr() == 0 || g.IsNone(o) {
		return Host, nil
	}
	if s, ok := g.AsString(o); ok {
		return deviceNamed(s)
	}
	// A dpctl.SyclQueue names its device and itself: arrays made for the
	// Device are bound to it.
	if q, local, ok, err := g.SyclQueueOf(o); err != nil || ok {
		if err != nil {
			return Device{}, err
		}
		d, err := ext.py.Dpctl()
		if err != nil {
			return Device{}, err
		}
		dl, err := d.DLPackDevice(local)
		if err != nil {
			return Device{}, err
		}
		return Device{DL: dl, Backend: d, Index: local, Queue: q}, nil
	}
	// A SyclDevice names its filter string.
	// An attribute that is absent says the object is not one; anything
	// its own code raised is the caller's exception, as itself.
	dev, err := attrIfAny(g, o, "sycl_device")
	if err != nil {
		return Device{}, err
	}
	if dev.Ptr() != 0 {
		defer g.DecRef(dev)
		o = dev
	}
	fs, err := attrIfAny(g, o, "filter_string")
	if err != nil {
		return Device{}, err
	}
	if fs.Ptr() != 0 {
		defer g.DecRef(fs)
		if s, ok := g.AsString(fs); ok {
			return deviceNamed(s)
		}
	}
	opts, err := g.DLPackOptions(dlabi.Device{}, pybridge.Object{}, pybridge.Object{}, o, pybridge.Object{})
	var exc *pybridge.Exception
	if errors.As(err, &exc) {
		return Device{}, err // raised by the pair's own code (an __index__)
	}
	if err != nil || opts.Device == nil {
		return Device{}, errkind.New(errkind.Type, "pyext", "expected \"cpu\", a SYCL filter string, a DLPack (device_type, device_id) pair, a dpctl.SyclDevice or a dpctl.SyclQueue")
	}
	return deviceOfDL(*opts.Device)
}

// deviceNamed is the device "cpu" or a SYCL filter string names.
func deviceNamed(s string) (Device, error) {
	if strings.EqualFold(s, "cpu") {
		return Host, nil
	}
	sel, err := syclobj.ParseSelector(s)
	if err != nil {
		return Device{}, err
	}
	d, err := sycl(errkind.Quote(s))
	if err != nil {
		return Device{}, err
	}
	b, local, err := d.Registry().Select(sel)
	if err != nil {
		return Device{}, err
	}
	dl, err := d.DLPackDevice(local)
	if err != nil {
		return Device{}, err
	}
	return Device{DL: dl, Backend: b, Index: local}, nil
}

// sycl is dpctl's SYCL runtime, for the device named: a Python without
// dpctl (or without a SYCL runtime) has no such device, a ValueError as
// NumPy's for a device it cannot provide, chained to the ImportError; an
// import interrupted (KeyboardInterrupt, ...) is that exception itself.
func sycl(device string) (*dpctl.Backend, error) {
	d, err := ext.py.Dpctl()
	if errors.Is(err, usm.ErrNotAvailable) {
		return nil, errkind.Wrap(errkind.Value, "pyext", "device "+device+" is a SYCL device, and this Python has no SYCL runtime", err)
	}
	return d, err
}

// deviceOfDL is the device of a DLPack pair.
func deviceOfDL(dl dlpack.Device) (Device, error) {
	switch dl.Type {
	case dlpack.CPU:
		if dl.ID != 0 {
			return Device{}, errkind.New(errkind.Value, "pyext", "kDLCPU has device 0 only, got "+dl.String())
		}
		return Host, nil
	case dlpack.OneAPI:
		d, err := sycl(dl.String())
		if err != nil {
			return Device{}, err
		}
		b, local, err := d.Registry().FromDLPackDevice(dl)
		if err != nil {
			return Device{}, err
		}
		return Device{DL: dl, Backend: b, Index: local}, nil
	}
	return Device{}, errkind.New(errkind.Value, "pyext", "usmbridge has no device "+dl.String())
}

// deviceArg is the decoder of Device parameters.
func (c *frame) device(i int) (Device, error) {
	v := &c.vals[i]
	spec := &c.fn.params[i]
	var d Device
	var err error
	switch {
	case v.kind == vMissing && spec.hasDefault:
		d, err = deviceOfDefault(spec.deflt)
	case v.kind == vMissing || v.kind == vNone:
		return Host, nil
	default:
		err = c.py.DoHeld(func(g *pybridge.GIL) error { // decoding, with the GIL
			var err error
			d, err = deviceOf(g, pybridge.UnsafeObject(v.obj))
			return err
		})
	}
	if err == nil {
		err = usable(d)
	}
	if err != nil {
		return Device{}, deviceArgError(c.fn.name, spec.name, err)
	}
	return d, nil
}

// usable says why usmbridge cannot make arrays on d, or nil: a backend
// that allocates nothing, or a device its backend says has no device USM
// (Empty's kind). The host is always usable.
func usable(d Device) error {
	if d.IsHost() {
		return nil
	}
	if _, ok := d.Backend.(usm.Allocator); !ok {
		return errkind.New(errkind.Value, "pyext", "usmbridge cannot allocate on "+d.String())
	}
	if dd, ok := d.Backend.(interface{ DescribeDevice(int) usm.Device }); ok {
		if desc := dd.DescribeDevice(d.Index); !slices.Contains(desc.USM, usm.KindDevice) {
			return errkind.New(errkind.Value, "pyext", "SYCL device "+d.String()+" allocates no device USM")
		}
	}
	return nil
}

// deviceArgError is the error of a device argument of fn's param that
// could not be read (deviceOf's err): a Python exception the object's own
// code raised, as itself; else a ValueError (or the kind err states)
// naming the parameter, caused by err.
func deviceArgError(fn, param string, err error) error {
	var exc *pybridge.Exception
	if errors.As(err, &exc) {
		return err
	}
	k := errkind.Of(err)
	if k == nil || k == errkind.NotAvailable {
		k = errkind.Value
	}
	return &ArgumentError{Func: fn, Param: param, Reason: "is not a device usmbridge can use", kind: k, Err: err}
}

func deviceOfDefault(v any) (Device, error) {
	switch x := v.(type) {
	case Device:
		return x, nil
	case string:
		return deviceNamed(x)
	}
	return Device{}, errors.New("a Device parameter's default is a Device or a string")
}

// attrIfAny is o.name, or no object when o has no such attribute
// (AttributeError); any other exception its lookup raised is the error.
// The AttributeError is let go at once: it holds o (its obj), which would
// otherwise wait for Go's collector.
func attrIfAny(g *pybridge.GIL, o pybridge.Object, name string) (pybridge.Object, error) {
	v, err := g.GetAttr(o, name)
	if err != nil && errors.Is(err, errkind.Attribute) {
		g.ReleaseError(err)
		return pybridge.Object{}, nil
	}
	return v, err
}
