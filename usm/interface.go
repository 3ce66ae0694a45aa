package usm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/typestr"
)

// Interface is the value of __sycl_usm_array_interface__ (SUAI version 1).
//
// The element with indices i[0..n-1] is at byte address
// Data + (Offset + Σ i[k]·Strides[k]) · itemsize.
type Interface struct {
	Shape    []int64      // extents; empty for a 0-d array
	Typestr  typestr.Type // element type
	Data     uintptr      // USM pointer (data[0])
	ReadOnly bool         // data[1]: true means read-only
	Strides  []int64      // in elements; nil means C-contiguous
	Offset   int64        // in elements, from Data to element 0
	Syclobj  syclobj.Obj  // the context the allocation is bound to
	Version  int          // always 1
}

// Version1 is the only SUAI version.
const Version1 = 1

// Window returns the bytes the array touches relative to Data.
func (in *Interface) Window() (Window, error) {
	return ByteWindow(in.Shape, in.Strides, in.Offset, in.Typestr.Size)
}

// ElementPointer returns the address of element 0: Data + Offset·itemsize.
func (in *Interface) ElementPointer() uintptr {
	return in.Data + uintptr(in.Offset*int64(in.Typestr.Size))
}

// EffectiveStrides returns Strides, or the C-contiguous strides if nil.
func (in *Interface) EffectiveStrides() []int64 {
	if in.Strides != nil {
		return in.Strides
	}
	return CStrides(in.Shape)
}

// Validate checks a hand-built Interface with the rules Parse applies (except
// pointer binding, which needs a Registry).
func (in *Interface) Validate() error {
	if in.Version != Version1 {
		return malformed(errkind.Value, "version", "dict('version': "+strconv.Itoa(in.Version)+") is unexpected. The only recognized version is 1.")
	}
	if in.Syclobj == nil {
		return malformed(errkind.Value, "syclobj", "required")
	}
	if !in.Typestr.Valid() {
		return malformed(errkind.Value, "typestr", "not a valid typestr")
	}
	if in.Strides != nil && len(in.Strides) != len(in.Shape) {
		return malformed(errkind.Value, "strides", "must be a tuple or list of the same length as shape")
	}
	if _, err := in.Window(); err != nil {
		return wrapLayout(err)
	}
	return nil
}

// wrapLayout turns a layout-math error into a MalformedError of the same kind.
func wrapLayout(err error) error {
	k := errkind.Value
	if e, ok := err.(*errkind.Error); ok {
		k = e.Kind
	}
	return &MalformedError{Field: "shape/strides/offset", Reason: "invalid layout", kind: k, Err: err}
}

// binder checks the pointer against the syclobj at dpctl's step 6; nil
// skips the check (structural parse only).
type binder func(ptr uintptr, o syclobj.Obj) error

// Parse builds an Interface from the generic decoded form of the SUAI dict:
// map values are Go integers (any width), json.Number, bool, string, nil,
// slices or arrays for tuples and lists, and syclobj.Obj values. Floats are
// not integers (decode JSON with UseNumber, or use ParseJSON).
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
func Parse(m map[string]any) (Interface, error) { return parse(m, nil) }

// ParseJSON parses a SUAI dict serialised as JSON. "syclobj" must be a
// filter string.
func ParseJSON(b []byte) (Interface, error) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return Interface{}, errkind.Wrap(errkind.Value, "usm.ParseJSON", "not a JSON object", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return Interface{}, errkind.New(errkind.Value, "usm.ParseJSON", "data after the JSON object")
	}
	return Parse(m)
}

func parse(m map[string]any, bind binder) (Interface, error) {
	var in Interface
	if m == nil {
		return in, malformed(errkind.Value, "dict", "not a dict")
	}
	// 1, 2: offset and version are converted first, so their type errors win.
	if v, ok := m["offset"]; ok {
		off, err := toInt("offset", v)
		if err != nil {
			return in, err
		}
		in.Offset = off
	}
	ver := int64(0)
	if v, ok := m["version"]; ok {
		var err error
		if ver, err = toInt("version", v); err != nil {
			return in, err
		}
		// dpctl reads the version into a C int.
		if ver != int64(int32(ver)) {
			return in, malformed(errkind.Overflow, "version", strconv.FormatInt(ver, 10)+" does not fit in a C int")
		}
	}
	// 3.
	if ver != Version1 {
		return in, malformed(errkind.Value, "version", "dict('version': "+strconv.FormatInt(ver, 10)+") is unexpected. The only recognized version is 1.")
	}
	in.Version = Version1
	// 4, 5: data = (pointer, read_only). Strings and byte strings have a
	// length in Python but no integer items: len != 2 fails the length
	// check, len == 2 fails the pointer conversion.
	dv := m["data"]
	data, isSeq, n := sequence(dv)
	sized := isSeq
	if !isSeq {
		n, sized = textLen(dv)
	}
	if !truthy(dv) || (sized && n != 2) {
		return in, malformed(errkind.Value, "data", "'data' field is required, and must be a tuple (usm_pointer, is_read_only_boolean)")
	}
	if !isSeq {
		if sized {
			return in, malformed(errkind.Type, "data[0]", "an integer is required, got a character of "+typeName(dv))
		}
		return in, malformed(errkind.Type, "data", "object of type "+typeName(dv)+" has no len()")
	}
	ptr, err := toPointer(data.index(0))
	if err != nil {
		return in, err
	}
	in.Data = ptr
	in.ReadOnly = truthy(data.index(1))
	// 6: syclobj and the pointer's binding to it.
	o, err := syclobj.FromValue(m["syclobj"])
	if err != nil {
		return in, &MalformedError{Field: "syclobj", Reason: "'data' field is not consistent with 'syclobj' field", kind: errkind.Value, Err: err}
	}
	in.Syclobj = o
	if bind != nil {
		if err := bind(ptr, o); err != nil {
			return in, err
		}
	}
	// 7: shape must be a tuple or list; its elements are converted at step
	// 10, as in dpctl.
	shapeV, isSeq, n := sequence(m["shape"])
	if !isSeq {
		return in, malformed(errkind.Value, "shape", "Shape entry is a required element of `__sycl_usm_array_interface__` dictionary")
	}
	// 8: typestr.
	ts, ok := m["typestr"].(string)
	if !ok {
		return in, malformed(errkind.Value, "typestr", "dict('typestr': "+repr(m["typestr"])+") is unexpected. A typestr string is required")
	}
	if in.Typestr, err = typestr.Parse(ts); err != nil {
		return in, &MalformedError{Field: "typestr", Reason: "dict('typestr': " + strconv.Quote(ts) + ") is unexpected", kind: errkind.Value, Err: err}
	}
	// 9: strides.
	var stV seq
	hasStrides := false
	if sv := m["strides"]; sv != nil {
		var sn int
		stV, isSeq, sn = sequence(sv)
		if !isSeq || sn != n {
			return in, malformed(errkind.Value, "strides", "'strides' must be a tuple or list of the same length as shape")
		}
		hasStrides = true
	}
	// 10: elements dimension by dimension (stride, then extent, then the
	// extent's sign, as dpctl does), then the layout as a whole.
	if hasStrides {
		buf := make([]int64, 2*n)
		in.Shape, in.Strides = buf[:n:n], buf[n:]
	} else {
		in.Shape = make([]int64, n)
	}
	for i := range n {
		if hasStrides {
			if in.Strides[i], err = toIntAt("strides", i, stV.index(i)); err != nil {
				return in, err
			}
		}
		s, err := toIntAt("shape", i, shapeV.index(i))
		if err != nil {
			return in, err
		}
		if s < 0 {
			return in, malformed(errkind.Value, "shape", "Array shape elements need to be positive (shape["+strconv.Itoa(i)+"] = "+strconv.FormatInt(s, 10)+")")
		}
		in.Shape[i] = s
	}
	if _, err := in.Window(); err != nil {
		return in, wrapLayout(err)
	}
	return in, nil
}

// Map returns the dict form that dpctl emits: "data" as [pointer, read_only],
// "shape", "strides" (nil when C-contiguous), "typestr" in canonical form,
// "offset", "version" 1 and "syclobj" (a Selector becomes its string). The
// result is freshly built on every call, as a producer must.
func (in *Interface) Map() map[string]any {
	var strides any
	if in.Strides != nil && !IsCContiguous(in.Shape, in.Strides) {
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
		"typestr": in.Typestr.String(),
		"offset":  in.Offset,
		"version": Version1,
		"syclobj": so,
	}
}

// --- generic-form helpers ---

// seq is a read-only view of a tuple/list value.
type seq struct {
	anys []any
	ints []int64
	rv   reflect.Value
}

func (s seq) index(i int) any {
	switch {
	case s.anys != nil:
		return s.anys[i]
	case s.ints != nil:
		return s.ints[i]
	}
	return s.rv.Index(i).Interface()
}

// sequence reports whether v is a tuple or list (a slice or array; not a
// string or byte slice) and its length.
func sequence(v any) (seq, bool, int) {
	switch x := v.(type) {
	case nil, string, []byte:
		return seq{}, false, 0
	case []any:
		return seq{anys: x}, true, len(x)
	case []int64:
		return seq{ints: x}, true, len(x)
	}
	rv := reflect.ValueOf(v)
	if k := rv.Kind(); k == reflect.Slice || k == reflect.Array {
		return seq{rv: rv}, true, rv.Len()
	}
	return seq{}, false, 0
}

// textLen reports the Python len() of a string (code points) or byte string.
func textLen(v any) (int, bool) {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x), true
	case []byte:
		return len(x), true
	}
	return 0, false
}

// truthy is Python's bool() for the generic form.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []byte:
		return len(x) > 0
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err == nil || errors.Is(err, strconv.ErrRange) {
			return f != 0
		}
		return x != ""
	}
	if _, isSeq, n := sequence(v); isSeq {
		return n > 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.Map, reflect.Pointer, reflect.Interface, reflect.Func, reflect.Chan:
		return !rv.IsNil()
	}
	return true
}

// toInt converts an integer of the generic form; bool counts as an integer
// because Python's bool is one. Non-integers are ErrType, out-of-range
// values ErrOverflow.
func toInt(field string, v any) (int64, error) { return toIntAt(field, -1, v) }

// toIntAt is toInt for element idx of a sequence field (idx < 0: the field
// itself). The field name is only built on failure.
func toIntAt(field string, idx int, v any) (int64, error) {
	i, k, reason := intOf(v)
	if k != nil {
		if idx >= 0 {
			field += "[" + strconv.Itoa(idx) + "]"
		}
		return 0, malformed(k, field, reason)
	}
	return i, nil
}

// intOf converts v, or reports the error kind and reason.
func intOf(v any) (int64, *errkind.Kind, string) {
	switch x := v.(type) {
	case int:
		return int64(x), nil, ""
	case int64:
		return x, nil, ""
	case int32:
		return int64(x), nil, ""
	case uint64:
		if x > math.MaxInt64 {
			return 0, errkind.Overflow, strconv.FormatUint(x, 10) + " does not fit in int64"
		}
		return int64(x), nil, ""
	case bool:
		if x {
			return 1, nil, ""
		}
		return 0, nil, ""
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return 0, errkind.Overflow, string(x) + " does not fit in int64"
			}
			return 0, errkind.Type, "an integer is required, got " + strconv.Quote(string(x))
		}
		return i, nil, ""
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil, ""
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return 0, errkind.Overflow, strconv.FormatUint(u, 10) + " does not fit in int64"
		}
		return int64(u), nil, ""
	}
	return 0, errkind.Type, "an integer is required, got " + typeName(v)
}

// toPointer converts data[0] to a pointer: non-integers are ErrType,
// negative or too-large values ErrOverflow.
func toPointer(v any) (uintptr, error) {
	const field = "data[0]"
	var u uint64
	switch x := v.(type) {
	case uintptr:
		return x, nil
	case uint64:
		u = x
	case int:
		if x < 0 {
			return 0, malformed(errkind.Overflow, field, "can't convert negative value "+strconv.Itoa(x)+" to a pointer")
		}
		u = uint64(x)
	case int64:
		if x < 0 {
			return 0, malformed(errkind.Overflow, field, "can't convert negative value "+strconv.FormatInt(x, 10)+" to a pointer")
		}
		u = uint64(x)
	case json.Number:
		var err error
		if u, err = strconv.ParseUint(string(x), 10, 64); err != nil {
			// Not an unsigned decimal: a signed integer ("+5", "-1",
			// "-1e30" excluded) is a number out of range unless positive.
			i, ierr := strconv.ParseInt(string(x), 10, 64)
			switch {
			case ierr == nil && i >= 0:
				u = uint64(i)
			case ierr == nil || errors.Is(err, strconv.ErrRange) || errors.Is(ierr, strconv.ErrRange):
				return 0, malformed(errkind.Overflow, field, "can't convert "+string(x)+" to a pointer")
			default:
				return 0, malformed(errkind.Type, field, "an integer is required, got "+strconv.Quote(string(x)))
			}
		}
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			u = rv.Uint()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			i := rv.Int()
			if i < 0 {
				return 0, malformed(errkind.Overflow, field, "can't convert negative value "+strconv.FormatInt(i, 10)+" to a pointer")
			}
			u = uint64(i)
		case reflect.Bool:
			if rv.Bool() {
				u = 1
			}
		default:
			return 0, malformed(errkind.Type, field, "an integer is required, got "+typeName(v))
		}
	}
	if uint64(uintptr(u)) != u {
		return 0, malformed(errkind.Overflow, field, strconv.FormatUint(u, 10)+" does not fit in a pointer")
	}
	return uintptr(u), nil
}

func typeName(v any) string {
	if v == nil {
		return "None"
	}
	return reflect.TypeOf(v).String()
}

func repr(v any) string {
	if v == nil {
		return "None"
	}
	return typeName(v) + " value"
}
