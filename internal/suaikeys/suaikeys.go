// Package suaikeys is the order in which an exact
// __sycl_usm_array_interface__ dict's values cross from pyext's C half,
// which looks them up (ubx.h's ubx_suai), to pybridge, which reads them
// (pybridge.SUAIDict.Values): the keys dpctl's parser reads, by index.
// pyext writes Names into the C half's table when a module is made.
package suaikeys

// The index of each key's value.
const (
	Data = iota
	Shape
	Strides
	Typestr
	Offset
	Version
	Syclobj
	N // how many
)

// Names are the keys, by index.
var Names = [N]string{Data: "data", Shape: "shape", Strides: "strides", Typestr: "typestr", Offset: "offset", Version: "version", Syclobj: "syclobj"}
