// Package kernelparams knows what each parameter of a kernel is, where a
// runtime or the kernel's SPIR-V says, so that a launch can refuse an
// argument the parameter cannot take before the runtime reads it: a
// scalar handed to a pointer parameter is taken for an address (or, by
// OpenCL, for a cl_mem handle) and read through.
//
// The OpenCL backend learns the kinds of OpenCL C kernels from the
// runtime (clGetKernelArgInfo); every backend learns those of SPIR-V
// kernels from the module itself (FromSPIRV), since Level Zero and dpctl
// have no query. Check is the one rule all of them apply.
//
// CheckSPIRV is the one check of a SPIR-V module's form that every
// backend makes before a runtime sees the module (a runtime may loop
// forever or end the process on a malformed one); FromSPIRV's reader and
// it are held to each other by fuzzing. spirvops.go, the SPIR-V grammar's
// table of instructions it checks against, is written by genops.go.
package kernelparams
