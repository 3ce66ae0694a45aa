package usm

import (
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// Registry holds the backends of a process and the global device order that
// filter selectors and kDLOneAPI device ids refer to (see package syclobj):
// backends are ranked Level Zero, OpenCL, CUDA, HIP, host; backends of the
// same rank keep the order they were added in. A Registry is safe for
// concurrent use.
type Registry struct {
	mu        sync.RWMutex
	backends  []Backend
	devices   []globalDevice
	descs     []syclobj.Device
	selectors map[globalDevice]syclobj.Selector // SelectorFor results
}

type globalDevice struct {
	b     Backend
	local int
}

// NewRegistry returns a registry holding bs.
func NewRegistry(bs ...Backend) *Registry {
	r := &Registry{}
	for _, b := range bs {
		r.add(b)
	}
	return r
}

// add registers a backend and rebuilds the global device order.
func (r *Registry) add(b Backend) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// A new slice each time: rankedBackends hands the current one out
	// without copying, so a published slice is never written again.
	bs := append(slices.Clone(r.backends), b)
	slices.SortStableFunc(bs, func(x, y Backend) int { return int(x.Name()) - int(y.Name()) })
	r.backends = bs
	r.devices, r.descs = r.devices[:0], r.descs[:0]
	r.selectors = map[globalDevice]syclobj.Selector{}
	// seen counts, per (backend, device type), the devices so far in the
	// global order, which is what device_num in backend:type:num counts. A
	// backend such as dpctl's spans several SYCL backends, so each device
	// is named by its own backend, not by the registering one.
	type key struct {
		b syclobj.Backend
		t syclobj.DeviceType
	}
	seen := map[key]int{}
	for _, be := range r.backends {
		for i, d := range be.Devices() {
			gd := globalDevice{be, i}
			r.devices = append(r.devices, gd)
			r.descs = append(r.descs, d)
			k := key{d.Backend, d.Type}
			// Built once here because imports ask for them often.
			if sel, err := syclobj.ParseSelector(d.Backend.String() + ":" + d.Type.String() + ":" + strconv.Itoa(seen[k])); err == nil {
				r.selectors[gd] = sel
			}
			seen[k]++
		}
	}
}

// rankedBackends returns the registered backends in rank order. The
// slice is shared and must not be written: add replaces it, never changes
// it, so a caller may range over it after the lock is gone.
func (r *Registry) rankedBackends() []Backend {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.backends
}

// deviceAt returns the backend and backend-local index of a global device.
func (r *Registry) deviceAt(global int) (Backend, int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if global < 0 || global >= len(r.devices) {
		return nil, -1, errkind.New(errkind.Value, "usm.Registry.Device", "no device with global index "+strconv.Itoa(global)+" ("+strconv.Itoa(len(r.devices))+" devices)")
	}
	d := r.devices[global]
	return d.b, d.local, nil
}

// globalIndex returns the global index of a backend-local device, or -1.
func (r *Registry) globalIndex(b Backend, local int) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for i, d := range r.devices {
		if d.b == b && d.local == local {
			return i
		}
	}
	return -1
}

// Select resolves a filter selector against the global order.
func (r *Registry) Select(sel syclobj.Selector) (Backend, int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, err := sel.Resolve(r.descs)
	if err != nil {
		return nil, -1, err
	}
	d := r.devices[i]
	return d.b, d.local, nil
}

// SelectorFor returns a filter selector naming a registered backend-local
// device: backend:device_type:n, with the device's own SYCL backend and n
// counting the devices of that backend and type before it in the global
// order, so that the selector resolves back to the same device.
func (r *Registry) SelectorFor(b Backend, local int) (syclobj.Selector, error) {
	r.mu.RLock()
	sel, ok := r.selectors[globalDevice{b, local}]
	r.mu.RUnlock()
	if !ok {
		return syclobj.Selector{}, errkind.New(errkind.Value, "usm.Registry.SelectorFor", "device "+strconv.Itoa(local)+" of backend "+b.Name().String()+" is not registered")
	}
	return sel, nil
}

// Lookup returns the first backend that knows ptr, in rank order, with what
// it knows; nil and KindUnknown if none does.
func (r *Registry) Lookup(ptr uintptr) (Backend, PointerInfo) {
	if ptr == 0 {
		return nil, PointerInfo{Device: -1}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, b := range r.backends {
		if info := b.QueryPointer(ptr); info.Kind != KindUnknown {
			return b, info
		}
	}
	return nil, PointerInfo{Device: -1}
}

// dlpackDevice returns the DLPack device of memory on a backend-local
// device (what arrays get as DLDevice): (kDLCPU, 0) for the host backend, (kDLOneAPI, global index) for
// SYCL backends unless the backend numbers devices itself.
func (r *Registry) dlpackDevice(b Backend, local int) (DLDevice, error) {
	if b == nil || b.Name() == syclobj.Host {
		return dlabi.Device{Type: dlabi.CPU, ID: 0}, nil
	}
	if d, ok := b.(dlpackDevicer); ok {
		return d.DLPackDevice(local)
	}
	g := r.globalIndex(b, local)
	if g < 0 {
		return dlabi.Device{}, errkind.New(errkind.Buffer, "usm.Registry.DLPackDevice", "device "+strconv.Itoa(local)+" of backend "+b.Name().String()+" is not registered")
	}
	return dlabi.Device{Type: dlabi.OneAPI, ID: int32(g)}, nil
}

// FromDLPackDevice returns the backend and backend-local device of a
// kDLOneAPI device: backends that number devices themselves are asked
// first, then the id is taken as a global index.
func (r *Registry) FromDLPackDevice(d DLDevice) (Backend, int, error) {
	if d.Type != dlabi.OneAPI {
		return nil, -1, errkind.New(errkind.Buffer, "usm.Registry.FromDLPackDevice", "device "+d.String()+" is not kDLOneAPI")
	}
	for _, b := range r.rankedBackends() {
		if dd, ok := b.(dlpackDevicer); ok {
			if local, ok := dd.LocalDevice(d); ok {
				return b, local, nil
			}
		}
	}
	b, local, err := r.deviceAt(int(d.ID))
	if err != nil {
		return nil, -1, err
	}
	if _, ok := b.(dlpackDevicer); ok || b.Name() == syclobj.Host {
		return nil, -1, errkind.New(errkind.Buffer, "usm.Registry.FromDLPackDevice", "no SYCL device with kDLOneAPI id "+strconv.Itoa(int(d.ID)))
	}
	return b, local, nil
}

// BindingError reports a pointer that is not a USM pointer of the context
// its syclobj names, or device or shared USM of another device than the
// one a filter selector names (Reason then names both devices). It
// matches ErrValue, as in dpctl.
type BindingError struct {
	Pointer uintptr
	Syclobj syclobj.Obj
	Reason  string
	Err     error
}

func (e *BindingError) Error() string {
	s := "__sycl_usm_array_interface__ is malformed: 'data' field is not consistent with 'syclobj' field, the pointer " + hex(e.Pointer) + " is not bound to SyclContext derived from dict('syclobj': " + describeSyclobj(e.Syclobj) + ")"
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *BindingError) Is(target error) bool { return target == ErrValue }
func (e *BindingError) Unwrap() error        { return e.Err }

// ExtentError reports an array whose bytes reach outside the allocation its
// pointer belongs to. It matches ErrValue.
type ExtentError struct {
	Window     [2]uintptr // [lo, hi) absolute addresses the array touches
	Allocation [2]uintptr // [base, base+size) of the allocation
}

func (e *ExtentError) Error() string {
	return fmt.Sprintf("the array's bytes [%s, %s) reach outside its allocation [%s, %s)",
		hex(e.Window[0]), hex(e.Window[1]), hex(e.Allocation[0]), hex(e.Allocation[1]))
}

func (e *ExtentError) Is(target error) bool { return target == ErrValue }

// binding is what step 6 of parsing learns about the pointer.
type binding struct {
	b      Backend
	info   PointerInfo
	device int
	q      Queue
}

func (r *Registry) bind(ptr uintptr, o syclobj.Obj) (binding, error) {
	resolved, err := resolveSyclobj(o)
	if err != nil && !isSyclobjError(err) {
		return binding{}, err // the capsule source's own error (resolveSyclobj), as it is
	}
	if err != nil { // the error names the syclobj as given, not the nil it resolved to
		return binding{}, &BindingError{Pointer: ptr, Syclobj: o, Err: err}
	}
	o = resolved
	if ptr == 0 {
		return binding{}, &BindingError{Pointer: ptr, Syclobj: o, Reason: "NULL is never a USM pointer"}
	}
	switch x := o.(type) {
	case syclobj.Selector:
		b, dev, err := r.Select(x)
		if err != nil {
			return binding{}, &BindingError{Pointer: ptr, Syclobj: o, Err: err}
		}
		info, reason := r.onSelected(b, dev, ptr)
		if reason != "" {
			return binding{}, &BindingError{Pointer: ptr, Syclobj: o, Reason: reason}
		}
		var q Queue
		if qp, ok := b.(queueProvider); ok {
			if q, err = qp.Queue(dev); err != nil {
				return binding{}, &BindingError{Pointer: ptr, Syclobj: o, Err: err}
			}
		}
		return binding{b: b, info: info, device: dev, q: q}, nil
	case syclobj.ContextRef, syclobj.QueueRef:
		for _, b := range r.rankedBackends() {
			rb, ok := b.(refBinder)
			if !ok {
				continue
			}
			info, q, ok, err := rb.BindRef(o, ptr)
			if !ok {
				continue
			}
			if err != nil {
				return binding{}, &BindingError{Pointer: ptr, Syclobj: o, Err: err}
			}
			return binding{b: b, info: info, device: info.Device, q: q}, nil
		}
		return binding{}, &BindingError{Pointer: ptr, Syclobj: o, Reason: "no registered backend understands SYCL context or queue references (is dpctl loaded?)"}
	}
	return binding{}, &BindingError{Pointer: ptr, Syclobj: o, Reason: fmt.Sprintf("unsupported syclobj %T", o)}
}

// onSelected classifies ptr for the device dev of b that a filter
// selector named, with dpctl's rule for a filter string: the selector
// names a device, the device its default context, and ptr must be USM of
// that context (contextQuerier; a backend with one context asks
// QueryPointer). Memory of another context is refused even where the
// backend knows it: two OpenCL platforms, or dpctl's devices of different
// platforms. Within the context, host USM belongs to every device, and the
// array is on the named one, as in dpctl. Device and shared USM belong to
// the device the backend reports, and is refused for another device of
// the same context (two Level Zero devices of one driver): dpctl would
// bind it to the named device without asking, and the array would then
// claim a device that did not allocate its memory (RATIONALE.md, "A filter
// selector binds memory of its device's context"). reason, when not
// empty, says why ptr is refused, naming both devices.
func (r *Registry) onSelected(b Backend, dev int, ptr uintptr) (info PointerInfo, reason string) {
	if cq, ok := b.(contextQuerier); ok {
		info = cq.QueryPointerInContextOf(ptr, dev)
	} else {
		info = b.QueryPointer(ptr)
	}
	if info.Kind == KindUnknown {
		return info, r.notInContext(b, dev, ptr)
	}
	if info.Kind != KindHost && info.Device >= 0 && info.Device != dev {
		return info, "it is " + info.Kind.String() + " USM of " + r.deviceName(b, info.Device) + ", not of " + r.deviceName(b, dev)
	}
	return info, ""
}

// notInContext says why ptr is not USM of the context of b's device dev:
// whose memory it is, if a registered backend knows.
func (r *Registry) notInContext(b Backend, dev int, ptr uintptr) string {
	named := r.deviceName(b, dev)
	ob, info := r.Lookup(ptr)
	switch {
	case ob == nil:
		return "no registered backend knows this pointer; the context of " + named + " does not"
	case info.Device >= 0:
		return "it is " + info.Kind.String() + " USM of " + r.deviceName(ob, info.Device) + ", whose context is not that of " + named
	}
	return "it is " + info.Kind.String() + " USM of a context of backend " + ob.Name().String() + " other than that of " + named
}

// deviceName names a backend-local device in messages: its filter
// selector and name, as in "opencl:cpu:1 \"Portable Computing Language\"".
func (r *Registry) deviceName(b Backend, local int) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for i, d := range r.devices {
		if d.b == b && d.local == local {
			name := strconv.Quote(r.descs[i].Name)
			if sel, ok := r.selectors[d]; ok {
				return sel.String() + " " + name
			}
			return strconv.Itoa(i) + " " + name
		}
	}
	return "device " + strconv.Itoa(local) + " of backend " + b.Name().String()
}

// Parse parses a SUAI dict like usm.Parse and, at dpctl's step 6, checks
// that the pointer is a USM pointer of the context the syclobj names. A
// filter selector names a device: the pointer must be USM of that
// device's context, and device or shared USM must be that device's own
// (onSelected); the array is on the named device. When
// the owning backend reports the allocation's extent, an array whose bytes
// reach outside it is an *ExtentError giving both ranges.
//
// When the pointer lies in a live *Allocation of that backend (memory
// usmbridge allocated), the allocation is the array's Owner, as with
// NewArray: a DLPack export of the array keeps the memory alive after
// Free, and an export asked for once the memory is gone fails with
// ErrValue instead of handing it out. Other memory gets no Owner: its
// producer keeps it alive (pybridge sets the Python object).
func (r *Registry) Parse(m map[string]any) (*Array, error) {
	if m == nil {
		return nil, errNotADict()
	}
	return r.ParseFields(newMapFields(m))
}

// Bind validates a hand-built Interface and binds it like Parse (Owner
// included).
func (r *Registry) Bind(in Interface) (*Array, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	bd, err := r.bind(in.Data, in.Syclobj)
	if err != nil {
		return nil, err
	}
	return r.finish(new(Array), in, bd)
}

// finish makes *a the Array of in bound as bd says, and returns a.
func (r *Registry) finish(a *Array, in Interface, bd binding) (*Array, error) {
	*a = Array{Interface: in, Backend: bd.b, Memory: bd.info, Device: bd.device, Queue: bd.q}
	if err := a.CheckExtent(); err != nil {
		return nil, err
	}
	if al := owners.find(bd.b, in.Data); al != nil {
		a.Owner = al
	}
	dev := bd.device
	if dev < 0 {
		dev = bd.info.Device
	}
	d, err := r.dlpackDevice(bd.b, dev)
	if err != nil {
		return nil, err
	}
	a.DLDevice = d
	return a, nil
}

// NewArray describes an allocation as a C-contiguous array of the given
// type and shape; the array keeps the allocation alive through exports.
func (r *Registry) NewArray(alloc *Allocation, t dtype.Type, shape []int64) (*Array, error) {
	dev := alloc.Device()
	if dev < 0 {
		dev = 0
	}
	sel, err := r.SelectorFor(alloc.Backend(), dev)
	if err != nil {
		return nil, err
	}
	in := Interface{Shape: slices.Clone(shape), DType: t, Data: alloc.Pointer(), Syclobj: sel, Version: Version1}
	a, err := r.Bind(in)
	if err != nil {
		return nil, err
	}
	a.Owner = alloc
	return a, nil
}
