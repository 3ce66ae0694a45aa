package usm

import (
	"errors"
	"strconv"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/suaifields"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/typestr"
)

// binder checks the pointer against the syclobj at dpctl's step 6; nil
// skips the check (structural parse only).
type binder func(ptr uintptr, o syclobj.Obj) error

// parseFields is Parse for the SUAI dict f reads: dpctl's checks, pointer
// binding at dpctl's step 6, and the extent check.
func (r *Registry) parseFields(f suaifields.Fields) (*Array, error) {
	var bd binding
	in, err := parseFields(f, func(ptr uintptr, o syclobj.Obj) error {
		var err error
		bd, err = r.bind(ptr, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r.finish(in, bd)
}

// parseFields runs dpctl's checks in dpctl's order (the step numbers are
// those of RATIONALE.md "Strict SUAI parsing").
func parseFields(f suaifields.Fields, bind binder) (Interface, error) {
	var in Interface
	// 1, 2: offset and version are converted first, so their type errors win.
	off, ok, err := f.Int("offset")
	if err != nil {
		return in, intError("offset", err)
	}
	if ok {
		in.Offset = off
	}
	ver, _, err := f.Int("version")
	if err != nil {
		return in, intError("version", err)
	}
	// dpctl reads the version into a C int.
	if ver != int64(int32(ver)) {
		return in, malformed(errkind.Overflow, "version", strconv.FormatInt(ver, 10)+" does not fit in a C int")
	}
	// 3.
	if ver != Version1 {
		return in, malformed(errkind.Value, "version", "dict('version': "+strconv.FormatInt(ver, 10)+") is unexpected. The only recognized version is 1.")
	}
	in.Version = Version1
	// 4, 5: data = (pointer, read_only).
	ptr, ro, err := f.Data()
	if err != nil {
		return in, dataError(err)
	}
	if uint64(uintptr(ptr)) != ptr {
		return in, malformed(errkind.Overflow, "data[0]", strconv.FormatUint(ptr, 10)+" does not fit in a pointer")
	}
	in.Data, in.ReadOnly = uintptr(ptr), ro
	// 6: syclobj and the pointer's binding to it.
	o, err := f.Syclobj()
	if err == nil && o == nil {
		_, err = syclobjFromValue(nil)
	}
	if err != nil {
		var re *suaifields.ReadError
		if errors.As(err, &re) {
			err = re.Err
			if err == nil {
				err = &syclobjError{Value: re.Found, Reason: "unsupported type " + re.Found + " (want a filter string, SyclContext, SyclQueue or their capsules)"}
			}
		} else if !isSyclobjError(err) {
			return in, err
		}
		return in, &MalformedError{Field: "syclobj", Reason: "'data' field is not consistent with 'syclobj' field", kind: errkind.Value, Err: err}
	}
	in.Syclobj = o
	if bind != nil {
		if err := bind(in.Data, o); err != nil {
			return in, err
		}
	}
	// 7: shape must be a tuple or list; its elements are converted at step
	// 10, as in dpctl.
	n, ok, err := f.Len("shape")
	if err == nil && !ok {
		err = &suaifields.ReadError{Kind: errkind.Value, Found: "None"}
	}
	if err != nil {
		return in, valueError(err, "shape", "Shape entry is a required element of `__sycl_usm_array_interface__` dictionary")
	}
	// 8: typestr.
	ts, err := f.Typestr()
	if err != nil {
		found := ""
		var re *suaifields.ReadError
		if errors.As(err, &re) {
			found = re.Found
		}
		return in, valueError(err, "typestr", "dict('typestr': "+found+") is unexpected. A typestr string is required")
	}
	parsed, err := typestr.Parse(ts)
	if err == nil {
		in.DType, err = dtype.FromTypestr(parsed)
	}
	if err != nil {
		return in, &MalformedError{Field: "typestr", Reason: "dict('typestr': " + strconv.Quote(ts) + ") is unexpected", kind: errkind.Value, Err: err}
	}
	// 9: strides.
	sn, hasStrides, err := f.Len("strides")
	if err == nil && hasStrides && sn != n {
		err = &suaifields.ReadError{Kind: errkind.Value, Found: "a sequence of length " + strconv.Itoa(sn)}
	}
	if err != nil {
		return in, valueError(err, "strides", "'strides' must be a tuple or list of the same length as shape")
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
			if in.Strides[i], err = f.Elem("strides", i); err != nil {
				return in, intError("strides["+strconv.Itoa(i)+"]", err)
			}
		}
		s, err := f.Elem("shape", i)
		if err != nil {
			return in, intError("shape["+strconv.Itoa(i)+"]", err)
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

// isSyclobjError reports the errors syclobjFromValue returns.
func isSyclobjError(err error) bool {
	var se *syclobjError
	var sel *syclobj.SelectorError
	return errors.As(err, &se) || errors.As(err, &sel)
}

// intError turns a ReadError of an integer field or item into a
// MalformedError; other errors pass unchanged.
func intError(field string, err error) error {
	var re *suaifields.ReadError
	if !errors.As(err, &re) {
		return err
	}
	k, _ := re.Kind.(*errkind.Kind) //nolint:errorlint // Kind holds a kind sentinel, not a chain
	if k == errkind.Overflow {
		return &MalformedError{Field: field, Reason: "integer " + re.Found + " does not fit in int64", kind: k, Err: re.Err}
	}
	return &MalformedError{Field: field, Reason: "an integer is required, got " + re.Found, kind: errkind.Type, Err: re.Err}
}

// dataError turns a ReadError of Data into dpctl's error for "data".
func dataError(err error) error {
	var re *suaifields.ReadError
	if !errors.As(err, &re) {
		return err
	}
	switch k, _ := re.Kind.(*errkind.Kind); { //nolint:errorlint // as in intError
	case k == errkind.Value:
		return &MalformedError{Field: "data", Reason: "'data' field is required, and must be a tuple (usm_pointer, is_read_only_boolean)", kind: k, Err: re.Err}
	case re.Index < 0:
		return &MalformedError{Field: "data", Reason: "object of type " + re.Found + " has no len()", kind: errkind.Type, Err: re.Err}
	case k == errkind.Overflow:
		return &MalformedError{Field: "data[0]", Reason: "can't convert " + re.Found + " to a pointer", kind: k, Err: re.Err}
	}
	return &MalformedError{Field: "data[0]", Reason: "an integer is required, got " + re.Found, kind: errkind.Type, Err: re.Err}
}

// valueError turns a ReadError into a ValueError with dpctl's message.
func valueError(err error, field, reason string) error {
	var re *suaifields.ReadError
	if !errors.As(err, &re) {
		return err
	}
	return &MalformedError{Field: field, Reason: reason, kind: errkind.Value, Err: re.Err}
}
