// Package typestr parses and formats the NumPy array-interface typestrings
// that __sycl_usm_array_interface__ carries in its "typestr" field, and maps
// them to and from DLPack's DLDataType.
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
// Errors quote the input and match usm.ErrValue (malformed typestring) or
// usm.ErrBuffer (a valid type that DLPack cannot carry) with errors.Is.
package typestr
