package dlpack

import (
	"errors"
	"strconv"
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/refcount"
	"github.com/usmbridge/usmbridge/usm"
)

// ImportOptions configure Import.
type ImportOptions struct {
	// Registry resolves kDLOneAPI device ids and classifies pointers. nil
	// accepts only kDLCPU tensors.
	Registry *usm.Registry
	// KeepOnError leaves the tensor with the caller when Import fails, for
	// the Python capsule protocol: a rejected capsule keeps its name and its
	// own destructor calls the deleter. By default Import takes ownership in
	// every case and calls the deleter itself when it fails, as dlpack.h
	// requires for a major-version mismatch.
	KeepOnError bool
}

// Tensor is an imported DLPack tensor: a usm.Array view of the producer's
// memory that owns the producer's tensor until released. The Array's
// Owner is the Tensor itself, so exporting it again keeps the producer's
// memory alive too.
type Tensor struct {
	usm.Array
	Version Version // {0, 0} for a legacy tensor
	Flags   uint64  // dlpack.h's DLPACK_FLAG_BITMASK_* bits; 0 for a legacy tensor (see IsCopied, Array.ReadOnly, which a legacy tensor always is)

	m       Managed
	deleter uintptr
	refs    refcount.Count
	// dims holds shape and strides of tensors of up to smallNdim
	// dimensions, so an import makes one allocation (the Tensor) for them.
	dims [2 * smallNdim]int64
}

// smallNdim is the largest ndim whose shape and strides live inside the
// Tensor.
const smallNdim = 8

// IsCopied reports the producer's IS_COPIED flag: the consumer owns the data
// exclusively.
func (t *Tensor) IsCopied() bool { return t.Flags&dlabi.FlagIsCopied != 0 }

// Retain adds a reference; false once the producer's deleter has run.
func (t *Tensor) Retain() bool { return t.refs.Retain() }

// Release drops a reference. When the last one goes, the producer's
// deleter is called, exactly once. Further calls do nothing.
func (t *Tensor) Release() {
	if t.refs.Release() {
		exportledger.AddImports(-1)
		callDeleter(t.deleter, t.m.ptr)
	}
}

// queueProvider is a backend with a default queue per device (every
// backend of this module): an imported kDLOneAPI tensor gets its device's
// queue, which export and the typed copies wait on. usm's backends_test.go
// checks the backends against it.
type queueProvider interface {
	Queue(device int) (usm.Queue, error)
}

// Import takes a producer's tensor. It validates everything before taking
// ownership: the version (a major other than 1 is refused, and the deleter
// is called unless KeepOnError), ndim (0..64, NumPy's limit), shape (non-NULL for
// ndim > 0, no negative extents), strides (NULL means C-contiguous),
// dtype (dtype.FromDataType: every DLPack dtype of whole-byte elements,
// bfloat16 and float8 included), byte_offset (honoured; data + byte_offset is
// element 0), NULL data only for size-0 tensors, overflow of any extent,
// and the device: kDLCPU (device id 0), or kDLOneAPI resolved through the
// registry, whose backend must know the pointer. Every byte the tensor
// touches must lie below the user address space and, where a registered
// backend reports the allocation holding data, inside that allocation
// (RATIONALE.md, "Extent checks nobody else does"). The array is
// read-only when the tensor says so (READ_ONLY) and when it is a legacy
// DLManagedTensor, which has no flags to say it is writable. Errors are
// usm.ErrBuffer unless noted in the message.
func Import(m Managed, opts ImportOptions) (*Tensor, error) {
	t, err := inspect(m, opts.Registry)
	if err != nil {
		if !opts.KeepOnError && m.ptr != 0 {
			m.Delete()
		}
		return nil, err
	}
	exportledger.AddImports(1)
	return t, nil
}

func inspect(m Managed, reg *usm.Registry) (*Tensor, error) {
	if m.ptr == 0 {
		return nil, importErr(errkind.Value, "NULL managed tensor", nil)
	}
	t := new(Tensor)
	t.m, t.deleter = m, m.deleterPtr()
	var dl *dlabi.Tensor
	if m.versioned {
		v := m.versionedView()
		if v.Version.Major != 1 {
			return nil, importErr(errkind.Buffer, "DLPack major version "+itoa(int64(v.Version.Major))+" is not supported (this importer reads 1.x)", nil)
		}
		t.Version, t.Flags = v.Version, v.Flags
		dl = &v.DLTensor
	} else {
		dl = &m.legacyView().DLTensor
	}

	// Shape, strides, dtype.
	if dl.Ndim < 0 || dl.Ndim > maxNdim {
		return nil, importErr(errkind.Buffer, "ndim "+itoa(int64(dl.Ndim))+" is outside 0.."+itoa(maxNdim), nil)
	}
	ndim := int(dl.Ndim)
	if ndim > 0 && dl.Shape == 0 {
		return nil, importErr(errkind.Buffer, "shape is NULL for ndim "+itoa(int64(ndim)), nil)
	}
	dt, err := dtype.FromDataType(dl.DType)
	if err != nil {
		return nil, importErr(errkind.Buffer, "", err)
	}
	var dims []int64
	if ndim <= smallNdim {
		dims = t.dims[: 2*ndim : 2*ndim]
	} else {
		dims = make([]int64, 2*ndim)
	}
	shape, strides := dims[:ndim:ndim], []int64(nil)
	if ndim > 0 {
		copy(shape, unsafe.Slice((*int64)(cmem.Ptr(dl.Shape)), ndim))
		if dl.Strides != 0 {
			strides = dims[ndim:]
			copy(strides, unsafe.Slice((*int64)(cmem.Ptr(dl.Strides)), ndim))
		}
	}
	for i, s := range shape {
		if s < 0 {
			return nil, importErr(errkind.Buffer, "shape["+itoa(int64(i))+"] = "+itoa(s)+" is negative", nil)
		}
	}
	if offsetWraps(dl.Data, dl.ByteOffset) {
		return nil, importErr(errkind.Buffer, "data + byte_offset overflows the address space", nil)
	}
	data := dl.Data + uintptr(dl.ByteOffset)
	// Field by field: t is zeroed, and a composite literal would be built
	// aside and copied.
	t.Shape, t.DType, t.Data, t.Strides = shape, dt, data, strides
	// A legacy tensor has no flags: it cannot say that its memory may be
	// written, so it is read-only, as NumPy imports it (RATIONALE.md,
	// "Read-only survives every format, or the format is refused").
	t.Interface.Version, t.ReadOnly = usm.Version1, !m.versioned || t.Flags&dlabi.FlagReadOnly != 0
	win, err := t.Window()
	if err != nil {
		return nil, importErr(layoutKind(err), "invalid layout", err)
	}
	switch place(dl.Data, dl.ByteOffset, win) {
	case placedNullData:
		return nil, importErr(errkind.Buffer, "data is NULL for a non-empty tensor", nil)
	case placedWrapping:
		return nil, importErr(errkind.Buffer, "the tensor's bytes "+win.String()+" wrap around the address space", nil)
	case placedAboveUser:
		return nil, importErr(errkind.Buffer, "the tensor's bytes "+win.String()+" from 0x"+hex(data)+" lie beyond any process memory (above 0x"+strconv.FormatUint(maxUserAddress, 16)+")", nil)
	}
	// Extents are measured against the allocation that holds the
	// producer's own pointer, dl.Data, not element 0: a byte_offset can
	// lead anywhere, and what it leads to must still be inside.
	owner := dl.Data
	if owner == 0 {
		owner = data
	}

	// Device and memory.
	t.DLDevice = dl.Device
	t.Device = -1
	switch dl.Device.Type {
	case CPU:
		if dl.Device.ID != 0 {
			return nil, importErr(errkind.Buffer, "kDLCPU device id "+itoa(int64(dl.Device.ID))+" (must be 0)", nil)
		}
		t.Memory = usm.PointerInfo{Kind: usm.KindHost, Device: -1}
		if reg != nil {
			b, info := reg.Lookup(owner)
			if b == nil && owner != data {
				// A foreign data pointer whose byte_offset leads into a
				// registered allocation is held to that allocation.
				b, info = reg.Lookup(data)
			}
			if b != nil && !info.Kind.HostAccessible() {
				return nil, importErr(errkind.Buffer, "kDLCPU tensor in "+info.Kind.String()+" USM of "+b.Name().String()+", which the host cannot read", nil)
			}
			if b != nil {
				t.Backend, t.Memory, t.Device = b, info, info.Device
				if sel, err := reg.SelectorFor(b, max(info.Device, 0)); err == nil {
					t.Syclobj = sel
				}
			}
		}
	case OneAPI:
		if reg == nil {
			return nil, importErr(errkind.Buffer, "kDLOneAPI tensor but no registry of SYCL backends", nil)
		}
		b, local, err := reg.FromDLPackDevice(dl.Device)
		if err != nil {
			return nil, importErr(errkind.Buffer, "device "+dl.Device.String()+" is unknown", err)
		}
		t.Backend, t.Device = b, local
		if sel, err := reg.SelectorFor(b, local); err == nil {
			t.Syclobj = sel
		}
		if owner != 0 {
			info := b.QueryPointer(owner)
			if info.Kind == usm.KindUnknown {
				return nil, importErr(errkind.Buffer, "data pointer 0x"+hex(owner)+" is not a USM allocation of device "+dl.Device.String()+" ("+b.Name().String()+")", nil)
			}
			t.Memory = info
		}
		if qp, ok := b.(queueProvider); ok {
			if q, err := qp.Queue(local); err == nil {
				t.Queue = q
			}
		}
	default:
		return nil, importErr(errkind.Buffer, "the tensor resides on unsupported device "+dl.Device.String(), nil)
	}
	// The layout was checked above (Window): only memory with a known
	// extent has more to check.
	if t.Memory.HasExtent() {
		if err := t.CheckExtent(); err != nil {
			return nil, importErr(errkind.Buffer, "the tensor reaches outside its allocation", err)
		}
	}

	t.Owner = t
	t.refs.Init()
	return t, nil
}

// maxUserAddress bounds the bytes a tensor may touch (dlabi.MaxUserAddress).
var maxUserAddress = dlabi.MaxUserAddress

// placement is the verdict of the checks on where a tensor's bytes lie,
// given the producer's data pointer: placedOK, or the first check failed.
type placement uint8

const (
	placedOK         placement = iota
	placedOffsetWrap           // data + byte_offset overflows
	placedNullData             // data is NULL for a non-empty tensor
	placedWrapping             // the window wraps around the address space
	placedAboveUser            // the window reaches above maxUserAddress
)

// place is every check of Import that depends on the producer's data
// pointer dlData, in Import's order; byteOffset and win (the bytes the
// tensor touches from dlData+byteOffset) are fixed by the layout.
func place(dlData uintptr, byteOffset uint64, win usm.Window) placement {
	if offsetWraps(dlData, byteOffset) {
		return placedOffsetWrap
	}
	if win.Empty() {
		return placedOK
	}
	data := dlData + uintptr(byteOffset)
	switch {
	case dlData == 0:
		return placedNullData
	case !addWindow(data, win):
		return placedWrapping
	// data+Hi in two's complement: addWindow has ruled out a wrap.
	case uint64(data)+uint64(win.Hi) > maxUserAddress:
		return placedAboveUser
	}
	return placedOK
}

func offsetWraps(dlData uintptr, byteOffset uint64) bool {
	return byteOffset > uint64(^uintptr(0)) || dlData+uintptr(byteOffset) < dlData
}

// addWindow checks that the bytes data+win touches stay inside the
// address space. It formats nothing: the caller describes a failure.
func addWindow(data uintptr, win usm.Window) bool {
	if win.Empty() {
		return true
	}
	okLo := win.Lo >= 0 || uint64(-win.Lo) <= uint64(data)
	okHi := win.Hi <= 0 || uint64(win.Hi) <= uint64(^uintptr(0)-data)
	return okLo && okHi
}

func hex(p uintptr) string { return strconv.FormatUint(uint64(p), 16) }

// layoutKind is the kind of an array whose layout is refused: OverflowError
// for a size or extent beyond int64 (as docs/python.md says for a shape
// whose size does not fit), BufferError for anything else.
func layoutKind(err error) *errkind.Kind {
	if errors.Is(err, errkind.Overflow) {
		return errkind.Overflow
	}
	return errkind.Buffer
}
