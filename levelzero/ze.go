package levelzero

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// Process-wide state. zeInit is sticky inside the loader (std::call_once),
// so the result of the first initialisation is the answer for the life of
// the process; Init caches it the same way instead of pretending a retry
// could help.
var (
	initOnce sync.Once
	api      *zeAPI
	drivers  []*Driver
	initErr  error
	initPath string
)

// live counts the objects this package created and has not destroyed, for
// leak checks in tests.
var live struct {
	contexts, queues, lists, pools, events, allocs, ipc atomic.Int64
}

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
	a, err := loadAPI()
	if err != nil {
		return err
	}
	var handles []uintptr
	if a.initDrivers != 0 {
		// Spec 1.10 path. The spec calls zeInitDrivers and zeDriverGet
		// mutually exclusive, so zeInit is used only if this path fails.
		handles, err = initDriversGPU(a)
		initPath = "zeInitDrivers"
	}
	if a.initDrivers == 0 || err != nil {
		if r := call(a.init, 0); r != ResultSuccess {
			return notAvailable("zeInit", r)
		}
		if handles, err = driverGet(a); err != nil {
			return err
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

// notAvailable wraps an initialisation failure. UNINITIALIZED (no driver,
// or the driver refused) matches errkind.NotAvailable through Result.Is.
func notAvailable(call string, r Result) error {
	return &Error{Call: call, Result: r, Detail: "no usable Level Zero driver (set ZE_ENABLE_ALT_DRIVERS or install a driver such as intel-level-zero-gpu)"}
}

func initDriversGPU(a *zeAPI) ([]uintptr, error) {
	desc := &zeInitDriverTypeDesc{header: header{stype: stypeInitDriverTypeDesc}, flags: initDriverTypeFlagGPU}
	var n uint32
	if r := call(a.initDrivers, uintptr(unsafe.Pointer(&n)), 0, uintptr(unsafe.Pointer(desc))); r != ResultSuccess {
		return nil, notAvailable("zeInitDrivers", r)
	}
	if n == 0 {
		return nil, nil
	}
	hs := make([]uintptr, n)
	if r := call(a.initDrivers, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&hs[0])), uintptr(unsafe.Pointer(desc))); r != ResultSuccess {
		return nil, notAvailable("zeInitDrivers", r)
	}
	return hs[:n], nil
}

func driverGet(a *zeAPI) ([]uintptr, error) {
	var n uint32
	if r := call(a.driverGet, uintptr(unsafe.Pointer(&n)), 0); r != ResultSuccess {
		return nil, notAvailable("zeDriverGet", r)
	}
	if n == 0 {
		return nil, nil
	}
	hs := make([]uintptr, n)
	if r := call(a.driverGet, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&hs[0]))); r != ResultSuccess {
		return nil, notAvailable("zeDriverGet", r)
	}
	return hs[:n], nil
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
	return Init() == nil && api.commandListHostSynchronize != 0
}

// HasPutIPCHandle reports whether the loader exports zeMemPutIpcHandle.
func HasPutIPCHandle() bool { return Init() == nil && api.memPutIpcHandle != nil }

// Driver is a ze_driver_handle_t. Drivers live as long as the process;
// only this package creates them.
type Driver struct {
	h          uintptr
	index      int
	uuid       [16]byte
	version    uint32
	apiVersion uint32
	ipcFlags   uint32
	devices    []*Device
}

func newDriver(a *zeAPI, h uintptr, index int) (*Driver, error) {
	d := &Driver{h: h, index: index}
	p := &zeDriverProperties{header: header{stype: stypeDriverProperties}}
	if err := check("zeDriverGetProperties", call(a.driverGetProperties, h, uintptr(unsafe.Pointer(p)))); err != nil {
		return nil, err
	}
	d.uuid, d.version = p.uuid, p.driverVersion
	if err := check("zeDriverGetApiVersion", call(a.driverGetAPIVersion, h, uintptr(unsafe.Pointer(&d.apiVersion)))); err != nil {
		return nil, err
	}
	ip := &zeDriverIpcProperties{header: header{stype: stypeDriverIpcProperties}}
	if err := check("zeDriverGetIpcProperties", call(a.driverGetIpcProperties, h, uintptr(unsafe.Pointer(ip)))); err != nil {
		return nil, err
	}
	d.ipcFlags = ip.flags
	var n uint32
	if err := check("zeDeviceGet", call(a.deviceGet, h, uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	if n == 0 {
		return d, nil
	}
	hs := make([]uintptr, n)
	if err := check("zeDeviceGet", call(a.deviceGet, h, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&hs[0])))); err != nil {
		return nil, err
	}
	for i, dh := range hs[:n] {
		dp := &zeDeviceProperties{header: header{stype: stypeDeviceProperties}}
		if err := check("zeDeviceGetProperties", call(a.deviceGetProperties, dh, uintptr(unsafe.Pointer(dp)))); err != nil {
			return nil, err
		}
		name := dp.name[:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		d.devices = append(d.devices, &Device{h: dh, driver: d, index: i, props: DeviceProperties{
			Name: string(name), UUID: dp.uuid, Type: DeviceType(dp.typ),
			VendorID: dp.vendorID, DeviceID: dp.deviceID, MaxMemAllocSize: dp.maxMemAllocSize,
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
func (d *Driver) device(h uintptr) *Device {
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
func (d *Driver) extensionFunction(name string) (uintptr, error) {
	cname := append([]byte(name), 0)
	var fn uintptr
	if err := checkf("zeDriverGetExtensionFunctionAddress", call(api.driverGetExtensionFunctionAddress, d.h, uintptr(unsafe.Pointer(&cname[0])), uintptr(unsafe.Pointer(&fn))), name); err != nil {
		return 0, err
	}
	return fn, nil
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
	h      uintptr
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
// Destroy waits for calls in progress.
type Context struct {
	mu     sync.RWMutex
	h      uintptr
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
	desc := &zeContextDesc{header: header{stype: stypeContextDesc}}
	var h uintptr
	if err := check("zeContextCreate", call(api.contextCreate, d.h, uintptr(unsafe.Pointer(desc)), uintptr(unsafe.Pointer(&h)))); err != nil {
		return nil, err
	}
	live.contexts.Add(1)
	return &Context{h: h, driver: d, owned: true}, nil
}

// UnsafeContext wraps a ze_context_handle_t that a SYCL runtime handed
// out (sycl::get_native on a context) so its USM pointers can be
// classified. The caller guarantees that raw is a live context of driver d
// for as long as the Context is used; Destroy then only forgets it, the
// runtime keeps ownership. A wrong handle crashes the process.
func (d *Driver) UnsafeContext(raw uintptr) (*Context, error) {
	if raw == 0 {
		return nil, errValue("levelzero.UnsafeContext", "NULL context handle")
	}
	return &Context{h: raw, driver: d}, nil
}

// Driver returns the context's driver.
func (c *Context) Driver() *Driver { return c.driver }

// Destroy destroys the context (zeContextDestroy). Everything created in
// it must be destroyed first. A second Destroy does nothing.
func (c *Context) Destroy() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == 0 {
		return nil
	}
	if n := c.children.Load(); n != 0 {
		return errValue("levelzero.Context.Destroy", itoa(int(n))+" objects (allocations, queues, lists, event pools, IPC mappings) of the context are still alive")
	}
	if c.owned {
		if err := check("zeContextDestroy", call(api.contextDestroy, c.h)); err != nil {
			return err
		}
		live.contexts.Add(-1)
	}
	c.h = 0
	return nil
}

// lock read-locks a live context and returns its handle; a nil or
// destroyed context never reaches C.
func (c *Context) lock(op string) (uintptr, error) {
	if c == nil {
		return 0, errValue(op, "nil *levelzero.Context")
	}
	c.mu.RLock()
	if c.h == 0 {
		c.mu.RUnlock()
		return 0, errValue(op, "the context has been destroyed")
	}
	return c.h, nil
}

func (c *Context) unlock() { c.mu.RUnlock() }

// checkDevice refuses devices of another driver: their handles would be
// meaningless to this context's driver.
func (c *Context) checkDevice(op string, d *Device, optional bool) (uintptr, error) {
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

func utoa(n uintptr) string { return strconv.FormatUint(uint64(n), 10) }

func hexPtr(p uintptr) string { return "0x" + strconv.FormatUint(uint64(p), 16) }
