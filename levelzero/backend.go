package levelzero

import (
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// Backend is usmbridge's Level Zero backend: every root device of every
// driver, one context per driver, and per device an immediate command list
// for copies and waits. It implements usm.Backend and usm.Allocator, and
// copies (Copy) and queues (Queue) for the registry; register it in a usm.Registry and
// filter selectors such as "level_zero:gpu:0" resolve to its devices.
// Methods are safe for concurrent use; work on one device is serialised,
// as Level Zero requires for one command list.
type Backend struct {
	mu     sync.RWMutex // write-locked by Close only
	closed bool
	drvs   []*drvState
	devs   []*devState
	desc   []syclobj.Device
}

type drvState struct {
	d   *driver
	ctx *Context
}

type devState struct {
	mu   sync.Mutex // serialises copies (and waits) on the list
	drv  *drvState
	dev  *device
	list *Queue // immediate, synchronous
	pool *eventPool
	done *event // signalled by each copy; host-visible
}

var (
	_ usm.Backend   = (*Backend)(nil)
	_ usm.Allocator = (*Backend)(nil)
	// Copy and Queue serve the usm registry, typed copies and dlpack:
	// usm's backends_test.go checks them against the interfaces there.
)

// New initialises Level Zero (once per process: the loader caches its
// first answer, so driver-selection variables such as
// ZE_ENABLE_ALT_DRIVERS must be set before the first call) and sets up
// every device. Without a loader or a driver the error matches
// usm.ErrNotAvailable. If any step fails, everything created before it is
// destroyed again.
func New() (*Backend, error) {
	if err := initialise(); err != nil {
		return nil, err
	}
	b := &Backend{}
	if err := b.open(); err != nil {
		// Nothing may stay behind when a step fails.
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Backend) open() error {
	for _, d := range drivers {
		ctx, err := newContext(d)
		if err != nil {
			return err
		}
		ctx.owner = b
		st := &drvState{d: d, ctx: ctx}
		b.drvs = append(b.drvs, st)
		for _, dev := range d.devices {
			ds := &devState{drv: st, dev: dev}
			b.devs = append(b.devs, ds)
			if ds.list, err = newImmediateList(ctx, dev, zeapi.QueueModeSynchronous); err != nil {
				return err
			}
			ds.list.owner, ds.list.serial = b, &ds.mu
			if ds.pool, err = newEventPool(ctx, 1, true, dev); err != nil {
				return err
			}
			if ds.done, err = ds.pool.newEvent(0); err != nil {
				return err
			}
			b.desc = append(b.desc, syclobj.Device{Backend: syclobj.LevelZero, Type: dev.syclType(), Name: dev.props.Name})
		}
	}
	if len(b.devs) == 0 {
		return errkind.New(errkind.NotAvailable, "levelzero.New", "the Level Zero drivers report no devices")
	}
	return nil
}

// Close destroys the backend's lists, events and contexts. Memory
// allocated through the backend must be freed first (usm.ErrValue
// otherwise, and the backend stays usable). A second Close does nothing.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, st := range b.drvs {
		// Refuse before destroying anything, so the backend stays usable.
		if n := st.ctx.memory.Load(); n > 0 {
			return errValue("levelzero.Backend.Close", itoa(int(n))+" allocations or IPC mappings made through the backend are still alive")
		}
		if n := st.ctx.progs.evs.held(); n > 0 {
			return errValue("levelzero.Backend.Close", itoa(n)+" kernel launch events are not closed, or their launches not done")
		}
	}
	for i := len(b.devs) - 1; i >= 0; i-- {
		d := b.devs[i]
		keep(d.done.close())
		keep(d.pool.close())
		keep(d.list.close())
	}
	for i := len(b.drvs) - 1; i >= 0; i-- {
		keep(b.drvs[i].ctx.close())
	}
	if first == nil {
		b.closed = true
	}
	return first
}

// Name returns syclobj.LevelZero.
func (b *Backend) Name() syclobj.Backend { return syclobj.LevelZero }

// Devices lists the root devices of all drivers, in driver order.
func (b *Backend) Devices() []syclobj.Device {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return append([]syclobj.Device(nil), b.desc...)
}

// DescribeDevice says what device i is, for usm.Registry's Device values:
// its vendor (PCI vendor id 0x8086 is Intel's), its driver (index and
// version), every kind of USM, and programs from SPIR-V only (Level Zero
// builds no OpenCL C).
func (b *Backend) DescribeDevice(i int) usm.Device {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if i < 0 || i >= len(b.devs) {
		return usm.Device{}
	}
	d := b.devs[i].dev
	vendor := "PCI vendor 0x" + strconv.FormatUint(uint64(d.props.VendorID), 16)
	if d.props.VendorID == 0x8086 {
		vendor = "Intel(R) Corporation"
	}
	return usm.Device{
		Vendor:   vendor,
		Platform: "Level Zero driver " + strconv.Itoa(d.driver.index),
		Driver:   strconv.FormatUint(uint64(d.driver.props.Version), 10),
		USM:      []usm.Kind{usm.KindHost, usm.KindDevice, usm.KindShared},
		SPIRV:    true,
	}
}

// Context returns the backend's context for the driver of device i, for
// native interop: its Native handle, borrowing a SYCL runtime's queues of
// the same context. It stays owned by the backend.
func (b *Backend) Context(i int) (*Context, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	d, err := b.dev("levelzero.Backend.Context", i)
	if err != nil {
		return nil, err
	}
	return d.drv.ctx, nil
}

// Queue returns the queue of device i, the backend's immediate command
// list for it, as a *Queue: its Native handle is the list, and waiting on
// it host-synchronises the list. It stays owned by the backend.
func (b *Backend) Queue(i int) (usm.Queue, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	d, err := b.dev("levelzero.Backend.Queue", i)
	if err != nil {
		return nil, err
	}
	return d.list, nil
}

// dev returns device i of an open backend; b.mu must be read-locked, so
// that Close waits for the caller's use.
func (b *Backend) dev(op string, i int) (*devState, error) {
	if b.closed {
		return nil, errClosedBackend(op)
	}
	if i < 0 || i >= len(b.devs) {
		return nil, errValue(op, "no device "+itoa(i)+" ("+itoa(len(b.devs))+" Level Zero devices)")
	}
	return b.devs[i], nil
}

// QueryPointerInContextOf is QueryPointer in the context of device's
// driver alone: memory of another driver's context is KindUnknown.
// usm.Registry binds a filter selector with it (each driver has its own
// context here; the devices of one driver share it).
func (b *Backend) QueryPointerInContextOf(ptr uintptr, device int) usm.PointerInfo {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if device < 0 || device >= len(b.devs) {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	info, st := b.locate(ptr)
	if st == nil || st != b.devs[device].drv {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	return info
}

// locate returns the driver whose context knows ptr, with the pointer's
// facts; b.mu must be read-locked.
func (b *Backend) locate(ptr uintptr) (usm.PointerInfo, *drvState) {
	unknown := usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	if ptr == 0 {
		return unknown, nil
	}
	for _, st := range b.drvs {
		if info := st.ctx.QueryPointer(ptr); info.Kind != usm.KindUnknown {
			return info, st
		}
	}
	return unknown, nil
}

// QueryPointer classifies ptr with zeMemGetAllocProperties in each
// driver's context, and reports the containing allocation from
// zeMemGetAddressRange. Anything the drivers do not know, NULL included,
// is KindUnknown; errors are never fatal here.
func (b *Backend) QueryPointer(ptr uintptr) usm.PointerInfo {
	b.mu.RLock()
	defer b.mu.RUnlock()
	info, _ := b.locate(ptr)
	return info
}

// Alloc allocates USM of the given kind. Host memory belongs to the
// context of the device's driver and is not bound to the device. A size
// of 0 still returns a distinct valid pointer (Level Zero refuses size 0,
// dpctl wants a pointer for empty arrays), backed by one byte.
func (b *Backend) Alloc(device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	b.mu.RLock() // Close waits until the allocation is counted
	defer b.mu.RUnlock()
	d, err := b.dev("levelzero.Backend.Alloc", device)
	if err != nil {
		return nil, err
	}
	if kind != usm.KindHost && kind != usm.KindDevice && kind != usm.KindShared {
		return nil, errValue("levelzero.Backend.Alloc", "cannot allocate USM of kind "+kind.String())
	}
	dev := d.dev
	if kind == usm.KindHost {
		dev = nil
	}
	ctx := d.drv.ctx
	p, err := ctx.alloc(kind, dev, max(size, 1), 0)
	if err != nil {
		return nil, err
	}
	return usm.NewAllocation(b, p, size, kind, device, func() error { return ctx.free(p) }), nil
}

// Copy copies n bytes between USM or host pointers through the immediate
// command list of the device that owns dst (else src, else device 0), and
// returns when the bytes have arrived: the copy signals a host-visible
// event that is waited for and reset.
func (b *Backend) Copy(dst, src, n uintptr) error {
	const op = "levelzero.Backend.Copy"
	if n == 0 {
		return nil
	}
	if dst == 0 || src == 0 {
		return errValue(op, "NULL pointer")
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	dev := 0
	if info, _ := b.locate(dst); info.Device >= 0 {
		dev = info.Device
	} else if info, _ := b.locate(src); info.Device >= 0 {
		dev = info.Device
	}
	d, err := b.dev(op, dev)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.list.appendCopy(dst, src, n, d.done); err != nil {
		return err
	}
	if err := d.done.hostSynchronize(zeapi.Infinite); err != nil {
		return err
	}
	return d.done.hostReset()
}
