package levelzero

import (
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/live"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/syclobj"
)

// Process-wide state. zeInit is sticky inside the loader (std::call_once),
// so the result of the first initialisation is the answer for the life of
// the process; Init caches it the same way instead of pretending a retry
// could help.
var (
	initOnce sync.Once
	api      *zeapi.Lib
	drivers  []*Driver
	initErr  error
	initPath string
)

// counters count the objects this package created and has not destroyed,
// for leak checks.
var counters = live.NewSet("levelzero", "contexts", "queues", "lists", "pools", "events", "allocations", "ipc_mappings")

var (
	liveContexts    = counters.Counter("contexts")
	liveQueues      = counters.Counter("queues")
	liveLists       = counters.Counter("lists")
	livePools       = counters.Counter("pools")
	liveEvents      = counters.Counter("events")
	liveAllocations = counters.Counter("allocations")
	liveIPC         = counters.Counter("ipc_mappings")
)

// Live returns how many objects made through this package are alive, by
// kind: "contexts", "queues", "lists", "pools", "events", "allocations"
// and "ipc_mappings". A program (or test) that closed everything it made
// sees only zeros.
func Live() map[string]int64 { return counters.Snapshot() }

// Init loads the loader and initialises Level Zero once per process. The
// error is errkind.NotAvailable ("runtime not available") when the loader
// is missing or no driver is installed (ZE_RESULT_ERROR_UNINITIALIZED),
// and the same error is returned by every later call: the loader caches
// it. Driver-selection variables such as ZE_ENABLE_ALT_DRIVERS must be set
// before the first call.
func Init() error {
	initOnce.Do(func() { initErr = doInit() })
	return initErr
}

func doInit() error {
	a, err := zeapi.Load()
	if err != nil {
		return errkind.Wrap(errkind.NotAvailable, "levelzero.Init", "the Level Zero loader is not installed or unusable (Debian: apt install libze1)", err)
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
		return errkind.New(errkind.NotAvailable, "levelzero.Init", "no Level Zero driver reported a device (0 drivers)")
	}
	api = a
	ds := make([]*Driver, 0, len(handles))
	for i, h := range handles {
		d, err := newDriver(a, h, i)
		if err != nil {
			api = nil
			return err
		}
		ds = append(ds, d)
	}
	drivers = ds
	return nil
}

// notAvailable adds the remedy to an initialisation failure.
// UNINITIALIZED (no driver, or the driver refused) matches
// errkind.NotAvailable through the code's Is.
func notAvailable(err error) error {
	if ze, ok := err.(*Error); ok && ze.Detail == "" {
		ze.Detail = "no usable Level Zero driver (set ZE_ENABLE_ALT_DRIVERS or install a driver such as intel-level-zero-gpu)"
	}
	return err
}

// InitPath reports how Init found the drivers: "zeInitDrivers" (loader ≥
// 1.18) or "zeInit+zeDriverGet"; "" before a successful Init.
func InitPath() string {
	if Init() != nil {
		return ""
	}
	return initPath
}

// Drivers returns the drivers found by Init, in the loader's order. Match
// drivers across enumerations by UUID, never by position: the two init
// paths may order them differently.
func Drivers() ([]*Driver, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	return append([]*Driver(nil), drivers...), nil
}

// HasCommandListHostSynchronize reports whether the loader exports
// zeCommandListHostSynchronize (loader ≥ 1.10). Without it, immediate
// command lists are synchronised through a barrier and an event.
func HasCommandListHostSynchronize() bool {
	return Init() == nil && api.HasCommandListHostSynchronize()
}

// HasPutIPCHandle reports whether the loader exports zeMemPutIpcHandle.
func HasPutIPCHandle() bool { return Init() == nil && api.HasPutIpcHandle() }

// Driver is a ze_driver_handle_t. Drivers live as long as the process;
// only this package creates them.
type Driver struct {
	h          zeapi.Driver
	index      int
	uuid       [16]byte
	version    uint32
	apiVersion uint32
	ipcFlags   uint32
	devices    []*Device
}

func newDriver(a *zeapi.Lib, h zeapi.Driver, index int) (*Driver, error) {
	p, err := a.DriverProperties(h)
	if err != nil {
		return nil, err
	}
	d := &Driver{h: h, index: index, uuid: p.UUID, version: p.Version, apiVersion: p.APIVersion, ipcFlags: p.IPCFlags}
	hs, err := a.DeviceGet(h)
	if err != nil {
		return nil, err
	}
	for i, dh := range hs {
		dp, err := a.DeviceProperties(dh)
		if err != nil {
			return nil, err
		}
		d.devices = append(d.devices, &Device{h: dh, driver: d, index: i, props: DeviceProperties{
			Name: dp.Name, UUID: dp.UUID, Type: DeviceType(dp.Type),
			VendorID: dp.VendorID, DeviceID: dp.DeviceID, MaxMemAllocSize: dp.MaxMemAllocSize,
		}})
	}
	return d, nil
}

// UUID identifies the driver across enumerations.
func (d *Driver) UUID() [16]byte { return d.uuid }

// Version is the driver's own version number.
func (d *Driver) Version() uint32 { return d.version }

// APIVersion is the Level Zero API version the driver implements,
// (major<<16)|minor.
func (d *Driver) APIVersion() uint32 { return d.apiVersion }

// SupportsIPC reports whether the driver can share memory between
// processes (ZE_IPC_PROPERTY_FLAG_MEMORY).
func (d *Driver) SupportsIPC() bool { return d.ipcFlags&1 != 0 }

// Devices returns the driver's root devices.
func (d *Driver) Devices() []*Device { return append([]*Device(nil), d.devices...) }

func (d *Driver) String() string {
	return "level_zero driver " + strconv.Itoa(d.index) + " (uuid " + hex.EncodeToString(d.uuid[:]) + ", api " + apiString(d.apiVersion) + ")"
}

func apiString(v uint32) string {
	return strconv.Itoa(int(v>>16)) + "." + strconv.Itoa(int(v&0xffff))
}

// device returns the Device of a raw handle of this driver, or nil.
func (d *Driver) device(h zeapi.Device) *Device {
	for _, dev := range d.devices {
		if dev.h == h {
			return dev
		}
	}
	return nil
}

// extensionFunction returns the address of a driver extension function
// (zeDriverGetExtensionFunctionAddress). Unexported: calling a raw address
// needs the caller to know its C signature.
func (d *Driver) extensionFunction(name string) (ffi.Fn, error) {
	return api.DriverExtensionFunction(d.h, name)
}

// DeviceType is a ze_device_type_t.
type DeviceType uint32

const (
	DeviceTypeGPU  DeviceType = 1
	DeviceTypeCPU  DeviceType = 2
	DeviceTypeFPGA DeviceType = 3
	DeviceTypeMCA  DeviceType = 4
	DeviceTypeVPU  DeviceType = 5
)

func (t DeviceType) String() string {
	switch t {
	case DeviceTypeGPU:
		return "gpu"
	case DeviceTypeCPU:
		return "cpu"
	case DeviceTypeFPGA:
		return "fpga"
	case DeviceTypeMCA:
		return "mca"
	case DeviceTypeVPU:
		return "vpu"
	}
	return "DeviceType(" + strconv.Itoa(int(t)) + ")"
}

// SYCL returns the SYCL device type filter selectors use for t.
func (t DeviceType) SYCL() syclobj.DeviceType {
	switch t {
	case DeviceTypeGPU:
		return syclobj.GPU
	case DeviceTypeCPU:
		return syclobj.CPU
	}
	return syclobj.Accelerator
}

// DeviceProperties is the part of ze_device_properties_t usmbridge uses.
type DeviceProperties struct {
	Name            string
	UUID            [16]byte
	Type            DeviceType
	VendorID        uint32
	DeviceID        uint32
	MaxMemAllocSize uint64
}

// Device is a ze_device_handle_t of a driver.
type Device struct {
	h      zeapi.Device
	driver *Driver
	index  int
	props  DeviceProperties
}

// Properties returns what zeDeviceGetProperties reported.
func (d *Device) Properties() DeviceProperties { return d.props }

// Driver returns the device's driver.
func (d *Device) Driver() *Driver { return d.driver }

// Index is the device's position in its driver's Devices.
func (d *Device) Index() int { return d.index }

func (d *Device) String() string {
	return "level_zero:" + d.props.Type.String() + " " + strconv.Quote(d.props.Name)
}

// Context is a ze_context_handle_t. Methods are safe for concurrent use;
// Close waits for calls in progress.
type Context struct {
	h      ffi.Handle
	driver *Driver
	owned  bool // false for a context wrapped from a SYCL runtime
	// children counts live allocations, queues, lists, event pools and
	// IPC mappings made through this context: destroying the context
	// under them would leave dangling native handles.
	children atomic.Int64
}

// NewContext creates a context on the driver.
func (d *Driver) NewContext() (*Context, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	h, err := api.ContextCreate(d.h)
	if err != nil {
		return nil, err
	}
	c := &Context{driver: d, owned: true}
	c.h.Init(uintptr(h), "ze_context_handle_t", liveContexts)
	return c, nil
}

// UnsafeContext wraps a ze_context_handle_t that a SYCL runtime handed
// out (sycl::get_native on a context) so its USM pointers can be
// classified. The caller guarantees that raw is a live context of driver d
// for as long as the Context is used; Close then only forgets it, the
// runtime keeps ownership. A wrong handle crashes the process.
func (d *Driver) UnsafeContext(raw uintptr) (*Context, error) {
	if raw == 0 {
		return nil, errValue("levelzero.UnsafeContext", "NULL context handle")
	}
	c := &Context{driver: d}
	c.h.Init(raw, "ze_context_handle_t", nil)
	return c, nil
}

// Driver returns the context's driver.
func (c *Context) Driver() *Driver { return c.driver }

// Close destroys the context (zeContextDestroy). Everything created in
// it must be destroyed first. A second Close does nothing.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	return c.h.Close(func(raw uintptr) error {
		if n := c.children.Load(); n != 0 {
			return errValue("levelzero.Context.Close", itoa(int(n))+" objects (allocations, queues, lists, event pools, IPC mappings) of the context are still alive")
		}
		if !c.owned {
			return nil // the runtime that made it keeps ownership
		}
		return api.ContextDestroy(zeapi.Context(raw))
	})
}

// lock read-locks a live context and returns its handle; a nil or
// destroyed context never reaches C.
func (c *Context) lock(op string) (zeapi.Context, error) {
	if c == nil {
		return 0, errValue(op, "nil *levelzero.Context")
	}
	h, err := c.h.RLock(op)
	return zeapi.Context(h), err
}

func (c *Context) unlock() { c.h.RUnlock() }

// checkDevice refuses devices of another driver: their handles would be
// meaningless to this context's driver.
func (c *Context) checkDevice(op string, d *Device, optional bool) (zeapi.Device, error) {
	if d == nil {
		if optional {
			return 0, nil
		}
		return 0, errValue(op, "nil *levelzero.Device")
	}
	if d.driver != c.driver {
		return 0, errValue(op, "device "+d.String()+" belongs to another driver than the context")
	}
	return d.h, nil
}

func errValue(op, detail string) error { return errkind.New(errkind.Value, op, detail) }

func itoa(n int) string { return strconv.Itoa(n) }
