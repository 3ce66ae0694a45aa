// Package suaifields is the reader interface of usm's
// __sycl_usm_array_interface__ parser: Fields, the dict as the parser reads
// it, and ReadError, what a reader reports for a value of the wrong form.
// usm reads Go maps and JSON through it, pybridge live Python objects.
// These are not part of usm's API: every reader is in this module, and a
// Go user parses maps and JSON with usm.Parse, usm.ParseJSON and
// Registry.Parse (RATIONALE.md, "A public API sized to its users").
package suaifields

import (
	"github.com/usmbridge/usmbridge/syclobj"
)

// Fields is one __sycl_usm_array_interface__ dict as the parser reads it:
// each field once, with the type the parser expects, so that no container
// is ever converted or walked generically. The parser calls the methods
// in dpctl's order, stopping at the first error: Int("offset"),
// Int("version"), Data, Syclobj, Len("shape"), Typestr, Len("strides"),
// then, dimension by dimension, Elem("strides", i) (when there are
// strides) and Elem("shape", i).
//
// usm.Parse reads Go maps, usm.ParseJSON reads JSON text, and pybridge reads
// live Python objects with the same rules (pybridge's SUAI reader). Integers
// are read as Python's operator.index reads them: a bool is an integer, a
// float or a string is not.
//
// A method reports a value that is not of the form it reads with a
// *ReadError, which the parser turns into the *usm.MalformedError dpctl's
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
	// Syclobj reads "syclobj": nil when it is absent or None. ErrValue:
	// a value of no syclobj form (Err may give the cause, e.g. a
	// malformed filter selector).
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
// The parser turns it into a *usm.MalformedError naming the field; it does
// not itself match an error kind.
type ReadError struct {
	Kind  error  // errkind.Type, errkind.Value or errkind.Overflow (usm.ErrType, ...)
	Index int    // Data only: 0 if data[0] is at fault, -1 if the pair is
	Found string // what was found, for messages: a type name, or a number
	Err   error  // the cause, if any
}

func (e *ReadError) Error() string {
	s := "usm: " + e.Kind.Error() + ": found " + e.Found
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ReadError) Unwrap() error { return e.Err }
