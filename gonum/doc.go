// Package gonum shows usm arrays as gonum's matrices and vectors over
// their memory, without a copy, and makes arrays of gonum's matrices.
//
// Dense and VecDense give a host-readable (host or shared USM, or the cpu
// backend's memory) NDArray of float64 as a *mat.Dense or *mat.VecDense
// whose elements are the array's: what gonum writes, the array holds, and
// a kernel's results are read in place. gonum's mat package is float64
// only; float32 arrays map to blas32's General and Vector, which
// gonum.org/v1/gonum/blas/blas32 computes on (Gemm, Axpy, ...). The
// layout must be what gonum's types hold: rows in order with unit column
// stride (a row stride of at least the column count: row slices, column
// ranges), or a vector of positive increment. A transpose is refused with
// the way round it (Dense of the array's Transpose, then mat.Dense.T), a
// reversed view or one of device memory with the copy that serves it.
// The matrices are valid until the array is closed.
//
// FromMatrix and FromGeneral go the other way: a new array on a device,
// holding a copy of the matrix (gonum's memory is Go's, which no device
// reads).
//
// The package is a module of its own, github.com/usmbridge/usmbridge/gonum,
// so that a program that does not use gonum does not have it in its
// module graph (RATIONALE.md, "gonum in a module of its own").
package gonum
