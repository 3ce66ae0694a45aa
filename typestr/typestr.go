package typestr

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Kind is the type-kind character of a typestring.
type Kind byte

const (
	Bool    Kind = 'b'
	Int     Kind = 'i'
	Uint    Kind = 'u'
	Float   Kind = 'f'
	Complex Kind = 'c'
)

// ByteOrder is the byte-order character of a typestring.
type ByteOrder byte

const (
	NotApplicable ByteOrder = '|' // one-byte types; NumPy also reads it as native
	Little        ByteOrder = '<'
	Big           ByteOrder = '>'
	Native        ByteOrder = '='
)

// hostOrder is the byte order of the machine, '<' or '>'.
var hostOrder = func() ByteOrder {
	var x [2]byte
	binary.NativeEndian.PutUint16(x[:], 1)
	if x[0] == 1 {
		return Little
	}
	return Big
}()

// DataType is DLPack's DLDataType (type code, bits, lanes): the one public
// name of the type, for the conversions Type.DataType and FromDataType
// (package dlpack reads and writes it in tensors).
type DataType = dlabi.DataType

// Type is a parsed typestring: kind, item size in bytes and byte order as
// written. The zero value is invalid.
type Type struct {
	Kind  Kind
	Size  int // item size in bytes
	Order ByteOrder
}

// Common types, in canonical native order.
var (
	Bool8      = Type{Bool, 1, NotApplicable}
	Int8       = Type{Int, 1, NotApplicable}
	Int16      = Type{Int, 2, NotApplicable}
	Int32      = Type{Int, 4, NotApplicable}
	Int64      = Type{Int, 8, NotApplicable}
	Uint8      = Type{Uint, 1, NotApplicable}
	Uint16     = Type{Uint, 2, NotApplicable}
	Uint32     = Type{Uint, 4, NotApplicable}
	Uint64     = Type{Uint, 8, NotApplicable}
	Float16    = Type{Float, 2, NotApplicable}
	Float32    = Type{Float, 4, NotApplicable}
	Float64    = Type{Float, 8, NotApplicable}
	Complex64  = Type{Complex, 8, NotApplicable}
	Complex128 = Type{Complex, 16, NotApplicable}
)

// Error reports a typestring or dtype that cannot be used. It matches
// usm.ErrValue or usm.ErrBuffer (see Kind) with errors.Is.
type Error struct {
	Input  string // the typestring or dtype as given, quoted in Error()
	Reason string
	kind   *errkind.Kind
}

func (e *Error) Error() string {
	return "typestr " + strconv.Quote(e.Input) + ": " + e.Reason
}

func (e *Error) Is(target error) bool { return target == error(e.kind) }

func malformed(s, reason string) error {
	return &Error{Input: s, Reason: reason, kind: errkind.Value}
}

// validSize reports whether size is allowed for kind in the SUAI subset.
func validSize(k Kind, size int) bool {
	switch k {
	case Bool:
		return size == 1
	case Int, Uint:
		return size == 1 || size == 2 || size == 4 || size == 8
	case Float:
		return size == 2 || size == 4 || size == 8
	case Complex:
		return size == 8 || size == 16
	}
	return false
}

// Parse parses a typestring such as "<f4", "|b1" or "c16". It never panics;
// malformed input gives an *Error quoting s.
func Parse(s string) (Type, error) {
	rest := s
	order := Native
	if len(rest) > 0 {
		switch ByteOrder(rest[0]) {
		case NotApplicable, Little, Big, Native:
			order = ByteOrder(rest[0])
			rest = rest[1:]
		}
	}
	if len(rest) < 2 {
		return Type{}, malformed(s, "want [byte order]<kind><size>, e.g. \"<f4\"")
	}
	k := Kind(rest[0])
	switch k {
	case Bool, Int, Uint, Float, Complex:
	default:
		// Quote the whole first character (or the single invalid byte), not
		// rune(rest[0]), which would misquote a multi-byte UTF-8 character.
		_, n := utf8.DecodeRuneInString(rest)
		return Type{}, malformed(s, "kind "+strconv.Quote(rest[:n])+" is not one of b, i, u, f, c")
	}
	digits := rest[1:]
	size := 0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' || i >= 3 || (i == 0 && c == '0') {
			return Type{}, malformed(s, "item size "+strconv.Quote(digits)+" is not a decimal byte count")
		}
		size = size*10 + int(c-'0')
	}
	if !validSize(k, size) {
		return Type{}, malformed(s, "item size "+strconv.Itoa(size)+" is not supported for kind '"+string(rune(k))+"'")
	}
	return Type{Kind: k, Size: size, Order: order}, nil
}

// MustParse is Parse for constant typestrings; it panics on error.
func MustParse(s string) Type {
	t, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return t
}

// Valid reports whether t is a type of the SUAI subset.
func (t Type) Valid() bool {
	switch t.Order {
	case NotApplicable, Little, Big, Native:
	default:
		return false
	}
	return validSize(t.Kind, t.Size)
}

// IsNative reports whether t is stored in the host's byte order. One-byte
// types are always native.
func (t Type) IsNative() bool {
	return t.Size == 1 || t.Order == NotApplicable || t.Order == Native || t.Order == hostOrder
}

// Canonical returns t with its byte order normalised: '|' for native types,
// '<' or '>' for byte-swapped ones.
func (t Type) Canonical() Type {
	if t.IsNative() {
		t.Order = NotApplicable
	}
	return t
}

// String returns the canonical typestring ("|f4"; ">f4" on a little-endian
// host for a big-endian float32).
func (t Type) String() string {
	if !t.Valid() {
		return "invalid typestr"
	}
	c := t.Canonical()
	b := make([]byte, 0, 4)
	b = append(b, byte(c.Order), byte(c.Kind))
	b = strconv.AppendInt(b, int64(c.Size), 10)
	return string(b)
}

// DataType returns the DLPack DLDataType of t. Booleans map to
// (kDLBool, 8, 1), complex to kDLComplex with bits = total size, f2 to
// (kDLFloat, 16, 1). A byte-swapped t is a usm.ErrBuffer error: DLPack data
// is always in native order.
func (t Type) DataType() (DataType, error) {
	if !t.Valid() {
		return dlabi.DataType{}, malformed(string(rune(t.Order))+string(rune(t.Kind))+strconv.Itoa(t.Size), "not a valid typestr")
	}
	if !t.IsNative() {
		return dlabi.DataType{}, &Error{Input: t.String(), Reason: "DLPack only supports native byte order", kind: errkind.Buffer}
	}
	var code dlabi.TypeCode
	switch t.Kind {
	case Bool:
		code = dlabi.Bool
	case Int:
		code = dlabi.Int
	case Uint:
		code = dlabi.UInt
	case Float:
		code = dlabi.Float
	case Complex:
		code = dlabi.Complex
	}
	return dlabi.DataType{Code: code, Bits: uint8(t.Size * 8), Lanes: 1}, nil
}

// FromDataType returns the native typestring for a DLPack DLDataType. Codes
// with no typestring (bfloat16, float8/6/4, opaque handles, unknown codes),
// lanes other than 1, sub-byte or odd bit widths are usm.ErrBuffer errors
// naming the dtype.
func FromDataType(dt DataType) (Type, error) {
	unsupported := func(reason string) (Type, error) {
		return Type{}, &Error{Input: dt.String(), Reason: reason, kind: errkind.Buffer}
	}
	if dt.Lanes != 1 {
		return unsupported("lanes " + strconv.Itoa(int(dt.Lanes)) + " != 1 (vector types have no typestr)")
	}
	if dt.Bits%8 != 0 || dt.Bits == 0 {
		return unsupported("bit width " + strconv.Itoa(int(dt.Bits)) + " is not a whole number of bytes")
	}
	var k Kind
	switch dt.Code {
	case dlabi.Bool:
		k = Bool
	case dlabi.Int:
		k = Int
	case dlabi.UInt:
		k = Uint
	case dlabi.Float:
		k = Float
	case dlabi.Complex:
		k = Complex
	default:
		return unsupported("type code " + dt.Code.String() + " has no typestr")
	}
	t := Type{Kind: k, Size: int(dt.Bits / 8), Order: NotApplicable}
	if !validSize(k, t.Size) {
		return unsupported(strconv.Itoa(int(dt.Bits)) + "-bit " + dt.Code.String() + " has no typestr")
	}
	return t, nil
}
