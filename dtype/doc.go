// Package dtype is the element type of an array: every DLPack 1.x data type
// a consumer can hold element by element, with the byte order a
// __sycl_usm_array_interface__ typestring may add.
//
// A Type is one DLPack DLDataType with one lane and a whole number of
// bytes per element: bool (kDLBool, 8 bits), signed and unsigned integers
// of 8 to 64 bits, float16/32/64, bfloat16, complex32/64/128 (kDLComplex
// counts the bits of the pair) and the eight float8 codes of DLPack 1.1.
// The sub-byte codes (float6, float4), vector types (lanes other than 1),
// kDLOpaqueHandle and codes dlpack.h does not define are refused by
// FromDataType with a usm.ErrBuffer error naming the DLPack dtype: strides,
// offsets and extents count whole elements of whole bytes, which those
// types do not have (RATIONALE.md, "One element type: DLPack's, with
// SUAI's byte order").
//
// FromDataType and Type.DataType map DLPack's dtype both ways; FromTypestr
// and Type.Typestr map the SUAI typestring (package typestr parses and
// formats its text). Types that SUAI has no typestring for (bfloat16,
// complex32, float8) give a usm.ErrBuffer error from Typestr: they travel
// through DLPack only. A byte-swapped type (">f4" on a little-endian host)
// comes only from a typestring and has no DLPack dtype.
package dtype
