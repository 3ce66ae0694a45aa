// Package typestr parses and formats the NumPy array-interface typestrings
// that __sycl_usm_array_interface__ carries in its "typestr" field. It is
// the text of that field only: an array's element type is a dtype.Type,
// which maps a Type both ways (dtype.FromTypestr, dtype.Type.Typestr).
//
// The accepted subset is the one SUAI allows: kinds b (bool), i, u, f and c;
// byte orders '<', '>', '|' and '='; item sizes b1, i1 i2 i4 i8, u1 u2 u4 u8,
// f2 f4 f8, c8 c16. A typestring with no byte-order character ("f4") is
// accepted as native, as numpy.dtype accepts it.
//
// String returns the form dpctl emits: '|' followed by kind and size for
// every natively ordered type ("|f4", "|b1"); a byte-swapped type keeps an
// explicit '<' or '>' so that no information is lost.
//
// Errors quote the input and match usm.ErrValue with errors.Is.
package typestr
