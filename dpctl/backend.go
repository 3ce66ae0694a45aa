package dpctl

import (
	"errors"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/dpctl/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/hugepage"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// Backend is dpctl's SYCL runtime seen from Go, through the very
// libDPCTLSyclInterface.so that dpctl's Python package loaded. It is a
// usm.Backend whose devices are sycl::device::get_devices() in order, so a
// backend-local device index is the kDLOneAPI device_id; it is also a
// usm.Allocator, binds SyclContextRef/SyclQueueRef syclobj values
// (BindRef), numbers devices for DLPack (DLPackDevice, LocalDevice), and
// copies (Copy) and gives queues (Queue) for the registry: usm's
// backends_test.go checks these against usm's interfaces. It lives as
// long as the process: its device and context references are dpctl's
// cache's, shared with Python.
type Backend struct {
	api   *dpctlapi.API
	devs  []*device
	descs []syclobj.Device
	ctxs  []*defaultCtx     // distinct cached (default) contexts with USM, for QueryPointer
	nat   dpctlapi.Native   // to allocation extents (native.go)
	order dpctlapi.Ordering // device-side ordering (queue.go)
	reg   *usm.Registry
	pins  pins // queues a caller keeps alive, bound in one C call (pin.go)

	interop dpctlapi.Interop // SYCL contexts from native ones (interop.go)
	lent    lentObjects      // the native objects lent to SYCL so far

	progs  progCache    // programs built for its queues (program.go)
	events *eventSource // launch events
}

type device struct {
	ref                      uintptr     // DPCTLSyclDeviceRef (owned)
	ctx                      uintptr     // dpctl's cached context of the device (owned)
	defCtx                   uintptr     // the platform's default context (owned; 0 if none)
	usm                      bool        // the device can allocate USM (see hasUSM)
	vendor, driver, platform string      // what DescribeDevice says of it
	cached                   *defaultCtx // ctx among Backend.ctxs (nil without USM)
	qOnce                    sync.Once
	q                        *Queue
	qErr                     error
}

var (
	_ usm.Backend   = (*Backend)(nil)
	_ usm.Allocator = (*Backend)(nil)
)

// Open binds the libDPCTLSyclInterface.so* in dir, the directory of
// dpctl's Python package, and enumerates its devices. Only an instance the
// process has already loaded will do (RTLD_NOLOAD), so import dpctl first
// (pybridge's Python.Dpctl does both): queues, contexts and the device
// cache are then the very ones dpctl's Python objects hold. A library that
// is missing, not loaded or without the functions the backend calls, or a
// device list the runtime cannot give, is a usm.ErrNotAvailable error
// saying which.
func Open(dir string) (*Backend, error) {
	matches, _ := filepath.Glob(filepath.Join(dir, "libDPCTLSyclInterface.so*"))
	if len(matches) == 0 {
		return nil, errkind.New(errkind.NotAvailable, "dpctl.Open", "no libDPCTLSyclInterface.so in "+dir)
	}
	api, err := dpctlapi.Open(matches...)
	var le *ffi.LibraryError
	if errors.As(err, &le) {
		return nil, errkind.Wrap(errkind.NotAvailable, "dpctl.Open", "dpctl's C library is not loaded (import dpctl first)", err)
	}
	if err != nil {
		return nil, err
	}
	b := &Backend{api: api, nat: api.Native(), order: api.Ordering(), interop: api.Interop(), events: newEventSource(api)}
	if err := b.enumerate(); err != nil {
		return nil, err
	}
	b.reg = usm.NewRegistry(b)
	return b, nil
}

func (b *Backend) enumerate() error {
	a := b.api
	vec := a.DeviceMgrGetDevices(dpctlapi.AllBackends | dpctlapi.AllDevices)
	if vec == 0 {
		return errkind.New(errkind.NotAvailable, "dpctl.Open", "DPCTLDeviceMgr_GetDevices failed")
	}
	defer a.DeviceVectorDelete(vec)
	n := a.DeviceVectorSize(vec)
	for i := range n {
		ref := a.DeviceVectorGetAt(vec, i)
		if ref == 0 {
			continue
		}
		dev := &device{ref: ref, ctx: a.DeviceMgrGetCachedContext(ref), usm: b.hasUSM(ref)}
		if p := a.DeviceGetPlatform(ref); p != 0 {
			dev.defCtx = a.PlatformGetDefaultContext(p)
			dev.platform = a.PlatformGetName(p)
			a.PlatformDelete(p)
		}
		dev.vendor, dev.driver = a.DeviceGetVendor(ref), a.DeviceGetDriverVersion(ref)
		desc := syclobj.Device{}
		switch a.DeviceGetBackend(ref) {
		case dpctlapi.BackendOpenCL:
			desc.Backend = syclobj.OpenCL
		case dpctlapi.BackendLevelZero:
			desc.Backend = syclobj.LevelZero
		case dpctlapi.BackendCUDA:
			desc.Backend = syclobj.CUDA
		case dpctlapi.BackendHIP:
			desc.Backend = syclobj.HIP
		}
		switch a.DeviceGetDeviceType(ref) {
		case dpctlapi.DeviceCPU:
			desc.Type = syclobj.CPU
		case dpctlapi.DeviceGPU:
			desc.Type = syclobj.GPU
		case dpctlapi.DeviceAccelerator:
			desc.Type = syclobj.Accelerator
		}
		desc.Name = a.DeviceGetName(ref)
		b.devs = append(b.devs, dev)
		b.descs = append(b.descs, desc)
	}
	for i := range b.devs {
		c := b.devs[i].ctx
		if c == 0 || !b.devs[i].usm {
			continue // never ask a context without USM about pointers
		}
		var same *defaultCtx
		for _, o := range b.ctxs {
			if a.ContextAreEq(o.ref, c) {
				same = o
				break
			}
		}
		if same == nil {
			same = &defaultCtx{ref: c}
			b.ctxs = append(b.ctxs, same)
		}
		same.devs = append(same.devs, i)
		b.devs[i].cached = same
	}
	return nil
}

// Registry returns a registry holding this backend (and nothing else):
// its device order is dpctl's.
func (b *Backend) Registry() *usm.Registry { return b.reg }

// Name returns the backend of the first device (OpenCL when there is none).
// The devices themselves carry their own backends.
func (b *Backend) Name() syclobj.Backend {
	if len(b.descs) > 0 && b.descs[0].Backend != syclobj.AnyBackend {
		return b.descs[0].Backend
	}
	return syclobj.OpenCL
}

// Devices lists the root devices in sycl::device::get_devices() order.
func (b *Backend) Devices() []syclobj.Device { return append([]syclobj.Device(nil), b.descs...) }

// DescribeDevice says what device i is, for usm.Registry's Device values:
// vendor, SYCL platform and driver as dpctl reports them, the kinds of
// USM its aspects allow, OpenCL C programs on OpenCL devices and SPIR-V
// on OpenCL and Level Zero ones (Queue.BuildProgram).
func (b *Backend) DescribeDevice(i int) usm.Device {
	if i < 0 || i >= len(b.devs) {
		return usm.Device{}
	}
	d := b.devs[i]
	x := usm.Device{Vendor: d.vendor, Platform: d.platform, Driver: d.driver}
	for _, k := range []struct {
		kind   usm.Kind
		aspect int
	}{{usm.KindHost, dpctlapi.AspectUSMHost}, {usm.KindDevice, dpctlapi.AspectUSMDevice}, {usm.KindShared, dpctlapi.AspectUSMShared}} {
		if b.api.DeviceHasAspect(d.ref, k.aspect) {
			x.USM = append(x.USM, k.kind)
		}
	}
	switch b.descs[i].Backend {
	case syclobj.OpenCL:
		x.OpenCLC, x.SPIRV = true, true
	case syclobj.LevelZero:
		x.SPIRV = true
	}
	return x
}

func usmKind(t int) usm.Kind {
	switch t {
	case dpctlapi.USMDevice:
		return usm.KindDevice
	case dpctlapi.USMShared:
		return usm.KindShared
	case dpctlapi.USMHost:
		return usm.KindHost
	}
	return usm.KindUnknown
}

// pointerIn classifies ptr in context ctx and finds its (root) device. The
// type is asked first: DPCTLUSM_GetPointerDevice throws through the C ABI
// for pointers the context does not know.
func (b *Backend) pointerIn(ptr, ctx uintptr) usm.PointerInfo {
	a := b.api
	if ptr == 0 || ctx == 0 {
		return usm.PointerInfo{Device: -1}
	}
	k := usmKind(a.USMGetPointerType(ptr, ctx))
	if k == usm.KindUnknown {
		return usm.PointerInfo{Device: -1}
	}
	info := usm.PointerInfo{Kind: k, Device: -1}
	if dev := a.USMGetPointerDevice(ptr, ctx); dev != 0 {
		info.Device = b.position(dev)
		a.DeviceDelete(dev)
	}
	return info
}

// position returns the index of dev's root device in Devices(), or -1. It
// does not take dev.
func (b *Backend) position(dev uintptr) int {
	a := b.api
	root := dev
	for {
		p := a.DeviceGetParentDevice(root)
		if p == 0 {
			break
		}
		if root != dev {
			a.DeviceDelete(root)
		}
		root = p
	}
	pos := -1
	for i := range b.devs {
		if a.DeviceAreEq(b.devs[i].ref, root) {
			pos = i
			break
		}
	}
	if root != dev {
		a.DeviceDelete(root)
	}
	return pos
}

// QueryPointer classifies ptr in each device's default (cached) context,
// and reports the allocation's extent where the context's native runtime
// can tell it (OpenCL with cl_intel_unified_shared_memory, Level Zero;
// see native.go).
func (b *Backend) QueryPointer(ptr uintptr) usm.PointerInfo {
	info, _ := b.locateExtent(ptr, true)
	return info
}

// QueryPointerInContextOf is QueryPointer in device's cached context
// alone, the one a filter selector naming the device binds to
// (dpctl.SyclQueue(filter) makes its queue there): memory of another
// context is KindUnknown, and a device without USM knows no pointer.
// usm.Registry binds filter selectors with it.
func (b *Backend) QueryPointerInContextOf(ptr uintptr, device int) usm.PointerInfo {
	if device < 0 || device >= len(b.devs) || b.devs[device].cached == nil {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	c := b.devs[device].cached
	info := b.pointerIn(ptr, c.ref)
	if info.Kind != usm.KindUnknown {
		info.Base, info.Size = c.native(b).extent(ptr)
	}
	return info
}

// locate is QueryPointer without the extent: the kind and device, and the
// default context that knows ptr (nil if none does).
func (b *Backend) locate(ptr uintptr) (usm.PointerInfo, *defaultCtx) {
	return b.locateExtent(ptr, false)
}

// locateExtent is locate, with the extent when withExtent. A context of
// one device whose native side classifies every pointer is asked there
// alone: its answer has the kind and the extent, and the device is that
// one, in three native calls instead of SYCL's five (type, device, its
// parent, comparisons) plus the native ones for the extent.
func (b *Backend) locateExtent(ptr uintptr, withExtent bool) (usm.PointerInfo, *defaultCtx) {
	for _, c := range b.ctxs {
		if n := c.native(b); len(c.devs) == 1 && n.classifies() {
			if info := n.query(ptr); info.Kind != usm.KindUnknown {
				info.Device = c.devs[0]
				if !withExtent {
					info.Base, info.Size = 0, 0
				}
				return info, c
			}
			continue
		}
		if info := b.pointerIn(ptr, c.ref); info.Kind != usm.KindUnknown {
			if withExtent {
				info.Base, info.Size = c.native(b).extent(ptr)
			}
			return info, c
		}
	}
	return usm.PointerInfo{Device: -1}, nil
}

// hasUSM reports whether a device supports any kind of USM allocation.
//
// Why it matters: DPCTLUSM_GetPointerType has no try/catch, and SYCL's
// get_pointer_type throws in a context whose devices have no USM (PoCL 3.1
// on OpenCL, for one), which aborts the process. Pointers are only ever
// classified in contexts that pass this check.
func (b *Backend) hasUSM(dev uintptr) bool {
	for _, asp := range []int{dpctlapi.AspectUSMDevice, dpctlapi.AspectUSMHost, dpctlapi.AspectUSMShared} {
		if b.api.DeviceHasAspect(dev, asp) {
			return true
		}
	}
	return false
}

// usmContext reports whether pointers may be classified in ctx: it is one
// of the USM-capable default contexts (returned as def), or one of its
// devices has USM.
func (b *Backend) usmContext(ctx uintptr) (ok bool, def *defaultCtx) {
	a := b.api
	for _, c := range b.ctxs {
		if a.ContextAreEq(c.ref, ctx) {
			return true, c
		}
	}
	vec := a.ContextGetDevices(ctx)
	if vec == 0 {
		return false, nil
	}
	defer a.DeviceVectorDelete(vec)
	for i := range a.DeviceVectorSize(vec) {
		dev := a.DeviceVectorGetAt(vec, i)
		ok := dev != 0 && b.hasUSM(dev)
		if dev != 0 {
			a.DeviceDelete(dev)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// BindRef binds ptr to a syclobj reference for the usm registry, with
// dpctl's rules for syclobj: for a queue, the pointer must be USM of the
// queue's context and the array is on the queue's device, with (a copy
// of) that queue; for a context, the pointer's type is checked first, then
// its device, and a new queue is made on that context and device. A
// pinned queue (PinQueue) is bound from what its pin learnt, in one C
// call.
func (b *Backend) BindRef(ref syclobj.Obj, ptr uintptr) (usm.PointerInfo, usm.Queue, bool, error) {
	a := b.api
	switch r := ref.(type) {
	case syclobj.QueueRef:
		if r.Pointer() == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "dpctl.BindRef", "NULL SyclQueueRef")
		}
		if info, q, hit, err := b.pins.bind(b, r.Pointer(), ptr); hit {
			return info, q, true, err
		}
		ctx := a.QueueGetContext(r.Pointer())
		if ctx == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "dpctl.BindRef", "cannot get the queue's context")
		}
		ok, def := b.usmContext(ctx)
		if !ok {
			a.ContextDelete(ctx)
			return usm.PointerInfo{}, nil, true, errQueueNoUSM()
		}
		k := usmKind(a.USMGetPointerType(ptr, ctx))
		if k == usm.KindUnknown {
			a.ContextDelete(ctx)
			return usm.PointerInfo{}, nil, true, errNotQueueUSM()
		}
		info := usm.PointerInfo{Kind: k, Device: -1}
		info.Base, info.Size = b.extentIn(ctx, def, ptr)
		a.ContextDelete(ctx)
		if dev := a.QueueGetDevice(r.Pointer()); dev != 0 {
			info.Device = b.position(dev)
			a.DeviceDelete(dev)
		}
		q := a.QueueCopy(r.Pointer())
		if q == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "dpctl.BindRef", "DPCTLQueue_Copy failed")
		}
		return info, b.ownQueue(q), true, nil
	case syclobj.ContextRef:
		ctx := r.Pointer()
		if ctx == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "dpctl.BindRef", "NULL SyclContextRef")
		}
		ok, def := b.usmContext(ctx)
		if !ok {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "dpctl.BindRef", "no device of the context supports USM")
		}
		k := usmKind(a.USMGetPointerType(ptr, ctx))
		if k == usm.KindUnknown {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "dpctl.BindRef", "not a USM pointer of the context")
		}
		dev := a.USMGetPointerDevice(ptr, ctx)
		if dev == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "dpctl.BindRef", "cannot get the pointer's device")
		}
		defer a.DeviceDelete(dev)
		info := usm.PointerInfo{Kind: k, Device: b.position(dev)}
		info.Base, info.Size = b.extentIn(ctx, def, ptr)
		q := a.QueueCreate(ctx, dev)
		if q == 0 {
			return usm.PointerInfo{}, nil, true, errkind.New(errkind.Value, "dpctl.BindRef", "DPCTLQueue_Create failed")
		}
		return info, b.ownQueue(q), true, nil
	}
	return usm.PointerInfo{}, nil, false, nil
}

func errQueueNoUSM() error {
	return errkind.New(errkind.Value, "dpctl.BindRef", "the queue's device does not support USM")
}

func errNotQueueUSM() error {
	return errkind.New(errkind.Value, "dpctl.BindRef", "not a USM pointer of the queue's context")
}

// DLPackDevice returns (kDLOneAPI, device): local indices are positions in
// get_devices().
func (b *Backend) DLPackDevice(device int) (usm.DLDevice, error) {
	if device < 0 || device >= len(b.devs) {
		return dlabi.Device{}, errkind.New(errkind.Buffer, "dpctl.DLPackDevice", "no SYCL device "+strconv.Itoa(device))
	}
	return dlabi.Device{Type: dlabi.OneAPI, ID: int32(device)}, nil
}

// LocalDevice maps a kDLOneAPI device id back.
func (b *Backend) LocalDevice(dv usm.DLDevice) (int, bool) {
	if dv.Type != dlabi.OneAPI || dv.ID < 0 || int(dv.ID) >= len(b.devs) {
		return -1, false
	}
	return int(dv.ID), true
}

// Alloc allocates USM of the given kind with the device's queue. A size of
// 0 allocates one byte, so the pointer is valid (dpctl requires it). On a
// CPU device an allocation of 4 MiB or more is advised to use transparent
// huge pages (RATIONALE.md, "Huge pages for large host allocations").
func (b *Backend) Alloc(device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	q, err := b.queue(device)
	if err != nil {
		return nil, err
	}
	return b.alloc(q, device, kind, size)
}

func (b *Backend) alloc(q *Queue, device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	if device < 0 || device >= len(b.devs) {
		return nil, errkind.New(errkind.Value, "dpctl.Alloc", "no SYCL device "+strconv.Itoa(device))
	}
	var malloc func(size, q uintptr) uintptr
	var aspect int
	switch kind {
	case usm.KindDevice:
		malloc, aspect = b.api.MallocDevice, dpctlapi.AspectUSMDevice
	case usm.KindShared:
		malloc, aspect = b.api.MallocShared, dpctlapi.AspectUSMShared
	case usm.KindHost:
		malloc, aspect = b.api.MallocHost, dpctlapi.AspectUSMHost
	default:
		return nil, errkind.New(errkind.Value, "dpctl.Alloc", "cannot allocate USM of kind "+kind.String())
	}
	// The SYCL runtime throws, through dpctl's C API, out of the process
	// (abort) when the device cannot allocate this kind: ask first.
	if !b.api.DeviceHasAspect(b.devs[device].ref, aspect) {
		return nil, errkind.New(errkind.NotSupported, "dpctl.Alloc", b.descs[device].Name+" cannot allocate "+kind.String()+" USM (no usm_"+kind.String()+"_allocations aspect)")
	}
	p := malloc(max(size, 1), q.ref)
	if p == 0 {
		return nil, errkind.New(errkind.Memory, "dpctl.Alloc", "cannot allocate "+strconv.FormatUint(uint64(size), 10)+" bytes of "+kind.String()+" USM")
	}
	if b.descs[device].Type == syclobj.CPU {
		// A CPU device's USM of every kind is the process's own memory:
		// large allocations get huge pages, as the opencl backend's and
		// NumPy's do (internal/hugepage).
		_ = hugepage.Advise(p, size)
	}
	api := b.api
	return usm.NewAllocation(b, p, size, kind, device, func() error {
		api.FreeWithQueue(p, q.ref)
		return nil
	}), nil
}

// AllocOn allocates USM of the given kind in the context of q, a queue of
// device (a dpctl.SyclQueue a caller named: its context need not be the
// device's default one, and memory for its kernels must be in its own).
// As Alloc otherwise.
func (b *Backend) AllocOn(q *Queue, device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	if q == nil || q.b != b {
		return nil, errkind.New(errkind.Value, "dpctl.AllocOn", "the queue is not one of this dpctl's")
	}
	return b.alloc(q, device, kind, size)
}

// Copy copies n bytes between USM and/or host memory and waits for it, on
// the queue of the device that owns dst or src.
func (b *Backend) Copy(dst, src, n uintptr) error {
	if n == 0 {
		return nil
	}
	dev := 0
	if info, _ := b.locate(dst); info.Device >= 0 {
		dev = info.Device
	} else if info, _ := b.locate(src); info.Device >= 0 {
		dev = info.Device
	}
	q, err := b.queue(dev)
	if err != nil {
		return err
	}
	return q.Copy(dst, src, n)
}
