package usm

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// mapFields reads a SUAI dict in the generic Go form Parse takes.
type mapFields struct {
	m              map[string]any
	shape, strides seq // the views Len made, so Elem does not re-derive them
}

func newMapFields(m map[string]any) *mapFields { return &mapFields{m: m} }

func (f *mapFields) Int(key string) (int64, bool, error) {
	v, ok := f.m[key]
	if !ok {
		return 0, false, nil
	}
	i, err := intOf(v)
	return i, true, err
}

func (f *mapFields) Data() (uint64, bool, error) {
	dv := f.m["data"]
	data, isSeq, n := sequence(dv)
	if !isSeq {
		n = lenOf(dv)
	}
	if !truthy(dv) || (n >= 0 && n != 2) {
		return 0, false, &ReadError{Kind: errkind.Value}
	}
	if !isSeq {
		if n < 0 {
			return 0, false, &ReadError{Kind: errkind.Type, Index: -1, Found: typeName(dv)}
		}
		return 0, false, &ReadError{Kind: errkind.Type, Found: "an item of " + typeName(dv)}
	}
	ptr, err := pointerOf(data.index(0))
	if err != nil {
		return 0, false, err
	}
	return ptr, truthy(data.index(1)), nil
}

func (f *mapFields) Syclobj() (syclobj.Obj, error) {
	v := f.m["syclobj"]
	if v == nil {
		return nil, nil
	}
	o, err := syclobjFromValue(v)
	if err != nil {
		return nil, &ReadError{Kind: errkind.Value, Found: typeName(v), Err: err}
	}
	return o, nil
}

func (f *mapFields) Len(key string) (int, bool, error) {
	v := f.m[key]
	if v == nil {
		return 0, false, nil
	}
	sq, isSeq, n := sequence(v)
	if !isSeq {
		return 0, false, &ReadError{Kind: errkind.Value, Found: typeName(v)}
	}
	if key == "strides" {
		f.strides = sq
	} else {
		f.shape = sq
	}
	return n, true, nil
}

func (f *mapFields) Elem(key string, i int) (int64, error) {
	s := f.shape
	if key == "strides" {
		s = f.strides
	}
	return intOf(s.index(i))
}

func (f *mapFields) Typestr() (string, error) {
	v := f.m["typestr"]
	ts, ok := v.(string)
	if !ok {
		return "", &ReadError{Kind: errkind.Value, Found: repr(v)}
	}
	return ts, nil
}

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

// lenOf is Python's len() of a value that is not a sequence: a string
// (code points), a byte string or a map; -1 for values without a length.
func lenOf(v any) int {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x)
	case []byte:
		return len(x)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Map {
		return rv.Len()
	}
	return -1
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
	case reflect.Map:
		return rv.Len() > 0
	case reflect.Pointer, reflect.Interface, reflect.Func, reflect.Chan:
		return !rv.IsNil()
	}
	return true
}

// intOf converts an integer of the generic form; bool counts as an
// integer because Python's bool is one.
func intOf(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, &ReadError{Kind: errkind.Overflow, Found: strconv.FormatUint(x, 10)}
		}
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return 0, &ReadError{Kind: errkind.Overflow, Found: errkind.Clip(string(x))}
			}
			return 0, &ReadError{Kind: errkind.Type, Found: errkind.Quote(string(x))}
		}
		return i, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return 0, &ReadError{Kind: errkind.Overflow, Found: strconv.FormatUint(u, 10)}
		}
		return int64(u), nil
	}
	return 0, &ReadError{Kind: errkind.Type, Found: typeName(v)}
}

// pointerOf converts data[0]: non-integers are ErrType, negative or
// too-large values ErrOverflow.
func pointerOf(v any) (uint64, error) {
	switch x := v.(type) {
	case uintptr:
		return uint64(x), nil
	case uint64:
		return x, nil
	case json.Number:
		return jsonPointer(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := rv.Int()
		if i < 0 {
			return 0, &ReadError{Kind: errkind.Overflow, Found: "negative value " + strconv.FormatInt(i, 10)}
		}
		return uint64(i), nil
	case reflect.Bool:
		if rv.Bool() {
			return 1, nil
		}
		return 0, nil
	}
	return 0, &ReadError{Kind: errkind.Type, Found: typeName(v)}
}

// jsonPointer converts a JSON number to a pointer.
func jsonPointer(x json.Number) (uint64, error) {
	u, err := strconv.ParseUint(string(x), 10, 64)
	if err == nil {
		return u, nil
	}
	// Not an unsigned decimal: a signed integer ("+5", "-1"; "-1e30"
	// excluded) is a number out of range unless positive.
	i, ierr := strconv.ParseInt(string(x), 10, 64)
	switch {
	case ierr == nil && i >= 0:
		return uint64(i), nil
	case ierr == nil || errors.Is(err, strconv.ErrRange) || errors.Is(ierr, strconv.ErrRange):
		return 0, &ReadError{Kind: errkind.Overflow, Found: errkind.Clip(string(x))}
	}
	return 0, &ReadError{Kind: errkind.Type, Found: errkind.Quote(string(x))}
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
