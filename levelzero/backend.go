package levelzero

import (
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// Backend is usmbridge's Level Zero backend: every root device of every
// driver, one context per driver, and per device an immediate command list
// for copies and waits. It implements usm.Backend, usm.Allocator,
// usm.Copier and usm.QueueProvider; register it in a usm.Registry and
// filter selectors such as "level_zero:gpu:0" resolve to its devices.
// Methods are safe for concurrent use; work on one device is serialised,
// as Level Zero requires for one command list.
type Backend struct {
	mu   sync.RWMutex // write-locked by Close only
	drvs []*drvState
	devs []*devState
	desc []syclobj.Device
}

type drvState struct {
	d   *Driver
	ctx *Context
}

type devState struct {
	mu   sync.Mutex
	drv  *drvState
	dev  *Device
	list *CommandList // immediate, synchronous
	pool *EventPool
	done *Event // signalled by each copy; host-visible
}

var (
	_ usm.Backend       = (*Backend)(nil)
	_ usm.Allocator     = (*Backend)(nil)
	_ usm.Copier        = (*Backend)(nil)
	_ usm.QueueProvider = (*Backend)(nil)
)

// New initialises Level Zero (see Init) and sets up every device.
// Without a driver the error matches errkind.NotAvailable. If any step
// fails, everything created before it is destroyed again.
func New() (_ *Backend, err error) {
	ds, err := Drivers()
	if err != nil {
		return nil, err
	}
	b := &Backend{}
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()
	for _, d := range ds {
		ctx, err := d.NewContext()
		if err != nil {
			return nil, err
		}
		st := &drvState{d: d, ctx: ctx}
		b.drvs = append(b.drvs, st)
		for _, dev := range d.devices {
			ds := &devState{drv: st, dev: dev}
			b.devs = append(b.devs, ds)
			if ds.list, err = ctx.NewImmediateCommandList(dev, QueueModeSynchronous); err != nil {
				return nil, err
			}
			if ds.pool, err = ctx.NewEventPool(1, true, dev); err != nil {
				return nil, err
			}
			if ds.done, err = ds.pool.NewEvent(0); err != nil {
				return nil, err
			}
			p := dev.Properties()
			b.desc = append(b.desc, syclobj.Device{Backend: syclobj.LevelZero, Type: p.Type.SYCL(), Name: p.Name})
		}
	}
	if len(b.devs) == 0 {
		return nil, errkind.New(errkind.NotAvailable, "levelzero.New", "the Level Zero drivers report no devices")
	}
	return b, nil
}

// Close destroys the backend's lists, events and contexts. Memory
// allocated through the backend must be freed first. A second Close does
// nothing.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for i := len(b.devs) - 1; i >= 0; i-- {
		d := b.devs[i]
		keep(d.done.Close())
		keep(d.pool.Close())
		keep(d.list.Close())
	}
	for i := len(b.drvs) - 1; i >= 0; i-- {
		keep(b.drvs[i].ctx.Close())
	}
	if first == nil {
		b.devs, b.drvs, b.desc = nil, nil, nil
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

// Device returns the Level Zero device behind a backend-local index.
func (b *Backend) Device(i int) (*Device, error) {
	d, err := b.dev("levelzero.Backend.Device", i)
	if err != nil {
		return nil, err
	}
	return d.dev, nil
}

// Context returns the backend's context for the driver of device i, for
// IPC and other direct use. It stays owned by the backend.
func (b *Backend) Context(i int) (*Context, error) {
	d, err := b.dev("levelzero.Backend.Context", i)
	if err != nil {
		return nil, err
	}
	return d.drv.ctx, nil
}

func (b *Backend) dev(op string, i int) (*devState, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if i < 0 || i >= len(b.devs) {
		return nil, errValue(op, "no device "+itoa(i)+" ("+itoa(len(b.devs))+" Level Zero devices)")
	}
	return b.devs[i], nil
}

func (b *Backend) index(d *Device) int {
	for i, s := range b.devs {
		if s.dev == d {
			return i
		}
	}
	return -1
}

// QueryPointer classifies ptr with zeMemGetAllocProperties in each
// driver's context, and reports the containing allocation from
// zeMemGetAddressRange. Anything the drivers do not know, NULL included,
// is KindUnknown; errors are never fatal here.
func (b *Backend) QueryPointer(ptr uintptr) usm.PointerInfo {
	unknown := usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	if ptr == 0 {
		return unknown
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, st := range b.drvs {
		mi, ok := st.ctx.query(ptr)
		if !ok {
			continue
		}
		info := usm.PointerInfo{Kind: MemoryType(mi.Type).Kind(), Device: -1}
		if mi.Device != 0 {
			info.Device = b.index(st.d.device(mi.Device))
		}
		if mi.Base != 0 && mi.Base <= ptr && ptr-mi.Base < max(mi.Size, 1) {
			info.Base, info.Size = mi.Base, mi.Size
		}
		return info
	}
	return unknown
}

// Alloc allocates USM of the given kind. Host memory belongs to the
// context of the device's driver and is not bound to the device. A size
// of 0 still returns a distinct valid pointer (Level Zero refuses size 0,
// dpctl wants a pointer for empty arrays), backed by one byte.
func (b *Backend) Alloc(device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	d, err := b.dev("levelzero.Backend.Alloc", device)
	if err != nil {
		return nil, err
	}
	ctx, n := d.drv.ctx, max(size, 1)
	var p uintptr
	switch kind {
	case usm.KindHost:
		p, err = ctx.AllocHost(n, 0)
	case usm.KindDevice:
		p, err = ctx.AllocDevice(d.dev, n, 0)
	case usm.KindShared:
		p, err = ctx.AllocShared(d.dev, n, 0)
	default:
		return nil, errValue("levelzero.Backend.Alloc", "cannot allocate USM of kind "+kind.String())
	}
	if err != nil {
		return nil, err
	}
	return usm.NewAllocation(b, p, size, kind, device, func() error { return ctx.Free(p) }), nil
}

// Copy copies n bytes between USM or host pointers through an immediate
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
	dev := 0
	if i := b.QueryPointer(dst).Device; i >= 0 {
		dev = i
	} else if i := b.QueryPointer(src).Device; i >= 0 {
		dev = i
	}
	d, err := b.dev(op, dev)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.list.AppendMemoryCopy(dst, src, n, d.done); err != nil {
		return err
	}
	if err := d.done.HostSynchronize(Infinite); err != nil {
		return err
	}
	return d.done.HostReset()
}

// Queue returns the queue of a device: waiting on it host-synchronises the
// device's immediate command list.
func (b *Backend) Queue(device int) (usm.Queue, error) {
	d, err := b.dev("levelzero.Backend.Queue", device)
	if err != nil {
		return nil, err
	}
	return devQueue{d}, nil
}

type devQueue struct{ d *devState }

func (q devQueue) Wait() error {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	return q.d.list.HostSynchronize(Infinite)
}
