package usm

import (
	"errors"
	"strconv"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// Interface is the value of __sycl_usm_array_interface__ (SUAI version 1),
// and the description of every array: one from DLPack may have an element
// type SUAI has no typestring for (bfloat16, float8), which Map refuses.
//
// The element with indices i[0..n-1] is at byte address
// Data + (Offset + Σ i[k]·Strides[k]) · itemsize.
type Interface struct {
	Shape    []int64     // extents; empty for a 0-d array
	DType    dtype.Type  // element type ("typestr")
	Data     uintptr     // USM pointer (data[0])
	ReadOnly bool        // data[1]: true means read-only
	Strides  []int64     // in elements; nil means C-contiguous
	Offset   int64       // in elements, from Data to element 0
	Syclobj  syclobj.Obj // the context the allocation is bound to
	Version  int         // always 1
}

// Version1 is the only SUAI version.
const Version1 = 1

// Window returns the bytes the array touches relative to Data.
func (in *Interface) Window() (Window, error) {
	return byteWindow(in.Shape, in.Strides, in.Offset, in.DType.Size())
}

// ElementPointer returns the address of element 0: Data + Offset·itemsize.
func (in *Interface) ElementPointer() uintptr {
	return in.Data + uintptr(in.Offset*int64(in.DType.Size()))
}

// EffectiveStrides returns Strides, or the C-contiguous strides if nil.
func (in *Interface) EffectiveStrides() []int64 {
	if in.Strides != nil {
		return in.Strides
	}
	return cStrides(in.Shape)
}

// validate checks a hand-built Interface with the rules Parse applies
// (except pointer binding, which needs a Registry).
func (in *Interface) validate() error {
	if in.Version != Version1 {
		return malformed(errkind.Value, "version", "dict('version': "+strconv.Itoa(in.Version)+") is unexpected. The only recognized version is 1.")
	}
	if in.Syclobj == nil {
		return malformed(errkind.Value, "syclobj", "required")
	}
	if !in.DType.Valid() {
		return malformed(errkind.Value, "typestr", "not a valid element type")
	}
	if in.Strides != nil && len(in.Strides) != len(in.Shape) {
		return malformed(errkind.Value, "strides", "must be a tuple or list of the same length as shape")
	}
	if _, err := in.Window(); err != nil {
		return wrapLayout(err)
	}
	return nil
}

// wrapLayout turns a layout-math error into a MalformedError of the same
// kind.
func wrapLayout(err error) error {
	k := errkind.Value
	if e := (*errkind.Error)(nil); errors.As(err, &e) {
		k = e.Kind
	}
	return &MalformedError{Field: "shape/strides/offset", Reason: "invalid layout", kind: k, Err: err}
}

// Parse builds an Interface from the generic decoded form of the SUAI dict:
// map values are Go integers (any width), json.Number, bool, string, nil,
// slices or arrays for tuples and lists, and syclobj.Obj values. Each field
// is read once, as the type the parser expects (an integer field as an
// integer, shape as a tuple or list); a container is never walked beyond the
// items the parser reads, so cyclic values are safe. Floats are not integers
// (decode JSON with UseNumber, or use ParseJSON).
//
// Checks run in dpctl's order with dpctl's error kinds: a non-integer
// offset or version is ErrType; a wrong version, a missing or malformed
// data, syclobj, shape, typestr or strides is ErrValue; a negative pointer
// is ErrOverflow. Parse does not check that the pointer belongs to the
// syclobj's context; Registry.Parse does, at the same step as dpctl.
//
// Deliberate differences from dpctl (see RATIONALE.md): a missing typestr is
// an error (dpctl assumes float64); non-native byte order is accepted here
// and refused only where DLPack is involved; a negative offset is accepted,
// as in dpctl, because a negative stride can make it meaningful.
func Parse(m map[string]any) (Interface, error) {
	if m == nil {
		return Interface{}, errNotADict()
	}
	return parseFields(newMapFields(m), nil, nil)
}

func errNotADict() error { return malformed(errkind.Value, "dict", "not a dict") }

// Map returns the dict form that dpctl emits: "data" as [pointer,
// read_only], "shape", "strides" (nil when C-contiguous), "typestr" as
// dpctl writes it, with '|' for every element type in the host's byte
// order ("|f8", where NumPy's dtype.str is "<f8"; a byte-swapped type
// keeps its '>' or '<'), "offset", "version" 1 and "syclobj" (a Selector
// becomes its string). The result is freshly built on every call, as a producer
// must. Map writes the Interface as it is, a "host" selector included, which
// usm.Parse reads back but no SYCL consumer accepts: what is handed to
// consumers comes from Array.SUAI, which refuses memory that is not USM.
//
// An element type with no typestring (bfloat16, complex32, float8: see
// dtype.Type.Typestr) is a usm.ErrBuffer error naming the DLPack dtype:
// SUAI cannot describe the array, which travels through DLPack instead.
func (in *Interface) Map() (map[string]any, error) {
	ts, err := in.DType.Typestr()
	if err != nil {
		return nil, err
	}
	var strides any
	if in.Strides != nil && !isCContiguous(in.Shape, in.Strides) {
		strides = append([]int64(nil), in.Strides...)
	}
	var so any = in.Syclobj
	if sel, ok := in.Syclobj.(syclobj.Selector); ok {
		so = sel.String()
	}
	return map[string]any{
		"data":    []any{uint64(in.Data), in.ReadOnly},
		"shape":   append(make([]int64, 0, len(in.Shape)), in.Shape...),
		"strides": strides,
		"typestr": ts.String(),
		"offset":  in.Offset,
		"version": Version1,
		"syclobj": so,
	}, nil
}
