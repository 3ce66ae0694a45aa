package kernelparams

import (
	"strconv"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Kind is what a kernel parameter takes.
type Kind uint8

const (
	Unknown Kind = iota // nothing says: any argument goes, as in C
	Value               // passed by value: a scalar, a vector, a struct
	Global              // a pointer to __global or __constant (or generic) memory: a USM pointer
	Local               // __local memory, sized by the launch: no argument usmbridge passes fits
	Opaque              // an image, a sampler, a pipe, a device queue: a runtime handle, which no argument is
)

// Check refuses an argument (pointer: usm.Pointer, else a scalar) for
// parameter i of kernel name when the parameter's kind cannot take it:
// a scalar for a Global parameter, anything for a Local or an Opaque one
// (which the runtime would take for a handle). A pointer
// for a Value parameter passes its address, as C would. op names the
// launch in the error, a usm.ErrValue one.
func Check(op, name string, i int, k Kind, pointer bool) error {
	switch {
	case k == Global && !pointer:
		return errkind.New(errkind.Value, op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(name)+
			" is a pointer to __global or __constant memory; got a scalar (usm.Pointer passes USM)")
	case k == Local:
		return errkind.New(errkind.Value, op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(name)+
			" is __local memory, which Launch cannot pass")
	case k == Opaque:
		return errkind.New(errkind.Value, op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(name)+
			" is an image, a sampler, a pipe or a queue, which Launch cannot pass")
	}
	return nil
}
