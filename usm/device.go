package usm

import (
	"strconv"
	"strings"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// Device is one device of a Registry, as a program picks one: what it is
// (the filter selector that names it, its name, vendor, platform and
// driver), what memory it allocates and what its kernels are built from.
// Registry.Devices lists them in SYCL's device order and Registry.Device
// gives the one a selector names; Empty allocates arrays on one. Two
// runtimes of one machine show as two devices: PoCL's and Intel's OpenCL
// CPU devices differ in Platform, Vendor, USM (PoCL's is SVM) and SPIRV.
//
// It is a value: it copies freely and needs no Close (the registry's
// backends own what it names).
type Device struct {
	Selector syclobj.Selector   // names the device in its registry ("opencl:cpu:1"); it resolves back to it
	Backend  syclobj.Backend    // the SYCL backend (opencl, level_zero, host)
	Type     syclobj.DeviceType // cpu, gpu, accelerator, host
	Name     string             // the device's name, as its runtime reports it
	Vendor   string             // the device's vendor, as its runtime reports it
	Platform string             // the OpenCL platform, Level Zero driver or SYCL platform it belongs to
	Driver   string             // the driver's version
	USM      []Kind             // the kinds Alloc makes on it (KindHost, KindDevice, KindShared, in that order); empty: it allocates nothing
	SVM      bool               // its memory is OpenCL fine-grain SVM served as USM: host-accessible whatever the kind asked for
	OpenCLC  bool               // its queues build programs from OpenCL C (BuildProgram)
	SPIRV    bool               // its queues build programs from SPIR-V

	backend Backend
	local   int
	reg     *Registry
}

// deviceDescriber is implemented by backends that say more of a device
// than Backend.Devices does: DescribeDevice fills Vendor, Platform,
// Driver, USM, SVM, OpenCLC and SPIRV of its backend-local device (the
// registry fills the rest). A backend without it has devices that
// allocate what its Alloc takes, and build nothing.
type deviceDescriber interface {
	DescribeDevice(device int) Device
}

// String names the device for a reader: selector, name and platform, as
// in `opencl:cpu:1 "pthread-skylake" (Portable Computing Language)`.
func (d Device) String() string {
	if d.backend == nil {
		return "no device"
	}
	s := d.Selector.String() + " " + strconv.Quote(d.Name)
	if d.Platform != "" {
		s += " (" + d.Platform + ")"
	}
	return s
}

// Queue returns the device's default queue: the in-order queue arrays
// Empty allocates on it are bound to, on which their kernels are launched.
// A backend without queues is an ErrNotSupported error.
func (d Device) Queue() (Queue, error) {
	if d.backend == nil {
		return nil, errkind.New(errkind.Value, "usm.Device.Queue", "the zero Device names no device")
	}
	qp, ok := d.backend.(queueProvider)
	if !ok {
		return nil, errkind.New(errkind.NotSupported, "usm.Device.Queue", "backend "+d.Backend.String()+" has no queues")
	}
	return qp.Queue(d.local)
}

// Devices returns every device of the registry, in the global order that
// filter selectors and kDLOneAPI device ids count in.
func (r *Registry) Devices() []Device {
	r.mu.RLock()
	devs := make([]Device, len(r.devices))
	for i, gd := range r.devices {
		devs[i] = Device{Selector: r.selectors[gd], Backend: r.descs[i].Backend, Type: r.descs[i].Type, Name: r.descs[i].Name, backend: gd.b, local: gd.local, reg: r}
	}
	r.mu.RUnlock()
	for i := range devs {
		devs[i].describe()
	}
	return devs
}

// Device returns the device a filter selector names ("opencl:cpu",
// "level_zero:gpu:1", "0"): the first the registry's order puts first,
// as SYCL's filter selector picks. A selector that does not parse, or
// names no device of the registry, is a *syclobj.SelectorError (ErrValue).
func (r *Registry) Device(selector string) (Device, error) {
	sel, err := syclobj.ParseSelector(strings.TrimSpace(selector))
	if err != nil {
		return Device{}, err
	}
	r.mu.RLock()
	i, err := sel.Resolve(r.descs)
	if err != nil {
		r.mu.RUnlock()
		return Device{}, err
	}
	gd := r.devices[i]
	d := Device{Selector: r.selectors[gd], Backend: r.descs[i].Backend, Type: r.descs[i].Type, Name: r.descs[i].Name, backend: gd.b, local: gd.local, reg: r}
	r.mu.RUnlock()
	d.describe()
	return d, nil
}

// describe fills what the backend says of the device.
func (d *Device) describe() {
	if dd, ok := d.backend.(deviceDescriber); ok {
		x := dd.DescribeDevice(d.local)
		d.Vendor, d.Platform, d.Driver, d.USM, d.SVM, d.OpenCLC, d.SPIRV = x.Vendor, x.Platform, x.Driver, x.USM, x.SVM, x.OpenCLC, x.SPIRV
		return
	}
	if _, ok := d.backend.(Allocator); ok {
		d.USM = []Kind{KindHost, KindDevice, KindShared}
	}
}
