package usm

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
)

// ParseJSON parses a SUAI dict serialised as JSON, as Python's json.loads
// and Parse would read it: numbers without a fraction or exponent are
// ints, others floats (which are not integers); true and false are
// integers; "syclobj" must be a filter string. Each field is decoded once,
// as the type the parser expects.
func ParseJSON(b []byte) (Interface, error) {
	f, err := newJSONFields(b)
	if err != nil {
		return Interface{}, err
	}
	return parseFields(f, nil, nil)
}

// jsonFields reads a SUAI dict from JSON: the object's values are kept
// undecoded and each is decoded when the parser asks for it.
type jsonFields struct {
	m              map[string]json.RawMessage
	shape, strides []json.RawMessage // what Len read
}

func newJSONFields(b []byte) (*jsonFields, error) {
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&m); err != nil {
		return nil, errkind.Wrap(errkind.Value, "usm.ParseJSON", "not a JSON object", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errkind.New(errkind.Value, "usm.ParseJSON", "data after the JSON object")
	}
	if m == nil { // null
		return nil, errNotADict()
	}
	return &jsonFields{m: m}, nil
}

// jsonType is the Python type json.loads makes of a value.
func jsonType(raw json.RawMessage) string {
	switch raw[0] {
	case 'n':
		return "NoneType"
	case 't', 'f':
		return "bool"
	case '"':
		return "str"
	case '[':
		return "list"
	case '{':
		return "dict"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "float"
	}
	return "int"
}

// jsonInt reads an integer.
func jsonInt(raw json.RawMessage) (int64, error) {
	switch t := jsonType(raw); t {
	case "bool":
		if raw[0] == 't' {
			return 1, nil
		}
		return 0, nil
	case "int":
		return intOf(json.Number(raw))
	default:
		return 0, &ReadError{Kind: errkind.Type, Found: t}
	}
}

// jsonTruthy is Python's bool() of a value.
func jsonTruthy(raw json.RawMessage) bool {
	switch raw[0] {
	case 'n', 'f':
		return false
	case 't':
		return true
	case '"':
		return len(raw) > 2
	case '[', '{':
		return len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0
	}
	return truthy(json.Number(raw))
}

func (f *jsonFields) Int(key string) (int64, bool, error) {
	raw, ok := f.m[key]
	if !ok {
		return 0, false, nil
	}
	i, err := jsonInt(raw)
	return i, true, err
}

func (f *jsonFields) Data() (uint64, bool, error) {
	raw, ok := f.m["data"]
	if !ok || !jsonTruthy(raw) {
		return 0, false, &ReadError{Kind: errkind.Value}
	}
	var n int
	switch t := jsonType(raw); t {
	case "list":
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return 0, false, err
		}
		if len(items) != 2 {
			return 0, false, &ReadError{Kind: errkind.Value}
		}
		var ptr uint64
		switch it := jsonType(items[0]); it {
		case "bool":
			ptr, _ = pointerOf(items[0][0] == 't')
		case "int":
			p, err := jsonPointer(json.Number(items[0]))
			if err != nil {
				return 0, false, err
			}
			ptr = p
		default:
			return 0, false, &ReadError{Kind: errkind.Type, Found: it}
		}
		return ptr, jsonTruthy(items[1]), nil
	case "str":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, err
		}
		n = utf8.RuneCountInString(s)
	case "dict":
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return 0, false, err
		}
		n = len(m)
	default:
		return 0, false, &ReadError{Kind: errkind.Type, Index: -1, Found: t}
	}
	if n != 2 {
		return 0, false, &ReadError{Kind: errkind.Value}
	}
	return 0, false, &ReadError{Kind: errkind.Type, Found: "an item of " + jsonType(raw)}
}

func (f *jsonFields) Syclobj() (syclobj.Obj, error) {
	raw, ok := f.m["syclobj"]
	if !ok || raw[0] == 'n' {
		return nil, nil
	}
	if raw[0] != '"' {
		return nil, &ReadError{Kind: errkind.Value, Found: jsonType(raw)}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	o, err := syclobjFromValue(s)
	if err != nil {
		return nil, &ReadError{Kind: errkind.Value, Found: "str", Err: err}
	}
	return o, nil
}

func (f *jsonFields) Len(key string) (int, bool, error) {
	raw, ok := f.m[key]
	if !ok || raw[0] == 'n' {
		return 0, false, nil
	}
	if raw[0] != '[' {
		return 0, false, &ReadError{Kind: errkind.Value, Found: jsonType(raw)}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return 0, false, err
	}
	if key == "strides" {
		f.strides = items
	} else {
		f.shape = items
	}
	return len(items), true, nil
}

func (f *jsonFields) Elem(key string, i int) (int64, error) {
	items := f.shape
	if key == "strides" {
		items = f.strides
	}
	return jsonInt(items[i])
}

func (f *jsonFields) Typestr() (string, error) {
	raw, ok := f.m["typestr"]
	if !ok || raw[0] == 'n' {
		return "", &ReadError{Kind: errkind.Value, Found: "None"}
	}
	if raw[0] != '"' {
		return "", &ReadError{Kind: errkind.Value, Found: jsonType(raw) + " value"}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}
