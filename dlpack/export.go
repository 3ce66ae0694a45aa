package dlpack

import (
	"strconv"
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// CopyMode is the array API's copy keyword.
type CopyMode int8

const (
	CopyIfNeeded CopyMode = iota // copy=None: reuse the memory when possible
	CopyAlways                   // copy=True: always copy, set IS_COPIED
	CopyNever                    // copy=False: fail with usm.ErrBuffer if a copy is needed
)

// ExportOptions are the arguments of __dlpack__.
type ExportOptions struct {
	// MaxVersion is the consumer's max_version. nil or a major below 1
	// gives a legacy DLManagedTensor; otherwise a DLManagedTensorVersioned
	// carrying version 1.min(minor, 2).
	MaxVersion *Version
	// Device is dl_device; nil means the array's own device. (kDLCPU, 0)
	// for a kDLOneAPI array exports host-accessible USM (host, shared)
	// without a copy after waiting on the array's queue, and device USM
	// through a host copy flagged IS_COPIED. Other devices are refused.
	Device *Device
	// Copy is the copy keyword.
	Copy CopyMode
	// NoSync is __dlpack__(stream=-1), the array API's "producer must not
	// perform any synchronization": Export does not wait on the array's
	// queue. The consumer then owns the ordering: it must not read (or
	// write) the memory before every command already submitted to the
	// array's queue has completed, e.g. by waiting on that queue or by
	// ordering its own work after it. When Export makes a copy it waits
	// all the same, so the copy it hands out is complete.
	NoSync bool
	// Stream is the consumer's queue (__dlpack__(stream=queue)): instead
	// of waiting, Export makes the commands submitted to Stream from now
	// on run after those already submitted to the array's queue, on the
	// device where the runtimes allow (usm.Order), so the consumer
	// reads complete data through Stream. Memory read any other way
	// (the host, another queue) is the consumer's to order. When Export
	// makes a copy it waits all the same. NoSync wins over Stream.
	Stream usm.Queue
	// HostAllocator holds a copy (Copy: CopyAlways) of host memory that
	// no backend knows, such as a view of a NumPy array or a kDLCPU
	// tensor imported without a registry: the array has no backend to
	// allocate the copy and make it, so HostAllocator allocates host
	// memory on its device 0 and Export copies into it. nil refuses such
	// a copy (usm.ErrBuffer). cpu.Default() is the usual one; pybridge
	// passes it. Arrays whose backend allocates and copies never use it.
	HostAllocator usm.Allocator
}

// Export hands the array to a DLPack consumer. It waits on the array's
// queue (unless opts.NoSync, or opts.Stream orders the consumer's queue
// on the device), so the data is complete when the consumer sees it, and keeps the
// memory alive (through a.Owner, or a copy it owns) until the consumer calls
// the tensor's deleter, exactly once, from any thread.
//
// data and byte_offset: when no stride is negative, data is the address of
// element 0 and byte_offset is 0, the convention NumPy and PyTorch use and
// every consumer reads correctly (older PyTorch ignores byte_offset). With
// negative strides, data is the lowest byte the array touches and
// byte_offset leads from there to element 0, so consumers that wrap the
// memory from data upwards (dpctl, dpnp) cover every element. Strides are
// always set for ndim > 0, in elements; shape and strides are NULL for a 0-d
// array. A size-0 array keeps its (valid) pointer.
//
// Refusals are usm.ErrBuffer errors: non-native byte order, more than
// 64 dimensions (NumPy's limit), an unsupported dl_device, a needed copy with
// CopyNever, and a read-only array asked for as a legacy tensor (which
// cannot carry the READ_ONLY flag; NumPy refuses the same).
func Export(a *usm.Array, opts ExportOptions) (Managed, error) {
	if a == nil {
		return Managed{}, exportErr(errkind.Value, "nil array", nil)
	}
	// The memory is held from the first step (a freed array is refused
	// before anything reads it), and the reference becomes the export's
	// own when the consumer gets the memory itself.
	held, err := a.Hold()
	if err != nil {
		return Managed{}, exportErr(errkind.Value, "", err)
	}
	m, kept, err := export(a, held, opts)
	if !kept && held != nil {
		held.Release()
	}
	return m, err
}

// export is Export of an array whose memory is held (held, nil for an
// array without an Owner); kept reports that the tensor took held over.
func export(a *usm.Array, held usm.Owner, opts ExportOptions) (m Managed, kept bool, err error) {
	v, win, err := view(a)
	if err != nil {
		return Managed{}, false, err
	}
	version, versioned := dlabi.NegotiateVersion(opts.MaxVersion, ProducerVersion)
	if !versioned && v.ReadOnly {
		return Managed{}, false, exportErr(errkind.Buffer, "cannot export a read-only array as a legacy DLManagedTensor, which cannot signal read-only (ask for max_version >= (1, 0))", nil)
	}

	// Decide where the consumer will find the data.
	dev := a.DLDevice
	copyTo := usm.KindUnknown // kind of a copy to make, if any
	if opts.Device != nil && *opts.Device != a.DLDevice {
		want := *opts.Device
		if want != (Device{Type: CPU, ID: 0}) || a.DLDevice.Type != OneAPI {
			return Managed{}, false, exportErr(errkind.Buffer, "unsupported dl_device "+want.String()+" for an array on "+a.DLDevice.String(), nil)
		}
		dev = want
		switch {
		case a.Memory.Kind.HostAccessible() && opts.Copy != CopyAlways:
			// zero copy: the host can read this USM once the queue is idle
		case opts.Copy == CopyNever:
			return Managed{}, false, exportErr(errkind.Buffer, "array cannot be placed on the requested device "+want.String()+" without a copy ("+a.Memory.Kind.String()+" USM is not host-accessible)", nil)
		default:
			copyTo = usm.KindHost
		}
	} else if opts.Copy == CopyAlways {
		copyTo = a.Memory.Kind
		if copyTo == usm.KindUnknown {
			copyTo = usm.KindHost
		}
	}

	switch {
	case opts.NoSync && copyTo == usm.KindUnknown:
		// stream=-1: the consumer orders its accesses (see NoSync).
	case opts.Stream != nil && copyTo == usm.KindUnknown:
		if err := usm.Order(a.Queue, opts.Stream); err != nil {
			return Managed{}, false, exportErr(errkind.Buffer, "ordering the consumer's queue after the array's", err)
		}
	default:
		if err := a.Wait(); err != nil {
			return Managed{}, false, exportErr(errkind.Buffer, "waiting for the array's queue", err)
		}
	}
	data := v.Data
	var owner usm.Owner
	var flags uint64
	copied := false
	if copyTo != usm.KindUnknown {
		alloc, e0, err := copyWindow(a, win, copyTo, opts.HostAllocator)
		if err != nil {
			return Managed{}, false, err
		}
		// The copy has the array's strides: the same bytes lie below
		// element 0.
		owner, data, flags, copied = alloc, e0-uintptr(v.ByteOffset), dlabi.FlagIsCopied, true
	} else {
		owner, kept = held, true
	}
	if v.ReadOnly {
		flags |= dlabi.FlagReadOnly
	}
	strides := v.Strides
	if strides == nil {
		strides = a.EffectiveStrides()
	}
	m, ok := build(versioned, version, data, v.ByteOffset, dev, v.DType, v.Shape, strides, flags, owner)
	if !ok {
		if copied { // the copy goes; a held reference is Export's to drop
			owner.Release()
		}
		return Managed{}, false, exportErr(errkind.Memory, "out of memory for the tensor struct", nil)
	}
	return m, kept, nil
}

// View is the tensor an export of an array hands a consumer when it makes
// no copy and moves the array to no other device (ViewOf): DLTensor's
// fields with Export's data and byte_offset convention, and the
// READ_ONLY flag. Shape is the array's own slice; Strides, in elements,
// are the array's or the C-contiguous ones it implies.
type View struct {
	Data       uintptr // DLTensor.data: element 0 less ByteOffset
	ByteOffset uint64  // bytes from Data to element 0 (negative strides reach below it)
	Device     Device
	DType      dtype.DataType
	Shape      []int64
	Strides    []int64
	ReadOnly   bool
}

// ViewOf returns the tensor Export(a, ExportOptions{NoSync: true}) would
// hand out, checked by Export's rules and refused with its errors, without
// building it: no C memory, no reference to a's Owner and no wait on its
// queue. It is for a caller that describes the array itself, as an
// extension module's Array does; what a consumer receives still comes
// from Export. An array whose memory has been freed is refused as Export
// refuses it (usm.ErrClosed).
func ViewOf(a *usm.Array) (View, error) {
	if a == nil {
		return View{}, exportErr(errkind.Value, "nil array", nil)
	}
	held, err := a.Hold()
	if err != nil {
		return View{}, exportErr(errkind.Value, "", err)
	}
	if held != nil {
		held.Release()
	}
	v, _, err := view(a)
	if err == nil && v.Strides == nil {
		v.Strides = a.EffectiveStrides()
	}
	return v, err
}

// view is ViewOf, with the window of bytes a touches (relative to
// a.Data), which a copy needs, and the array's own Strides (nil for a
// C-contiguous array without them: Export makes them where they do not
// outlive the call).
func view(a *usm.Array) (View, usm.Window, error) {
	if a == nil {
		return View{}, usm.Window{}, exportErr(errkind.Value, "nil array", nil)
	}
	dt, err := a.DType.DataType()
	if err != nil {
		return View{}, usm.Window{}, exportErr(errkind.Buffer, "", err)
	}
	ndim := len(a.Shape)
	if ndim > maxNdim {
		return View{}, usm.Window{}, exportErr(errkind.Buffer, "ndim "+itoa(int64(ndim))+" exceeds "+itoa(maxNdim), nil)
	}
	win, err := a.Window()
	if err != nil {
		return View{}, usm.Window{}, exportErr(layoutKind(err), "invalid layout", err)
	}
	if a.Memory.HasExtent() { // a layout changed after NewArray may leave the allocation: no consumer reads past it
		if err := a.CheckExtent(); err != nil {
			return View{}, usm.Window{}, exportErr(errkind.Buffer, "", err)
		}
	}
	v := View{Data: a.ElementPointer(), Device: a.DLDevice, DType: dt, Shape: a.Shape, Strides: a.Strides, ReadOnly: a.ReadOnly}
	if below := belowElement0(a, win); below > 0 {
		v.Data -= uintptr(below)
		v.ByteOffset = uint64(below)
	}
	return v, win, nil
}

// belowElement0 returns how many bytes below element 0 the array reaches
// (through negative strides); 0 for empty arrays.
func belowElement0(a *usm.Array, win usm.Window) int64 {
	if win.Empty() {
		return 0
	}
	return a.Offset*int64(a.DType.Size()) - win.Lo
}

// copyWindow copies the bytes the array touches into a new allocation of
// the given kind on the array's backend and returns it with the address of
// element 0 in the copy (strides stay as they are). Host memory no backend
// knows is copied into host memory from hostAlloc.
//
// copier is what the copy needs of the backend besides usm.Allocator:
// every backend of this module has this Copy method (usm declares its own
// copier for the typed copies; backends_test.go in usm checks them).
type copier interface {
	Copy(dst, src, n uintptr) error
}

// hostCopier copies between host pointers, with Go's copy: the host can
// read both sides, so no runtime is needed.
type hostCopier struct{}

func (hostCopier) Copy(dst, src, n uintptr) error {
	cmem.Move(dst, src, n)
	return nil
}

func copyWindow(a *usm.Array, win usm.Window, kind usm.Kind, hostAlloc usm.Allocator) (*usm.Allocation, uintptr, error) {
	al, ok1 := a.Backend.(usm.Allocator)
	cp, ok2 := a.Backend.(copier)
	dev := a.Device
	if (!ok1 || !ok2) && a.DLDevice.Type == CPU {
		// Host memory no backend knows (a NumPy array, say): the
		// caller's host allocator holds the copy, and copying host to
		// host needs no runtime.
		if hostAlloc == nil {
			return nil, 0, exportErr(errkind.Buffer, "a copy of host memory that no backend knows needs a host allocator (ExportOptions.HostAllocator)", nil)
		}
		al, cp, ok1, ok2, dev, kind = hostAlloc, hostCopier{}, true, true, 0, usm.KindHost
	}
	if !ok1 || !ok2 {
		return nil, 0, exportErr(errkind.Buffer, "the array's backend cannot allocate and copy", nil)
	}
	n := uintptr(win.Len())
	if dev < 0 {
		dev = 0
	}
	alloc, err := al.Alloc(dev, kind, max(n, uintptr(a.DType.Size())))
	if err != nil {
		return nil, 0, exportErr(errkind.Memory, "allocating "+itoa(int64(n))+" bytes for the copy", err)
	}
	if _, host := cp.(hostCopier); host && !alloc.Kind().HostAccessible() {
		_ = alloc.Free()
		return nil, 0, exportErr(errkind.Buffer, "the host allocator gave "+alloc.Kind().String()+" memory, which the host cannot write", nil)
	}
	if n > 0 {
		src := a.Data + uintptr(win.Lo) // win.Lo may be negative: wraps correctly
		if err := cp.Copy(alloc.Pointer(), src, n); err != nil {
			_ = alloc.Free()
			return nil, 0, exportErr(errkind.Buffer, "copying the array", err)
		}
	}
	e0 := alloc.Pointer() + uintptr(a.Offset*int64(a.DType.Size())-win.Lo)
	return alloc, e0, nil
}

// build writes one C block: the managed struct followed by shape and
// strides, and registers it. ok is false only when C memory is exhausted.
func build(versioned bool, v Version, data uintptr, byteOffset uint64, dev Device, dt dlabi.DataType, shape, strides []int64, flags uint64, owner usm.Owner) (Managed, bool) {
	head := unsafe.Sizeof(dlabi.ManagedTensor{})
	if versioned {
		head = unsafe.Sizeof(dlabi.ManagedTensorVersioned{})
	}
	ndim := len(shape)
	size := head + uintptr(2*ndim)*8
	block := cmem.Alloc(size)
	if block == 0 {
		return Managed{}, false
	}
	var shapeP, stridesP uintptr
	if ndim > 0 {
		shapeP = block + head
		stridesP = shapeP + uintptr(ndim)*8
		copy(unsafe.Slice((*int64)(cmem.Ptr(shapeP)), ndim), shape)
		copy(unsafe.Slice((*int64)(cmem.Ptr(stridesP)), ndim), strides)
	}
	t := dlabi.Tensor{Data: data, Device: dev, Ndim: int32(ndim), DType: dt, Shape: shapeP, Strides: stridesP, ByteOffset: byteOffset}
	h := register(block, size, owner)
	legacyFn, versionedFn := deleterPtrs()
	if versioned {
		*(*dlabi.ManagedTensorVersioned)(cmem.Ptr(block)) = dlabi.ManagedTensorVersioned{
			Version: v, ManagerCtx: h, Deleter: versionedFn, Flags: flags, DLTensor: t}
	} else {
		*(*dlabi.ManagedTensor)(cmem.Ptr(block)) = dlabi.ManagedTensor{DLTensor: t, ManagerCtx: h, Deleter: legacyFn}
	}
	return Managed{ptr: block, versioned: versioned}, true
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
