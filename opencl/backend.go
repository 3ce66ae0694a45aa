package opencl

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/hugepage"
	"github.com/usmbridge/usmbridge/internal/spans"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// Backend is the OpenCL backend of usmbridge: every root device of every
// platform the ICD loader lists, in platform order then device order (the
// order SYCL's OpenCL backend enumerates, so "opencl:cpu:1" means the same
// device to both). It owns one context per platform and one in-order queue
// per device. Every method is safe for concurrent use.
type Backend struct {
	mu     sync.RWMutex // write-locked only by Close
	closed bool
	plats  []*bplat
	devs   []*bdev
	descs  []syclobj.Device
}

type bplat struct {
	ctx  *Context
	devs []*bdev
}

type bdev struct {
	dev   *device
	plat  *bplat
	queue *Queue
	mem   memory
}

var (
	_ usm.Backend   = (*Backend)(nil)
	_ usm.Allocator = (*Backend)(nil)
	// Copy and Queue serve the usm registry, typed copies and dlpack:
	// usm's backends_test.go checks them against the interfaces there.
)

// New opens every OpenCL platform. With no loader or no platform, the
// error matches usm.ErrNotAvailable. Close releases the queues and
// contexts once every allocation has been freed.
func New() (*Backend, error) {
	ps, err := platforms()
	if err != nil {
		return nil, err
	}
	b := &Backend{}
	if err := b.open(ps); err != nil {
		// Nothing may stay behind when a step fails.
		_ = b.release()
		return nil, err
	}
	return b, nil
}

func (b *Backend) open(ps []*platform) error {
	for _, p := range ps {
		if len(p.devs) == 0 {
			continue
		}
		ctx, err := newContext(p.devs...)
		if err != nil {
			return err
		}
		ctx.owner = b
		bp := &bplat{ctx: ctx}
		b.plats = append(b.plats, bp)
		for _, d := range p.devs {
			q, err := ctx.newQueue(d)
			if err != nil {
				return err
			}
			q.owner = b
			bd := &bdev{dev: d, plat: bp, queue: q, mem: d.memory()}
			bp.devs = append(bp.devs, bd)
			b.devs = append(b.devs, bd)
			b.descs = append(b.descs, syclobj.Device{Backend: syclobj.OpenCL, Type: d.syclType(), Name: d.info.name})
		}
	}
	if len(b.devs) == 0 {
		return errkind.New(errkind.NotAvailable, "opencl.New", "no OpenCL device on any platform")
	}
	return nil
}

func (b *Backend) release() error {
	var first error
	for _, p := range b.plats {
		// Programs first: each holds a reference to the context.
		if err := p.ctx.s.progs.Close(); err != nil && first == nil {
			first = err
		}
		for _, d := range p.devs {
			if err := d.queue.close(); err != nil && first == nil {
				first = err
			}
		}
		if err := p.ctx.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close releases the backend's queues and contexts. It refuses (usm.ErrValue)
// while allocations made through the backend are live, because releasing a
// context frees its USM under them. A second Close does nothing.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	n := 0
	for _, p := range b.plats {
		n += p.ctx.s.allocations()
	}
	if n > 0 {
		return errkind.New(errkind.Value, "opencl.Backend.Close", strconv.Itoa(n)+" allocations are still live")
	}
	b.closed = true
	return b.release()
}

// Name returns syclobj.OpenCL.
func (b *Backend) Name() syclobj.Backend { return syclobj.OpenCL }

// Devices lists the devices in backend order.
func (b *Backend) Devices() []syclobj.Device {
	return append([]syclobj.Device(nil), b.descs...)
}

// Context returns the context of device i's platform, for native interop
// (its Native handle for a SYCL runtime's make_context, its QueryPointer).
// It stays owned by the backend.
func (b *Backend) Context(i int) (*Context, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	d, err := b.dev("opencl.Backend.Context", i)
	if err != nil {
		return nil, err
	}
	return d.plat.ctx, nil
}

// Queue returns device i's in-order queue as a *Queue, whose Native handle
// can go to a SYCL runtime's make_queue. It stays owned by the backend.
func (b *Backend) Queue(i int) (usm.Queue, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	d, err := b.dev("opencl.Backend.Queue", i)
	if err != nil {
		return nil, err
	}
	return d.queue, nil
}

// dev returns device local of an open backend; b.mu must be read-locked,
// so that Close waits for the caller's use.
func (b *Backend) dev(op string, local int) (*bdev, error) {
	if b.closed {
		return nil, errkind.New(errkind.Value, op, "the backend is closed")
	}
	if local < 0 || local >= len(b.devs) {
		return nil, errkind.New(errkind.Value, op, "no device "+strconv.Itoa(local)+" ("+strconv.Itoa(len(b.devs))+" OpenCL devices)")
	}
	return b.devs[local], nil
}

// QueryPointer classifies ptr: USM of one of the backend's contexts as the
// runtime reports it (interior pointers included, with base and size), SVM
// allocated through the backend as KindShared with its registered extent,
// anything else KindUnknown. It never passes a pointer to a runtime that
// the runtime's specification does not allow.
func (b *Backend) QueryPointer(ptr uintptr) usm.PointerInfo {
	b.mu.RLock()
	defer b.mu.RUnlock()
	info, _ := b.locate(ptr)
	return info
}

// QueryPointerInContextOf is QueryPointer in the context of device's
// platform alone: memory of another platform's context is KindUnknown,
// as it is to that context's runtime. usm.Registry binds a filter selector
// with it (each platform has its own context here).
func (b *Backend) QueryPointerInContextOf(ptr uintptr, device int) usm.PointerInfo {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if device < 0 || device >= len(b.devs) {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	info, p := b.locate(ptr)
	if p == nil || p != b.devs[device].plat {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	return info
}

func (b *Backend) locate(ptr uintptr) (usm.PointerInfo, *bplat) {
	unknown := usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	if ptr == 0 {
		return unknown, nil
	}
	// Memory the backend allocated is found in its own records first,
	// whose facts were queried once at allocation (allocRec.queried), so
	// a copy between backend memory asks no runtime about any pointer;
	// only foreign pointers go to the platforms' queries, in order.
	for _, p := range b.plats {
		if _, ok := p.ctx.s.find(ptr); ok {
			if pi := p.ctx.QueryPointer(ptr); pi.Kind != usm.KindUnknown {
				return pi, p
			}
		}
	}
	for _, p := range b.plats {
		if pi := p.ctx.queryForeign(ptr); pi.Kind != usm.KindUnknown {
			return pi, p
		}
	}
	return unknown, nil
}

// Alloc allocates size bytes of the given kind on a device. USM devices
// serve each kind as asked (a kind the device reports no capability for is
// usm.ErrNotSupported); fine-grain SVM devices serve every kind with shared
// memory and report it as KindShared. A size of 0 gives a distinct valid
// 1-byte allocation whose Size is 0, as dpctl needs for empty arrays.
// Memory is returned with clMemBlockingFreeINTEL, or for SVM with
// clSVMFree after finishing the context's queues. On a CPU device an
// allocation of 4 MiB or more is advised to use transparent huge pages,
// as the host backend's and NumPy's are.
func (b *Backend) Alloc(device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	b.mu.RLock() // Close waits until the allocation is registered
	defer b.mu.RUnlock()
	d, err := b.dev("opencl.Backend.Alloc", device)
	if err != nil {
		return nil, err
	}
	n := max(size, 1)
	ctx := d.plat.ctx
	var ptr uintptr
	got := kind
	switch d.mem {
	case usmMemory:
		caps := d.dev.info.usm
		var typ uint32
		var capv uint64
		switch kind {
		case usm.KindHost:
			typ, capv = memHost, caps.host
		case usm.KindDevice:
			typ, capv = memDevice, caps.device
		case usm.KindShared:
			typ, capv = memShared, caps.singleDeviceShared
		default:
			return nil, errkind.New(errkind.Value, "opencl.Backend.Alloc", "cannot allocate memory of kind "+kind.String())
		}
		if capv == 0 {
			return nil, errkind.New(errkind.NotSupported, "opencl.Backend.Alloc", d.dev.String()+" reports no "+kind.String()+" USM capability")
		}
		// Host USM records the device it was allocated for, so
		// QueryPointer reports that device's queue for it.
		ptr, err = ctx.usmAlloc(typ, d.dev, n, 0)
	case svmMemory:
		if kind == usm.KindUnknown || kind > usm.KindShared {
			return nil, errkind.New(errkind.Value, "opencl.Backend.Alloc", "cannot allocate memory of kind "+kind.String())
		}
		ptr, err = ctx.svmAlloc(d.dev, n, 0)
		got = usm.KindShared
	default:
		return nil, errkind.New(errkind.NotSupported, "opencl.Backend.Alloc", d.dev.String()+" has neither cl_intel_unified_shared_memory nor fine-grain SVM")
	}
	if err != nil {
		if errors.Is(err, errkind.Memory) {
			return nil, errkind.Wrap(errkind.Memory, "opencl.Backend.Alloc", strconv.FormatUint(uint64(size), 10)+" bytes of "+kind.String()+" memory on "+d.dev.String(), err)
		}
		return nil, err
	}
	if d.dev.info.typ&clapi.DeviceTypeCPU != 0 {
		// On a CPU device every kind of USM is the process's own
		// anonymous memory: large allocations get huge pages, as NumPy's
		// arrays do (internal/hugepage). Only the pages wholly inside this
		// allocation are advised; a GPU's memory is its driver's, and is
		// left alone.
		_ = hugepage.Advise(ptr, size)
	}
	return usm.NewAllocation(b, ptr, size, got, device, func() error { return ctx.free(ptr) }), nil
}

// finish waits for every queue of the platform; nil p does nothing.
func (p *bplat) finish() error {
	if p == nil {
		return nil
	}
	for _, d := range p.devs {
		if err := d.queue.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// Copy copies n bytes and returns when they have arrived. At least one
// side must be memory the backend knows, and a known side must hold all n
// bytes (usm.ErrValue otherwise). When either side is device USM the copy
// is a blocking clEnqueueMemcpyINTEL on that device's queue. Otherwise both
// sides are host-accessible: the queues of the platforms involved are
// finished, so no enqueued command still uses the memory, and Go's memmove
// copies (on a CPU device a runtime copy is a memcpy too, and skipping the
// command round trip, 11-18 µs on PoCL, wins below a few hundred KiB).
// Overlapping ranges are allowed on the memmove path only.
func (b *Backend) Copy(dst, src, n uintptr) error {
	if n == 0 {
		return nil
	}
	if dst == 0 || src == 0 {
		return errkind.New(errkind.Value, "opencl.Backend.Copy", "NULL pointer")
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	di, dp := b.locate(dst)
	si, sp := b.locate(src)
	if di.Kind == usm.KindUnknown && si.Kind == usm.KindUnknown {
		return errkind.New(errkind.Value, "opencl.Backend.Copy", "neither 0x"+strconv.FormatUint(uint64(dst), 16)+" nor 0x"+strconv.FormatUint(uint64(src), 16)+" is memory of the OpenCL backend")
	}
	for _, x := range []struct {
		p    uintptr
		info usm.PointerInfo
	}{{dst, di}, {src, si}} {
		if x.info.Kind != usm.KindUnknown && x.info.HasExtent() && !spans.Holds(x.info.Base, x.info.Size, x.p, n) {
			return errkind.New(errkind.Value, "opencl.Backend.Copy", strconv.FormatUint(uint64(n), 10)+" bytes at 0x"+strconv.FormatUint(uint64(x.p), 16)+" overrun the allocation [0x"+strconv.FormatUint(uint64(x.info.Base), 16)+", +"+strconv.FormatUint(uint64(x.info.Size), 10)+")")
		}
	}
	if di.Kind == usm.KindDevice || si.Kind == usm.KindDevice {
		info, p := di, dp
		if di.Kind != usm.KindDevice {
			info, p = si, sp
		} else if si.Kind == usm.KindDevice && sp != dp {
			return errkind.New(errkind.NotSupported, "opencl.Backend.Copy", "device USM of two different platforms")
		}
		if (di.Kind != usm.KindUnknown && dp != p) || (si.Kind != usm.KindUnknown && sp != p) {
			return errkind.New(errkind.NotSupported, "opencl.Backend.Copy", "USM of two different platforms")
		}
		q := p.devs[0].queue
		if info.Device >= 0 {
			q = b.devs[info.Device].queue
		}
		return q.memcpy(true, dst, src, n)
	}
	if err := dp.finish(); err != nil {
		return err
	}
	if sp != dp {
		if err := sp.finish(); err != nil {
			return err
		}
	}
	cmem.Move(dst, src, n)
	return nil
}

// DescribeDevice says what device i is, for usm.Registry's Device values:
// its vendor, platform (PoCL's and Intel's CPU runtimes tell apart by it)
// and driver; the kinds it allocates, all three served as fine-grain SVM
// where it has no cl_intel_unified_shared_memory (SVM); OpenCL C always
// builds (where the loader has OpenCL 1.2's program entry points), SPIR-V
// where CL_DEVICE_IL_VERSION names it.
func (b *Backend) DescribeDevice(i int) usm.Device {
	if i < 0 || i >= len(b.devs) {
		return usm.Device{}
	}
	bd := b.devs[i]
	d := bd.dev
	x := usm.Device{Vendor: d.info.vendor, Platform: d.platform.info.name, Driver: d.info.driverVersion}
	switch bd.mem {
	case usmMemory:
		for _, k := range []struct {
			kind usm.Kind
			caps uint64
		}{{usm.KindHost, d.info.usm.host}, {usm.KindDevice, d.info.usm.device}, {usm.KindShared, d.info.usm.singleDeviceShared}} {
			if k.caps != 0 {
				x.USM = append(x.USM, k.kind)
			}
		}
	case svmMemory:
		x.USM, x.SVM = []usm.Kind{usm.KindHost, usm.KindDevice, usm.KindShared}, true
	}
	if l, err := lib(); err == nil && l.HasPrograms() {
		x.OpenCLC = true
		if l.HasIL() {
			v, _ := l.DeviceInfoString(d.id, clapi.DeviceILVersion)
			x.SPIRV = strings.Contains(v, "SPIR-V")
		}
	}
	return x
}
