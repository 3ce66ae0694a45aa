package levelzero

import (
	"encoding/hex"
	"errors"
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/syclobj"
)

// Process-wide state. zeInit is sticky inside the loader (std::call_once),
// so the result of the first initialisation is the answer for the life of
// the process; initialise caches it the same way instead of pretending a
// retry could help.
var (
	initOnce sync.Once
	api      *zeapi.Lib
	drivers  []*driver
	initErr  error
	initPath string // "zeInitDrivers" (loader ≥ 1.18) or "zeInit+zeDriverGet"
)

// initialise loads the loader and initialises Level Zero once per process.
// The error is errkind.NotAvailable ("runtime not available") when the
// loader is missing or no driver is installed
// (ZE_RESULT_ERROR_UNINITIALIZED), and the same error is returned by
// every later call: the loader caches it. Driver-selection variables such
// as ZE_ENABLE_ALT_DRIVERS must be set before the first call.
func initialise() error {
	initOnce.Do(func() { initErr = doInit() })
	return initErr
}

func doInit() error {
	a, err := zeapi.Load()
	if err != nil {
		return errkind.Wrap(errkind.NotAvailable, "levelzero", "the Level Zero loader is not installed or unusable (Debian: apt install libze1)", err)
	}
	var handles []zeapi.Driver
	if a.HasInitDrivers() {
		// Spec 1.10 path. The spec calls zeInitDrivers and zeDriverGet
		// mutually exclusive, so zeInit is used only if this path fails.
		handles, err = a.InitDriversGPU()
		initPath = "zeInitDrivers"
	}
	if !a.HasInitDrivers() || err != nil {
		if err := a.Init(); err != nil {
			return notAvailable(err)
		}
		if handles, err = a.DriverGet(); err != nil {
			return notAvailable(err)
		}
		initPath = "zeInit+zeDriverGet"
	}
	if len(handles) == 0 {
		return errkind.New(errkind.NotAvailable, "levelzero", "no Level Zero driver reported a device (0 drivers)")
	}
	ds := make([]*driver, 0, len(handles))
	global := 0
	for i, h := range handles {
		d, err := newDriver(a, h, i, global)
		if err != nil {
			return err
		}
		global += len(d.devices)
		ds = append(ds, d)
	}
	api, drivers = a, ds
	return nil
}

// notAvailable adds the remedy to an initialisation failure.
// UNINITIALIZED (no driver, or the driver refused) matches
// errkind.NotAvailable through the code's Is.
func notAvailable(err error) error {
	var ze *Error
	if errors.As(err, &ze) && ze.Detail == "" {
		ze.Detail = "no usable Level Zero driver (set ZE_ENABLE_ALT_DRIVERS or install a driver such as intel-level-zero-gpu)"
	}
	return err
}

// driver is a ze_driver_handle_t. Drivers live as long as the process.
type driver struct {
	h       zeapi.Driver
	index   int
	props   zeapi.DriverProperties
	devices []*device
}

func newDriver(a *zeapi.Lib, h zeapi.Driver, index, firstDevice int) (*driver, error) {
	p, err := a.DriverProperties(h)
	if err != nil {
		return nil, err
	}
	d := &driver{h: h, index: index, props: p}
	hs, err := a.DeviceGet(h)
	if err != nil {
		return nil, err
	}
	for i, dh := range hs {
		dp, err := a.DeviceProperties(dh)
		if err != nil {
			return nil, err
		}
		d.devices = append(d.devices, &device{h: dh, driver: d, index: firstDevice + i, props: dp})
	}
	return d, nil
}

// supportsIPC reports whether the driver can share memory between
// processes (ZE_IPC_PROPERTY_FLAG_MEMORY).
func (d *driver) supportsIPC() bool { return d.props.IPCFlags&1 != 0 }

func (d *driver) String() string {
	return "level_zero driver " + strconv.Itoa(d.index) + " (uuid " + hex.EncodeToString(d.props.UUID[:]) + ", api " + apiString(d.props.APIVersion) + ")"
}

func apiString(v uint32) string {
	return strconv.Itoa(int(v>>16)) + "." + strconv.Itoa(int(v&0xffff))
}

// extensionFunction returns the address of a driver extension function.
// Calling it needs a typed wrapper of its C signature.
func (d *driver) extensionFunction(name string) (ffi.Fn, error) {
	return api.DriverExtensionFunction(d.h, name)
}

// device is a ze_device_handle_t of a driver.
type device struct {
	h      zeapi.Device
	driver *driver
	index  int // position among the devices of all drivers: the Backend's device index
	props  zeapi.DeviceProperties
}

// ze_device_type_t values.
const (
	deviceTypeGPU = 1
	deviceTypeCPU = 2
)

// syclType is the SYCL device type filter selectors use for the device.
func (d *device) syclType() syclobj.DeviceType {
	switch d.props.Type {
	case deviceTypeGPU:
		return syclobj.GPU
	case deviceTypeCPU:
		return syclobj.CPU
	}
	return syclobj.Accelerator
}

func (d *device) String() string {
	t := [...]string{"", "gpu", "cpu", "fpga", "mca", "vpu"}
	name := "type" + strconv.Itoa(int(d.props.Type))
	if int(d.props.Type) < len(t) && d.props.Type != 0 {
		name = t[d.props.Type]
	}
	return "level_zero:" + name + " " + strconv.Quote(d.props.Name)
}

// findDevice returns the device of a native handle, or nil if no driver
// enumerated it (a sub-device, say).
func findDevice(h zeapi.Device) *device {
	if h == 0 {
		return nil
	}
	for _, d := range drivers {
		for _, dev := range d.devices {
			if dev.h == h {
				return dev
			}
		}
	}
	return nil
}

func errValue(op, detail string) error { return errkind.New(errkind.Value, op, detail) }

func itoa(n int) string { return strconv.Itoa(n) }
