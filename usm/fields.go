package usm

import (
	"errors"
	"strconv"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/typestr"
)

// Fields is one __sycl_usm_array_interface__ dict as the parser reads it:
// each field once, with the type the parser expects, so that no container
// is ever converted or walked generically. The parser calls the methods
// in dpctl's order, stopping at the first error: Int("offset"),
// Int("version"), Data, Syclobj, Len("shape"), Typestr, Len("strides"),
// then, dimension by dimension, Elem("strides", i) (when there are
// strides) and Elem("shape", i).
//
// Parse reads Go maps through it, ParseJSON JSON text, and pybridge live
// Python objects, all with the same rules; a program with SUAI dicts in
// another form (another language's objects, a wire format) implements it
// and calls ParseFields or Registry.ParseFields. Integers are read as
// Python's operator.index reads them: a bool is an integer, a float or a
// string is not.
//
// A method reports a value that is not of the form it reads with a
// *ReadError, which the parser turns into the *MalformedError dpctl's
// rules give for that field. Any other error (a Python exception raised
// by the value's own code, say) is returned by the parser unchanged.
type Fields interface {
	// Int reads the integer field key ("offset", "version"). ok is false
	// when the dict has no such key (a key holding None is present, and
	// not an integer). ErrType: not an integer; ErrOverflow: outside
	// int64.
	Int(key string) (v int64, ok bool, err error)
	// Data reads "data", the pair (pointer, read_only); readOnly is the
	// truth of data[1]. ErrValue: absent, None, false, or of a length
	// other than 2; ErrType with Index -1: true but without a length;
	// ErrType with Index 0: data[0] is not an integer (also the items of
	// a str, bytes or dict of length 2); ErrOverflow with Index 0: data[0]
	// is negative or above 2**64-1.
	Data() (ptr uint64, readOnly bool, err error)
	// Syclobj reads "syclobj": nil when it is absent or None. A filter
	// string is syclobj.ParseSelector's; a SyclQueue or SyclContext is a
	// syclobj.QueueRef or ContextRef; an object with dpctl's _get_capsule
	// method is syclobj.FromCapsule's, called when the registry binds the
	// pointer (its function returns a *ReadError for what it cannot read,
	// and the method's own error as it is). ErrValue: a value of no syclobj form (Err may give the
	// cause, e.g. a malformed filter selector).
	Syclobj() (syclobj.Obj, error)
	// Len reads the tuple or list at key ("shape", "strides") and returns
	// its length; ok is false when the key is absent or None. ErrValue:
	// any other value. Elem then reads the items as they were when Len
	// read the container.
	Len(key string) (n int, ok bool, err error)
	// Elem reads item i of the container Len read at key, as Int does.
	Elem(key string, i int) (int64, error)
	// Typestr reads "typestr", every character of it. ErrValue: absent,
	// or not a str.
	Typestr() (string, error)
}

// ReadError is what a Fields method returns for a value that is not of
// the form it reads (see Fields for the kinds each method uses).
// The parser turns it into a *MalformedError naming the field; it does
// not itself match an error kind.
type ReadError struct {
	Kind  error  // ErrType, ErrValue or ErrOverflow
	Index int    // Data only: 0 if data[0] is at fault, -1 if the pair is
	Found string // what was found, for messages: a type name, or a number
	Err   error  // the cause, if any
}

// Error describes what was found.
func (e *ReadError) Error() string {
	s := e.Kind.Error() + ": found " + e.Found
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *ReadError) Unwrap() error { return e.Err }

// ParseFields parses the SUAI dict f reads with dpctl's checks, as Parse
// does for a Go map: the pointer is not bound (Registry.ParseFields binds
// it).
func ParseFields(f Fields) (Interface, error) { return parseFields(f, nil, nil) }

// binder checks the pointer against the syclobj at dpctl's step 6; nil
// skips the check (structural parse only).
type binder func(ptr uintptr, o syclobj.Obj) error

// ParseFields is Registry.Parse for the SUAI dict f reads: dpctl's
// checks, the pointer bound at dpctl's step 6, the extent check, and the
// allocation as Owner where usmbridge allocated the memory.
func (r *Registry) ParseFields(f Fields) (*Array, error) {
	blk := new(arrayBlock)
	if err := r.ParseFieldsInto(f, &blk.Array, blk.dims[:]); err != nil {
		return nil, err
	}
	return &blk.Array, nil
}

// ParseFieldsInto is ParseFields into memory the caller owns: the Array
// is written to *dst, and its Shape and Strides are made in dims when
// they fit (2*ndim values with strides, ndim without), else allocated.
// dims must not be reused while dst's Shape or Strides are in use. A
// caller that reads arrays over and over (an extension module's
// arguments, each call's in the same storage) allocates nothing for
// them. On an error *dst is unspecified.
func (r *Registry) ParseFieldsInto(f Fields, dst *Array, dims []int64) error {
	var bd binding
	in, err := parseFields(f, func(ptr uintptr, o syclobj.Obj) error {
		var err error
		bd, err = r.bind(ptr, o)
		return err
	}, dims)
	if err != nil {
		return err
	}
	_, err = r.finish(dst, in, bd)
	return err
}

// inlineDims is how many dimensions an Array ParseFields makes holds the
// shape and strides of in its own allocation.
const inlineDims = 4

// arrayBlock is an Array with room for its shape and strides: an import
// of an array of up to inlineDims dimensions allocates once for both (the
// slices point into dims, which lives as long as the Array).
type arrayBlock struct {
	Array
	dims [2 * inlineDims]int64
}

// parseFields runs dpctl's checks in dpctl's order (the step numbers are
// those of RATIONALE.md "Strict SUAI parsing"). The shape and strides are
// made in dims when they fit (with no room to grow), else allocated.
func parseFields(f Fields, bind binder, dims []int64) (Interface, error) {
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
		var re *ReadError
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
		err = &ReadError{Kind: errkind.Value, Found: "None"}
	}
	if err != nil {
		return in, valueError(err, "shape", "Shape entry is a required element of `__sycl_usm_array_interface__` dictionary")
	}
	// 8: typestr.
	ts, err := f.Typestr()
	if err != nil {
		found := ""
		var re *ReadError
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
		return in, &MalformedError{Field: "typestr", Reason: "dict('typestr': " + errkind.Quote(ts) + ") is unexpected", kind: errkind.Value, Err: err}
	}
	// 9: strides.
	sn, hasStrides, err := f.Len("strides")
	if err == nil && hasStrides && sn != n {
		err = &ReadError{Kind: errkind.Value, Found: "a sequence of length " + strconv.Itoa(sn)}
	}
	if err != nil {
		return in, valueError(err, "strides", "'strides' must be a tuple or list of the same length as shape")
	}
	// 10: elements dimension by dimension (stride, then extent, then the
	// extent's sign, as dpctl does), then the layout as a whole.
	need := n
	if hasStrides {
		need = 2 * n
	}
	var buf []int64
	if need <= len(dims) {
		buf = dims[:need:need]
	} else {
		buf = make([]int64, need)
	}
	in.Shape = buf[:n:n]
	if hasStrides {
		in.Strides = buf[n:]
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
	var re *ReadError
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
	var re *ReadError
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
	var re *ReadError
	if !errors.As(err, &re) {
		return err
	}
	return &MalformedError{Field: field, Reason: reason, kind: errkind.Value, Err: re.Err}
}
