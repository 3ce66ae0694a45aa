// Package programs is what the backends that run kernels (opencl,
// levelzero, dpctl; docs/native.md, "Kernels") share of their programs:
// the key a program is kept by, a context's cache of programs built once
// per key, and a program's kernels, made once per name. The runtime calls
// stay in each backend; the rules of keeping live here, once.
//
// It imports nothing above internal/ (internal/apicheck holds that), so
// the backend's program and usm's Kernel come in as type arguments.
package programs
