package typestr

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"

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

// Type is a parsed typestring: kind, item size in bytes and byte order as
// written. The zero value is invalid. An array's element type is a
// dtype.Type, which dtype.FromTypestr makes of a Type.
type Type struct {
	Kind  Kind
	Size  int // item size in bytes
	Order ByteOrder
}

// Error reports a malformed typestring, or one outside the SUAI subset. It
// matches usm.ErrValue with errors.Is.
type Error struct {
	Input  string // the typestring as given, quoted in Error()
	Reason string
	kind   *errkind.Kind
}

func (e *Error) Error() string {
	return "typestr " + errkind.Quote(e.Input) + ": " + e.Reason
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
			return Type{}, malformed(s, "item size "+errkind.Quote(digits)+" is not a decimal byte count")
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

// canonical returns t with its byte order normalised: '|' for native types,
// '<' or '>' for byte-swapped ones: what Parse gives of String's text.
func (t Type) canonical() Type {
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
	c := t.canonical()
	b := make([]byte, 0, 4)
	b = append(b, byte(c.Order), byte(c.Kind))
	b = strconv.AppendInt(b, int64(c.Size), 10)
	return string(b)
}
