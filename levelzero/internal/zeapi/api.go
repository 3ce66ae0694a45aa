// Package zeapi binds Intel's Level Zero loader (libze_loader.so.1)
// through internal/ffi, with a typed Go function per C function, Go
// mirrors of the C structs it passes, and the ze_result_t codes. It does
// no validation beyond the C signatures: every handle is passed to the
// driver as given, so only package levelzero, which guards its handles,
// may use it.
package zeapi

import (
	"bytes"
	"strconv"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// Loader is the SONAME of the Level Zero loader. The unversioned
// libze_loader.so exists only with libze-dev installed, so it is never
// opened.
const Loader = "libze_loader.so.1"

// Native Level Zero handles.
type (
	Driver       uintptr // ze_driver_handle_t
	Device       uintptr // ze_device_handle_t
	Context      uintptr // ze_context_handle_t
	CommandQueue uintptr // ze_command_queue_handle_t
	CommandList  uintptr // ze_command_list_handle_t
	EventPool    uintptr // ze_event_pool_handle_t
	Event        uintptr // ze_event_handle_t
)

// Lib is the loader's table of entry points. Every function here takes
// integers and pointers only and is called through ffi.Fn (SyscallN),
// except the two that take the 64-byte IPC handle by value, which are
// registered as Go funcs for purego's struct passing.
type Lib struct {
	lib *ffi.Lib

	init, driverGet, driverGetAPIVersion, driverGetProperties               ffi.Fn
	driverGetIpcProperties, driverGetExtensionFunctionAddress               ffi.Fn
	deviceGet, deviceGetProperties, contextCreate, contextDestroy           ffi.Fn
	memAllocHost, memAllocDevice, memAllocShared, memFree                   ffi.Fn
	memGetAllocProperties, memGetAddressRange                               ffi.Fn
	memGetIpcHandle, memOpenIpcHandle, memCloseIpcHandle                    ffi.Fn
	commandQueueCreate, commandQueueDestroy                                 ffi.Fn
	commandQueueExecuteCommandLists, commandQueueSynchronize                ffi.Fn
	commandListCreate, commandListCreateImmediate                           ffi.Fn
	commandListClose, commandListReset, commandListDestroy                  ffi.Fn
	commandListAppendMemoryCopy, commandListAppendMemoryFill                ffi.Fn
	commandListAppendBarrier                                                ffi.Fn
	eventPoolCreate, eventPoolDestroy, eventCreate, eventDestroy            ffi.Fn
	eventHostSignal, eventHostSynchronize, eventQueryStatus, eventHostReset ffi.Fn

	// Optional: absent from loader 1.8.12 (Debian 12). Zero when absent.
	initDrivers                ffi.Fn // spec 1.10, loader ≥ 1.18
	commandListHostSynchronize ffi.Fn // spec 1.6, loader ≥ 1.10
	memPutIpcHandle            ffi.Fn // spec 1.6, loader ≥ 1.10

	// Optional (kernels.go): modules, kernels and launches.
	kern kernelFns

	openIpcHandle func(ctx Context, dev Device, h IPCHandle, flags uint32, pptr *uintptr) Status
	putIpcHandle  func(ctx Context, h IPCHandle) Status // nil when absent
}

// Load opens the loader and resolves the table. The error matches
// errkind.NotAvailable: an *ffi.LibraryError without a loader, an
// *ffi.MissingSymbolsError listing every absent entry point with one too
// old to use.
func Load() (*Lib, error) {
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, Loader)
	if err != nil {
		return nil, err
	}
	l := &Lib{lib: lib}
	err = lib.Resolve(append([]ffi.Symbol{
		ffi.Required(&l.init, "zeInit"),
		ffi.Required(&l.driverGet, "zeDriverGet"),
		ffi.Required(&l.driverGetAPIVersion, "zeDriverGetApiVersion"),
		ffi.Required(&l.driverGetProperties, "zeDriverGetProperties"),
		ffi.Required(&l.driverGetIpcProperties, "zeDriverGetIpcProperties"),
		ffi.Required(&l.deviceGet, "zeDeviceGet"),
		ffi.Required(&l.deviceGetProperties, "zeDeviceGetProperties"),
		ffi.Required(&l.contextCreate, "zeContextCreate"),
		ffi.Required(&l.contextDestroy, "zeContextDestroy"),
		ffi.Required(&l.memAllocHost, "zeMemAllocHost"),
		ffi.Required(&l.memAllocDevice, "zeMemAllocDevice"),
		ffi.Required(&l.memAllocShared, "zeMemAllocShared"),
		ffi.Required(&l.memFree, "zeMemFree"),
		ffi.Required(&l.memGetAllocProperties, "zeMemGetAllocProperties"),
		ffi.Required(&l.memGetAddressRange, "zeMemGetAddressRange"),
		ffi.Required(&l.memGetIpcHandle, "zeMemGetIpcHandle"),
		ffi.Required(&l.memOpenIpcHandle, "zeMemOpenIpcHandle"),
		ffi.Required(&l.memCloseIpcHandle, "zeMemCloseIpcHandle"),
		ffi.Required(&l.commandQueueSynchronize, "zeCommandQueueSynchronize"),
		ffi.Required(&l.commandListCreateImmediate, "zeCommandListCreateImmediate"),
		ffi.Required(&l.commandListDestroy, "zeCommandListDestroy"),
		ffi.Required(&l.commandListAppendMemoryCopy, "zeCommandListAppendMemoryCopy"),
		ffi.Required(&l.commandListAppendBarrier, "zeCommandListAppendBarrier"),
		ffi.Required(&l.eventPoolCreate, "zeEventPoolCreate"),
		ffi.Required(&l.eventPoolDestroy, "zeEventPoolDestroy"),
		ffi.Required(&l.eventCreate, "zeEventCreate"),
		ffi.Required(&l.eventDestroy, "zeEventDestroy"),
		ffi.Required(&l.eventHostSynchronize, "zeEventHostSynchronize"),
		ffi.Required(&l.eventHostReset, "zeEventHostReset"),
		// Looked up, never assumed: purego's RegisterLibFunc would panic
		// on them with loader 1.8.12.
		ffi.Optional(&l.initDrivers, "zeInitDrivers"),
		ffi.Optional(&l.commandListHostSynchronize, "zeCommandListHostSynchronize"),
		ffi.Optional(&l.memPutIpcHandle, "zeMemPutIpcHandle"),
		// Not called by package levelzero: its tests use them to stand in
		// for a SYCL runtime and to reach the fake driver's hooks, so a
		// loader without them still serves the package.
		ffi.Optional(&l.eventQueryStatus, "zeEventQueryStatus"),
		ffi.Optional(&l.eventHostSignal, "zeEventHostSignal"),
		ffi.Optional(&l.commandListAppendMemoryFill, "zeCommandListAppendMemoryFill"),
		ffi.Optional(&l.commandListReset, "zeCommandListReset"),
		ffi.Optional(&l.commandListClose, "zeCommandListClose"),
		ffi.Optional(&l.commandListCreate, "zeCommandListCreate"),
		ffi.Optional(&l.commandQueueExecuteCommandLists, "zeCommandQueueExecuteCommandLists"),
		ffi.Optional(&l.commandQueueDestroy, "zeCommandQueueDestroy"),
		ffi.Optional(&l.commandQueueCreate, "zeCommandQueueCreate"),
		ffi.Optional(&l.driverGetExtensionFunctionAddress, "zeDriverGetExtensionFunctionAddress"),
	}, l.kernelEntries()...)...)
	if err != nil {
		return nil, err
	}
	l.memOpenIpcHandle.Register(&l.openIpcHandle)
	l.memPutIpcHandle.Register(&l.putIpcHandle)
	return l, nil
}

// Absent lists the optional entry points the loader lacks.
func (l *Lib) Absent() []string { return l.lib.Absent() }

func hexPtr(p uintptr) string { return "0x" + strconv.FormatUint(uint64(p), 16) }

func utoa(n uintptr) string { return strconv.FormatUint(uint64(n), 10) }

// absent is the error of an optional entry point the loader lacks.
func absent(op string) error {
	return &Error{Op: op, Status: ErrorUnsupportedFeature, Detail: "the loader does not export it"}
}

// sliceArg returns the count and address of a handle array for C.
func sliceArg[T ~uintptr](hs []T) (uintptr, uintptr) {
	if len(hs) == 0 {
		return 0, 0
	}
	return uintptr(len(hs)), uintptr(unsafe.Pointer(&hs[0]))
}

// --- initialisation and drivers ---

// HasInitDrivers reports whether the loader exports zeInitDrivers.
func (l *Lib) HasInitDrivers() bool { return l.initDrivers.Present() }

// InitDriversGPU runs zeInitDrivers for GPU drivers (spec 1.10) and
// returns their handles.
func (l *Lib) InitDriversGPU() ([]Driver, error) {
	desc := &zeInitDriverTypeDesc{header: header{stype: stypeInitDriverTypeDesc}, flags: initDriverTypeFlagGPU}
	var n uint32
	if err := check("zeInitDrivers", l.initDrivers.Call3(uintptr(unsafe.Pointer(&n)), 0, uintptr(unsafe.Pointer(desc)))); err != nil || n == 0 {
		return nil, err
	}
	hs := make([]Driver, n)
	if err := check("zeInitDrivers", l.initDrivers.Call3(uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&hs[0])), uintptr(unsafe.Pointer(desc)))); err != nil {
		return nil, err
	}
	return hs[:min(int(n), len(hs))], nil
}

// Init runs zeInit with no flags (all driver types).
func (l *Lib) Init() error { return check("zeInit", l.init.Call1(0)) }

// DriverGet lists the drivers after Init (zeDriverGet).
func (l *Lib) DriverGet() ([]Driver, error) {
	var n uint32
	if err := check("zeDriverGet", l.driverGet.Call2(uintptr(unsafe.Pointer(&n)), 0)); err != nil || n == 0 {
		return nil, err
	}
	hs := make([]Driver, n)
	if err := check("zeDriverGet", l.driverGet.Call2(uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&hs[0])))); err != nil {
		return nil, err
	}
	return hs[:min(int(n), len(hs))], nil
}

// DriverProperties is the part of ze_driver_properties_t and
// ze_driver_ipc_properties_t usmbridge uses.
type DriverProperties struct {
	UUID       [16]byte
	Version    uint32
	APIVersion uint32 // (major<<16)|minor
	IPCFlags   uint32 // ZE_IPC_PROPERTY_FLAG_*
}

// DriverProperties reads a driver's properties, API version and IPC
// properties.
func (l *Lib) DriverProperties(d Driver) (DriverProperties, error) {
	var dp DriverProperties
	p := &zeDriverProperties{header: header{stype: stypeDriverProperties}}
	if err := check("zeDriverGetProperties", l.driverGetProperties.Call2(uintptr(d), uintptr(unsafe.Pointer(p)))); err != nil {
		return dp, err
	}
	dp.UUID, dp.Version = p.uuid, p.driverVersion
	v := new(uint32)
	if err := check("zeDriverGetApiVersion", l.driverGetAPIVersion.Call2(uintptr(d), uintptr(unsafe.Pointer(v)))); err != nil {
		return dp, err
	}
	dp.APIVersion = *v
	ip := &zeDriverIpcProperties{header: header{stype: stypeDriverIpcProperties}}
	if err := check("zeDriverGetIpcProperties", l.driverGetIpcProperties.Call2(uintptr(d), uintptr(unsafe.Pointer(ip)))); err != nil {
		return dp, err
	}
	dp.IPCFlags = ip.flags
	return dp, nil
}

// DriverExtensionFunction returns the address of a driver extension
// function (zeDriverGetExtensionFunctionAddress). The caller must wrap it
// in a typed function of its C signature.
func (l *Lib) DriverExtensionFunction(d Driver, name string) (ffi.Fn, error) {
	if !l.driverGetExtensionFunctionAddress.Present() {
		return 0, absent("zeDriverGetExtensionFunctionAddress")
	}
	cname := append([]byte(name), 0)
	fn := new(ffi.Fn)
	err := checkf("zeDriverGetExtensionFunctionAddress", l.driverGetExtensionFunctionAddress.Call3(uintptr(d), uintptr(unsafe.Pointer(&cname[0])), uintptr(unsafe.Pointer(fn))), func() string { return name })
	return *fn, err
}

// DeviceGet lists a driver's root devices (zeDeviceGet).
func (l *Lib) DeviceGet(d Driver) ([]Device, error) {
	var n uint32
	if err := check("zeDeviceGet", l.deviceGet.Call3(uintptr(d), uintptr(unsafe.Pointer(&n)), 0)); err != nil || n == 0 {
		return nil, err
	}
	hs := make([]Device, n)
	if err := check("zeDeviceGet", l.deviceGet.Call3(uintptr(d), uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&hs[0])))); err != nil {
		return nil, err
	}
	return hs[:min(int(n), len(hs))], nil
}

// DeviceProperties is the part of ze_device_properties_t usmbridge uses.
type DeviceProperties struct {
	Name            string
	UUID            [16]byte
	Type            uint32 // ze_device_type_t
	VendorID        uint32
	DeviceID        uint32
	MaxMemAllocSize uint64
}

// DeviceProperties reads a device's properties (zeDeviceGetProperties).
func (l *Lib) DeviceProperties(dev Device) (DeviceProperties, error) {
	dp := &zeDeviceProperties{header: header{stype: stypeDeviceProperties}}
	if err := check("zeDeviceGetProperties", l.deviceGetProperties.Call2(uintptr(dev), uintptr(unsafe.Pointer(dp)))); err != nil {
		return DeviceProperties{}, err
	}
	name := dp.name[:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return DeviceProperties{Name: string(name), UUID: dp.uuid, Type: dp.typ, VendorID: dp.vendorID,
		DeviceID: dp.deviceID, MaxMemAllocSize: dp.maxMemAllocSize}, nil
}

// --- contexts and memory ---

// ContextCreate creates a context on a driver (zeContextCreate).
func (l *Lib) ContextCreate(d Driver) (Context, error) {
	desc := &zeContextDesc{header: header{stype: stypeContextDesc}}
	c := new(Context)
	err := check("zeContextCreate", l.contextCreate.Call3(uintptr(d), uintptr(unsafe.Pointer(desc)), uintptr(unsafe.Pointer(c))))
	return *c, err
}

// ContextDestroy destroys a context (zeContextDestroy).
func (l *Lib) ContextDestroy(c Context) error {
	return check("zeContextDestroy", l.contextDestroy.Call1(uintptr(c)))
}

// allocScratch holds the descriptors and the out-pointer of an allocation
// in one heap object.
type allocScratch struct {
	dev  zeDeviceMemAllocDesc
	host zeHostMemAllocDesc
	p    uintptr
}

func newAllocScratch() *allocScratch {
	return &allocScratch{dev: zeDeviceMemAllocDesc{header: header{stype: stypeDeviceMemAllocDesc}},
		host: zeHostMemAllocDesc{header: header{stype: stypeHostMemAllocDesc}}}
}

func allocated(op string, r uintptr, p, size, alignment uintptr) (uintptr, error) {
	if err := checkf(op, r, func() string { return "size " + utoa(size) + ", alignment " + utoa(alignment) }); err != nil {
		return 0, err
	}
	if p == 0 {
		return 0, &Error{Op: op, Status: ErrorUnknown, Detail: "driver returned SUCCESS and a NULL pointer"}
	}
	return p, nil
}

// MemAllocHost allocates host USM (zeMemAllocHost).
func (l *Lib) MemAllocHost(c Context, size, alignment uintptr) (uintptr, error) {
	s := newAllocScratch()
	r := l.memAllocHost.Call5(uintptr(c), uintptr(unsafe.Pointer(&s.host)), size, alignment, uintptr(unsafe.Pointer(&s.p)))
	return allocated("zeMemAllocHost", r, s.p, size, alignment)
}

// MemAllocDevice allocates device USM on dev (zeMemAllocDevice).
func (l *Lib) MemAllocDevice(c Context, dev Device, size, alignment uintptr) (uintptr, error) {
	s := newAllocScratch()
	r := l.memAllocDevice.Call6(uintptr(c), uintptr(unsafe.Pointer(&s.dev)), size, alignment, uintptr(dev), uintptr(unsafe.Pointer(&s.p)))
	return allocated("zeMemAllocDevice", r, s.p, size, alignment)
}

// MemAllocShared allocates shared USM (zeMemAllocShared); dev may be 0.
func (l *Lib) MemAllocShared(c Context, dev Device, size, alignment uintptr) (uintptr, error) {
	s := newAllocScratch()
	r := l.memAllocShared.Call7(uintptr(c), uintptr(unsafe.Pointer(&s.dev)), uintptr(unsafe.Pointer(&s.host)), size, alignment, uintptr(dev), uintptr(unsafe.Pointer(&s.p)))
	return allocated("zeMemAllocShared", r, s.p, size, alignment)
}

// MemFree frees USM (zeMemFree).
func (l *Lib) MemFree(c Context, p uintptr) error {
	return checkf("zeMemFree", l.memFree.Call2(uintptr(c), p), func() string { return "pointer " + hexPtr(p) })
}

// Memory types (ze_memory_type_t).
const (
	MemoryTypeUnknown      = 0
	MemoryTypeHost         = 1
	MemoryTypeDevice       = 2
	MemoryTypeShared       = 3
	MemoryTypeHostImported = 4 // newer specs: host memory imported from the system
)

// AllocProperties is what zeMemGetAllocProperties reports.
type AllocProperties struct {
	Type     uint32 // MemoryType*
	ID       uint64
	PageSize uint64
	Device   Device // 0 for host memory
}

// MemAllocProperties classifies p (zeMemGetAllocProperties); memory the
// driver does not know is MemoryTypeUnknown with no error.
func (l *Lib) MemAllocProperties(c Context, p uintptr) (AllocProperties, error) {
	s := &queryScratch{props: zeMemoryAllocationProperties{header: header{stype: stypeMemoryAllocationProps}}}
	if err := check("zeMemGetAllocProperties", l.memGetAllocProperties.Call4(uintptr(c), p, uintptr(unsafe.Pointer(&s.props)), uintptr(unsafe.Pointer(&s.dev)))); err != nil {
		return AllocProperties{}, err
	}
	return AllocProperties{Type: s.props.typ, ID: s.props.id, PageSize: s.props.pageSize, Device: s.dev}, nil
}

// MemAddressRange returns the allocation containing p
// (zeMemGetAddressRange); drivers answer an error for memory they do not
// know (Intel's: ZE_RESULT_ERROR_UNKNOWN).
func (l *Lib) MemAddressRange(c Context, p uintptr) (base, size uintptr, err error) {
	s := new([2]uintptr)
	if err := checkf("zeMemGetAddressRange", l.memGetAddressRange.Call4(uintptr(c), p, uintptr(unsafe.Pointer(&s[0])), uintptr(unsafe.Pointer(&s[1]))), func() string { return "pointer " + hexPtr(p) }); err != nil {
		return 0, 0, err
	}
	return s[0], s[1], nil
}

// queryScratch holds every out-parameter of a pointer query in one heap
// object, so a query costs one allocation.
type queryScratch struct {
	props      zeMemoryAllocationProperties
	dev        Device
	base, size uintptr
}

// MemInfo is the result of MemQuery.
type MemInfo struct {
	Type       uint32
	Device     Device
	Base, Size uintptr // 0 when the driver cannot tell
}

// MemQuery is the hot path of a pointer query: alloc properties, then
// the address range of known memory. ok is false for unknown memory and
// for any error (a query never fails loudly).
func (l *Lib) MemQuery(c Context, p uintptr) (info MemInfo, ok bool) {
	s := &queryScratch{props: zeMemoryAllocationProperties{header: header{stype: stypeMemoryAllocationProps}}}
	if Status(uint32(l.memGetAllocProperties.Call4(uintptr(c), p, uintptr(unsafe.Pointer(&s.props)), uintptr(unsafe.Pointer(&s.dev))))) != Success {
		return info, false
	}
	info.Type, info.Device = s.props.typ, s.dev
	if info.Type == MemoryTypeUnknown {
		return info, false
	}
	if Status(uint32(l.memGetAddressRange.Call4(uintptr(c), p, uintptr(unsafe.Pointer(&s.base)), uintptr(unsafe.Pointer(&s.size))))) == Success {
		info.Base, info.Size = s.base, s.size
	}
	return info, true
}

// MemGetIpcHandle exports the allocation at base (zeMemGetIpcHandle).
func (l *Lib) MemGetIpcHandle(c Context, base uintptr) (IPCHandle, error) {
	h := new(IPCHandle)
	err := checkf("zeMemGetIpcHandle", l.memGetIpcHandle.Call3(uintptr(c), base, uintptr(unsafe.Pointer(h))), func() string { return "pointer " + hexPtr(base) })
	return *h, err
}

// HasPutIpcHandle reports whether the loader exports zeMemPutIpcHandle.
func (l *Lib) HasPutIpcHandle() bool { return l.putIpcHandle != nil }

// MemPutIpcHandle releases an exported handle (zeMemPutIpcHandle, spec
// 1.6). Check HasPutIpcHandle first.
func (l *Lib) MemPutIpcHandle(c Context, h IPCHandle) error {
	if s := l.putIpcHandle(c, h); s != Success {
		return &Error{Op: "zeMemPutIpcHandle", Status: s}
	}
	return nil
}

// MemOpenIpcHandle maps exported memory for dev (zeMemOpenIpcHandle).
func (l *Lib) MemOpenIpcHandle(c Context, dev Device, h IPCHandle) (uintptr, error) {
	var p uintptr
	if s := l.openIpcHandle(c, dev, h, 0, &p); s != Success {
		return 0, &Error{Op: "zeMemOpenIpcHandle", Status: s}
	}
	return p, nil
}

// MemCloseIpcHandle unmaps memory opened from a handle
// (zeMemCloseIpcHandle).
func (l *Lib) MemCloseIpcHandle(c Context, p uintptr) error {
	return checkf("zeMemCloseIpcHandle", l.memCloseIpcHandle.Call2(uintptr(c), p), func() string { return "pointer " + hexPtr(p) })
}

// --- command queues and lists ---

// CommandQueueCreate creates a queue on dev, ordinal 0, index 0
// (zeCommandQueueCreate).
func (l *Lib) CommandQueueCreate(c Context, dev Device, mode QueueMode) (CommandQueue, error) {
	if !l.commandQueueCreate.Present() {
		return 0, absent("zeCommandQueueCreate")
	}
	desc := &zeCommandQueueDesc{header: header{stype: stypeCommandQueueDesc}, mode: uint32(mode)}
	q := new(CommandQueue)
	err := check("zeCommandQueueCreate", l.commandQueueCreate.Call4(uintptr(c), uintptr(dev), uintptr(unsafe.Pointer(desc)), uintptr(unsafe.Pointer(q))))
	return *q, err
}

// CommandQueueDestroy destroys a queue (zeCommandQueueDestroy).
func (l *Lib) CommandQueueDestroy(q CommandQueue) error {
	if !l.commandQueueDestroy.Present() {
		return absent("zeCommandQueueDestroy")
	}
	return check("zeCommandQueueDestroy", l.commandQueueDestroy.Call1(uintptr(q)))
}

// CommandQueueExecute submits closed regular lists
// (zeCommandQueueExecuteCommandLists, no fence).
func (l *Lib) CommandQueueExecute(q CommandQueue, lists []CommandList) error {
	if !l.commandQueueExecuteCommandLists.Present() {
		return absent("zeCommandQueueExecuteCommandLists")
	}
	n, p := sliceArg(lists)
	return check("zeCommandQueueExecuteCommandLists", l.commandQueueExecuteCommandLists.Call4(uintptr(q), n, p, 0))
}

// CommandQueueSynchronize waits for a queue (zeCommandQueueSynchronize);
// with a finite timeout, NotReady means not yet done.
func (l *Lib) CommandQueueSynchronize(q CommandQueue, timeout uint64) error {
	return check("zeCommandQueueSynchronize", l.commandQueueSynchronize.Call2(uintptr(q), uintptr(timeout)))
}

// CommandListCreate creates a regular list (zeCommandListCreate).
func (l *Lib) CommandListCreate(c Context, dev Device) (CommandList, error) {
	if !l.commandListCreate.Present() {
		return 0, absent("zeCommandListCreate")
	}
	desc := &zeCommandListDesc{header: header{stype: stypeCommandListDesc}}
	cl := new(CommandList)
	err := check("zeCommandListCreate", l.commandListCreate.Call4(uintptr(c), uintptr(dev), uintptr(unsafe.Pointer(desc)), uintptr(unsafe.Pointer(cl))))
	return *cl, err
}

// CommandListCreateImmediate creates an immediate list
// (zeCommandListCreateImmediate).
func (l *Lib) CommandListCreateImmediate(c Context, dev Device, mode QueueMode) (CommandList, error) {
	desc := &zeCommandQueueDesc{header: header{stype: stypeCommandQueueDesc}, mode: uint32(mode)}
	cl := new(CommandList)
	err := check("zeCommandListCreateImmediate", l.commandListCreateImmediate.Call4(uintptr(c), uintptr(dev), uintptr(unsafe.Pointer(desc)), uintptr(unsafe.Pointer(cl))))
	return *cl, err
}

// CommandListClose ends recording of a regular list.
func (l *Lib) CommandListClose(cl CommandList) error {
	if !l.commandListClose.Present() {
		return absent("zeCommandListClose")
	}
	return check("zeCommandListClose", l.commandListClose.Call1(uintptr(cl)))
}

// CommandListReset empties a regular list.
func (l *Lib) CommandListReset(cl CommandList) error {
	if !l.commandListReset.Present() {
		return absent("zeCommandListReset")
	}
	return check("zeCommandListReset", l.commandListReset.Call1(uintptr(cl)))
}

// CommandListDestroy destroys a list.
func (l *Lib) CommandListDestroy(cl CommandList) error {
	return check("zeCommandListDestroy", l.commandListDestroy.Call1(uintptr(cl)))
}

// AppendMemoryCopy appends a copy of n bytes that signals signal (may be
// 0) after the wait events (zeCommandListAppendMemoryCopy).
func (l *Lib) AppendMemoryCopy(cl CommandList, dst, src, n uintptr, signal Event, wait []Event) error {
	nw, pw := sliceArg(wait)
	return checkf("zeCommandListAppendMemoryCopy", l.commandListAppendMemoryCopy.Call7(uintptr(cl), dst, src, n, uintptr(signal), nw, pw),
		func() string { return "copy of " + utoa(n) + " bytes from " + hexPtr(src) + " to " + hexPtr(dst) })
}

// AppendMemoryFill appends a fill with a repeated, non-empty pattern,
// which the driver copies (zeCommandListAppendMemoryFill).
func (l *Lib) AppendMemoryFill(cl CommandList, dst uintptr, pattern []byte, n uintptr, signal Event, wait []Event) error {
	if !l.commandListAppendMemoryFill.Present() {
		return absent("zeCommandListAppendMemoryFill")
	}
	nw, pw := sliceArg(wait)
	return check("zeCommandListAppendMemoryFill", l.commandListAppendMemoryFill.Call8(uintptr(cl), dst, uintptr(unsafe.Pointer(&pattern[0])), uintptr(len(pattern)), n, uintptr(signal), nw, pw))
}

// AppendBarrier appends a barrier (zeCommandListAppendBarrier).
func (l *Lib) AppendBarrier(cl CommandList, signal Event, wait []Event) error {
	nw, pw := sliceArg(wait)
	return check("zeCommandListAppendBarrier", l.commandListAppendBarrier.Call4(uintptr(cl), uintptr(signal), nw, pw))
}

// HasCommandListHostSynchronize reports whether the loader exports
// zeCommandListHostSynchronize (loader ≥ 1.10).
func (l *Lib) HasCommandListHostSynchronize() bool { return l.commandListHostSynchronize.Present() }

// CommandListHostSynchronize waits for an immediate list
// (zeCommandListHostSynchronize). Check HasCommandListHostSynchronize
// first.
func (l *Lib) CommandListHostSynchronize(cl CommandList, timeout uint64) error {
	return check("zeCommandListHostSynchronize", l.commandListHostSynchronize.Call2(uintptr(cl), uintptr(timeout)))
}

// --- events ---

// EventPoolCreate creates a pool of count events; devs may be empty (all
// devices of the context) (zeEventPoolCreate).
func (l *Lib) EventPoolCreate(c Context, count uint32, hostVisible bool, devs []Device) (EventPool, error) {
	desc := &zeEventPoolDesc{header: header{stype: stypeEventPoolDesc}, count: count}
	if hostVisible {
		desc.flags = eventPoolFlagHostVisible
	}
	nd, pd := sliceArg(devs)
	p := new(EventPool)
	err := check("zeEventPoolCreate", l.eventPoolCreate.Call5(uintptr(c), uintptr(unsafe.Pointer(desc)), nd, pd, uintptr(unsafe.Pointer(p))))
	return *p, err
}

// EventPoolDestroy destroys a pool (zeEventPoolDestroy).
func (l *Lib) EventPoolDestroy(p EventPool) error {
	return check("zeEventPoolDestroy", l.eventPoolDestroy.Call1(uintptr(p)))
}

// EventCreate creates the event at index with host scope for signal and
// wait, so the host sees memory written before the signal (zeEventCreate).
func (l *Lib) EventCreate(p EventPool, index uint32) (Event, error) {
	desc := &zeEventDesc{header: header{stype: stypeEventDesc}, index: index, signal: eventScopeFlagHost, wait: eventScopeFlagHost}
	e := new(Event)
	err := check("zeEventCreate", l.eventCreate.Call3(uintptr(p), uintptr(unsafe.Pointer(desc)), uintptr(unsafe.Pointer(e))))
	return *e, err
}

// EventDestroy destroys an event (zeEventDestroy).
func (l *Lib) EventDestroy(e Event) error {
	return check("zeEventDestroy", l.eventDestroy.Call1(uintptr(e)))
}

// EventHostSignal signals an event from the host (zeEventHostSignal).
func (l *Lib) EventHostSignal(e Event) error {
	if !l.eventHostSignal.Present() {
		return absent("zeEventHostSignal")
	}
	return check("zeEventHostSignal", l.eventHostSignal.Call1(uintptr(e)))
}

// EventHostSynchronize waits for an event (zeEventHostSynchronize); with
// a finite timeout, NotReady means not yet signalled.
func (l *Lib) EventHostSynchronize(e Event, timeout uint64) error {
	return check("zeEventHostSynchronize", l.eventHostSynchronize.Call2(uintptr(e), uintptr(timeout)))
}

// EventQueryStatus returns Success for a signalled event and NotReady for
// one that is not (zeEventQueryStatus); any other code is an error.
func (l *Lib) EventQueryStatus(e Event) Status {
	if !l.eventQueryStatus.Present() {
		return ErrorUnsupportedFeature
	}
	return Status(uint32(l.eventQueryStatus.Call1(uintptr(e))))
}

// EventHostReset resets an event (zeEventHostReset).
func (l *Lib) EventHostReset(e Event) error {
	return check("zeEventHostReset", l.eventHostReset.Call1(uintptr(e)))
}
