package dtype

import (
	"encoding/binary"
	"strconv"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/typestr"
)

// DataType is DLPack's DLDataType (type code, bits, lanes) as a tensor
// holds it: what FromDataType reads and Type.DataType writes.
type DataType = dlabi.DataType

// Type is an element type. The zero value is invalid; the variables below
// name every valid native type, FromDataType and FromTypestr make the
// others. Types compare with ==.
type Type struct {
	code dlabi.TypeCode
	bits uint8
	// swapped: stored in the byte order opposite to the host's, as a
	// typestring may say (">f4" on a little-endian host). Never set for
	// one-byte types, which have no byte order.
	swapped bool
}

// The native element types.
var (
	Bool       = Type{code: dlabi.Bool, bits: 8}
	Int8       = Type{code: dlabi.Int, bits: 8}
	Int16      = Type{code: dlabi.Int, bits: 16}
	Int32      = Type{code: dlabi.Int, bits: 32}
	Int64      = Type{code: dlabi.Int, bits: 64}
	Uint8      = Type{code: dlabi.UInt, bits: 8}
	Uint16     = Type{code: dlabi.UInt, bits: 16}
	Uint32     = Type{code: dlabi.UInt, bits: 32}
	Uint64     = Type{code: dlabi.UInt, bits: 64}
	Float16    = Type{code: dlabi.Float, bits: 16}
	Float32    = Type{code: dlabi.Float, bits: 32}
	Float64    = Type{code: dlabi.Float, bits: 64}
	Bfloat16   = Type{code: dlabi.Bfloat, bits: 16}
	Complex32  = Type{code: dlabi.Complex, bits: 32} // two float16
	Complex64  = Type{code: dlabi.Complex, bits: 64}
	Complex128 = Type{code: dlabi.Complex, bits: 128}

	Float8E3M4        = Type{code: dlabi.Float8E3M4, bits: 8}
	Float8E4M3        = Type{code: dlabi.Float8E4M3, bits: 8}
	Float8E4M3B11FNUZ = Type{code: dlabi.Float8E4M3B11FNUZ, bits: 8}
	Float8E4M3FN      = Type{code: dlabi.Float8E4M3FN, bits: 8}
	Float8E4M3FNUZ    = Type{code: dlabi.Float8E4M3FNUZ, bits: 8}
	Float8E5M2        = Type{code: dlabi.Float8E5M2, bits: 8}
	Float8E5M2FNUZ    = Type{code: dlabi.Float8E5M2FNUZ, bits: 8}
	Float8E8M0FNU     = Type{code: dlabi.Float8E8M0FNU, bits: 8}
)

// float8Names are the names of the float8 codes (dlabi.Float8E3M4 on), as
// ml_dtypes, jax and PyTorch spell them.
var float8Names = [...]string{
	"float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
	"float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
}

// widths lists, for each type code an element can have, the bit widths
// it comes in; a code absent here is refused by FromDataType.
func widths(c dlabi.TypeCode) []uint8 {
	switch c {
	case dlabi.Int, dlabi.UInt:
		return []uint8{8, 16, 32, 64}
	case dlabi.Float:
		return []uint8{16, 32, 64}
	case dlabi.Bfloat:
		return []uint8{16}
	case dlabi.Complex:
		return []uint8{32, 64, 128}
	case dlabi.Bool:
		return []uint8{8}
	}
	if c >= dlabi.Float8E3M4 && c <= dlabi.Float8E8M0FNU {
		return []uint8{8}
	}
	return nil
}

// Valid reports whether t is an element type (the zero Type is not).
func (t Type) Valid() bool {
	return t.bits%8 == 0 && int(t.bits/8) < len(hasWidth[0]) && hasWidth[t.code][t.bits/8] && (!t.swapped || t.bits > 8)
}

// hasWidth[c][n] reports whether n bytes is a width of code c (widths):
// Valid is asked on every element access (Size), and a table answers
// without building widths' slice and walking it.
var hasWidth = func() (w [256][17]bool) {
	for c := range w {
		for _, b := range widths(dlabi.TypeCode(c)) {
			w[c][b/8] = true
		}
	}
	return w
}()

// Size is the item size in bytes; 0 for an invalid Type.
func (t Type) Size() int {
	if !t.Valid() {
		return 0
	}
	return int(t.bits / 8)
}

// IsNative reports whether t is stored in the host's byte order (always
// true for one-byte types and for every type DLPack carries).
func (t Type) IsNative() bool { return !t.swapped }

// Native returns t in the host's byte order.
func (t Type) Native() Type {
	t.swapped = false
	return t
}

// String is the type's name as NumPy, ml_dtypes and PyTorch spell it
// ("float32", "bfloat16", "float8_e4m3fn"); a byte-swapped type adds
// ", byte-swapped"; an invalid one is "invalid dtype".
func (t Type) String() string {
	if !t.Valid() {
		return "invalid dtype"
	}
	var s string
	switch t.code {
	case dlabi.Bool:
		s = "bool"
	case dlabi.Int:
		s = "int" + strconv.Itoa(int(t.bits))
	case dlabi.UInt:
		s = "uint" + strconv.Itoa(int(t.bits))
	case dlabi.Float:
		s = "float" + strconv.Itoa(int(t.bits))
	case dlabi.Bfloat:
		s = "bfloat16"
	case dlabi.Complex:
		s = "complex" + strconv.Itoa(int(t.bits))
	default:
		s = float8Names[t.code-dlabi.Float8E3M4]
	}
	if t.swapped {
		s += ", byte-swapped"
	}
	return s
}

// dtypeError is a refusal: a DLPack dtype or a typestring this model
// cannot hold, or a Type one format cannot carry. It matches one usm kind
// with errors.Is; its message names the dtype.
type dtypeError struct {
	msg  string
	kind *errkind.Kind
}

func (e *dtypeError) Error() string        { return e.msg }
func (e *dtypeError) Is(target error) bool { return target == error(e.kind) }

// describe names a Type as the DLPack dtype it is: "DLPack dtype bfloat16
// (code 4, 16 bits)".
func (t Type) describe() string {
	return "DLPack dtype " + t.Native().String() + " (code " + strconv.Itoa(int(t.code)) + ", " + strconv.Itoa(int(t.bits)) + " bits)"
}

// FromDataType returns the element type of a DLPack dtype. Refused, as
// usm.ErrBuffer errors naming the dtype ("DLPack dtype (code 17, bits 4,
// lanes 2) is not supported: ..."): codes dlpack.h does not define,
// kDLOpaqueHandle, the sub-byte codes (float6, float4), lanes other than
// 1, and a bit width the code does not come in.
func FromDataType(dt DataType) (Type, error) {
	// The common case first, with no name made: a valid code, width and
	// lane count (names are for the refusals below).
	if dt.Lanes == 1 && dt.Code != dlabi.OpaqueHandle && dt.Code < dlabi.Float6E2M3FN {
		if t := (Type{code: dt.Code, bits: dt.Bits}); t.Valid() {
			return t, nil
		}
	}
	refuse := func(why string) (Type, error) {
		return Type{}, &dtypeError{msg: "DLPack dtype " + dt.String() + " is not supported: " + why, kind: errkind.Buffer}
	}
	name := dt.Code.String()
	switch {
	case dt.Code > dlabi.Float4E2M1FN:
		return refuse("type code " + strconv.Itoa(int(dt.Code)) + " is not defined by DLPack 1.3")
	case dt.Code == dlabi.OpaqueHandle:
		return refuse(name + " is not an element type")
	case dt.Code >= dlabi.Float6E2M3FN:
		return refuse(name + " is a sub-byte type; strides and offsets count whole bytes")
	case dt.Lanes != 1:
		return refuse("lanes " + strconv.Itoa(int(dt.Lanes)) + ": vector types are not supported")
	}
	t := Type{code: dt.Code, bits: dt.Bits}
	if !t.Valid() {
		var ws string
		for i, w := range widths(dt.Code) {
			if i > 0 {
				ws += ", "
			}
			ws += strconv.Itoa(int(w))
		}
		return refuse(name + " comes in " + ws + " bits")
	}
	return t, nil
}

// DataType returns t's DLPack dtype, with one lane. A byte-swapped t is a
// usm.ErrBuffer error (DLPack data is in native byte order, as NumPy
// says when it refuses such an export); an invalid one is usm.ErrValue.
func (t Type) DataType() (DataType, error) {
	if !t.Valid() {
		return DataType{}, &dtypeError{msg: "invalid element type", kind: errkind.Value}
	}
	if t.swapped {
		ts, _ := t.Typestr()
		return DataType{}, &dtypeError{msg: "DLPack only supports native byte order; the element type is " + strconv.Quote(ts.String()) + " (" + t.String() + ")", kind: errkind.Buffer}
	}
	return DataType{Code: t.code, Bits: t.bits, Lanes: 1}, nil
}

// FromTypestr returns the element type a parsed typestring names, in its
// byte order. Every valid typestr.Type has one; an invalid one is a
// usm.ErrValue error.
func FromTypestr(ts typestr.Type) (Type, error) {
	if !ts.Valid() {
		return Type{}, &dtypeError{msg: "invalid typestr", kind: errkind.Value}
	}
	var code dlabi.TypeCode
	switch ts.Kind {
	case typestr.Bool:
		code = dlabi.Bool
	case typestr.Int:
		code = dlabi.Int
	case typestr.Uint:
		code = dlabi.UInt
	case typestr.Float:
		code = dlabi.Float
	case typestr.Complex:
		code = dlabi.Complex
	}
	return Type{code: code, bits: uint8(ts.Size * 8), swapped: !ts.IsNative()}, nil
}

// swappedOrder is the byte order opposite to the host's, '>' or '<': how
// a typestring writes a byte-swapped type.
var swappedOrder = func() typestr.ByteOrder {
	var x [2]byte
	binary.NativeEndian.PutUint16(x[:], 1)
	if x[0] == 1 {
		return typestr.Big
	}
	return typestr.Little
}()

// typestrKinds maps the codes SUAI has a typestring kind for.
var typestrKinds = map[dlabi.TypeCode]typestr.Kind{
	dlabi.Bool: typestr.Bool, dlabi.Int: typestr.Int, dlabi.UInt: typestr.Uint,
	dlabi.Float: typestr.Float, dlabi.Complex: typestr.Complex,
}

// Typestr returns t's __sycl_usm_array_interface__ typestring in canonical
// form ("|f4"; ">f4" for a byte-swapped float32 on a little-endian host).
// A type dpctl has no typestring for (bfloat16, complex32, float8) is a
// usm.ErrBuffer error: "DLPack dtype bfloat16 (code 4, 16 bits) has no
// __sycl_usm_array_interface__ typestr". An invalid t is usm.ErrValue.
func (t Type) Typestr() (typestr.Type, error) {
	if !t.Valid() {
		return typestr.Type{}, &dtypeError{msg: "invalid element type", kind: errkind.Value}
	}
	k, ok := typestrKinds[t.code]
	ts := typestr.Type{Kind: k, Size: int(t.bits / 8), Order: typestr.NotApplicable}
	if ok && t.swapped {
		ts.Order = swappedOrder
	}
	if !ok || !ts.Valid() {
		return typestr.Type{}, &dtypeError{msg: t.describe() + " has no __sycl_usm_array_interface__ typestr", kind: errkind.Buffer}
	}
	return ts, nil
}
