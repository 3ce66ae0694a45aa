package clapi

import (
	"bytes"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// Programs, kernels and launches (OpenCL 1.2; clCreateProgramWithIL and
// clSetKernelArgSVMPointer are 2.x and optional). Handles and entry
// points are resolved with the rest of the table (clapi.go).

// Native program and kernel handles.
type (
	Program uintptr // cl_program
	Kernel  uintptr // cl_kernel
)

// Info values.
const (
	ProgramBuildLog   = 0x1183 // cl_program_build_info
	KernelNumArgs     = 0x1191 // cl_kernel_info
	DeviceILVersion   = 0x105B // cl_device_info (OpenCL 2.1)
	EventContext      = 0x11D4 // cl_event_info
	EventCommandQueue = 0x11D0

	KernelArgAddressQualifier = 0x1196 // cl_kernel_arg_info
	KernelArgAddressGlobal    = 0x119B // cl_kernel_arg_address_qualifier
	KernelArgAddressLocal     = 0x119C
	KernelArgAddressConstant  = 0x119D
	KernelArgAddressPrivate   = 0x119E
	KernelArgTypeName         = 0x1198 // cl_kernel_arg_info
	KernelArgTypeQualifier    = 0x1199
	KernelArgTypePipe         = 1 << 3 // cl_kernel_arg_type_qualifier
)

// programFns are the optional entry points of programs (resolved in Load).
type programFns struct {
	createProgramWithSource, createProgramWithIL, buildProgram, getProgramBuildInfo ffi.Fn
	releaseProgram, createKernel, releaseKernel, getKernelInfo, setKernelArg        ffi.Fn
	setKernelArgSVMPointer, enqueueNDRangeKernel, waitForEvents, retainEvent        ffi.Fn
	getKernelArgInfo, getEventInfo                                                  ffi.Fn
}

func (l *Lib) programEntries() []ffi.Symbol {
	p := &l.prog
	return []ffi.Symbol{
		ffi.Optional(&p.createProgramWithSource, "clCreateProgramWithSource"),
		ffi.Optional(&p.createProgramWithIL, "clCreateProgramWithIL"),
		ffi.Optional(&p.buildProgram, "clBuildProgram"),
		ffi.Optional(&p.getProgramBuildInfo, "clGetProgramBuildInfo"),
		ffi.Optional(&p.releaseProgram, "clReleaseProgram"),
		ffi.Optional(&p.createKernel, "clCreateKernel"),
		ffi.Optional(&p.releaseKernel, "clReleaseKernel"),
		ffi.Optional(&p.getKernelInfo, "clGetKernelInfo"),
		ffi.Optional(&p.setKernelArg, "clSetKernelArg"),
		ffi.Optional(&p.setKernelArgSVMPointer, "clSetKernelArgSVMPointer"),
		ffi.Optional(&p.enqueueNDRangeKernel, "clEnqueueNDRangeKernel"),
		ffi.Optional(&p.waitForEvents, "clWaitForEvents"),
		ffi.Optional(&p.retainEvent, "clRetainEvent"),
		ffi.Optional(&p.getKernelArgInfo, "clGetKernelArgInfo"),
		ffi.Optional(&p.getEventInfo, "clGetEventInfo"),
	}
}

// HasPrograms reports whether the loader has what building and launching
// kernels needs (OpenCL 1.2, with the events of HasOrdering).
func (l *Lib) HasPrograms() bool {
	p := &l.prog
	return p.createProgramWithSource.Present() && p.buildProgram.Present() && p.getProgramBuildInfo.Present() &&
		p.releaseProgram.Present() && p.createKernel.Present() && p.releaseKernel.Present() &&
		p.getKernelInfo.Present() && p.setKernelArg.Present() && p.enqueueNDRangeKernel.Present() &&
		p.waitForEvents.Present() && p.retainEvent.Present() && l.releaseEvent.Present() && l.flush.Present()
}

// HasIL reports whether the loader exports clCreateProgramWithIL (2.1).
func (l *Lib) HasIL() bool { return l.prog.createProgramWithIL.Present() }

// HasSVMArgs reports whether the loader exports clSetKernelArgSVMPointer.
func (l *Lib) HasSVMArgs() bool { return l.prog.setKernelArgSVMPointer.Present() }

// CreateProgramWithSource makes a program of one NUL-free source string
// (clCreateProgramWithSource, with its length given).
func (l *Lib) CreateProgramWithSource(c Context, src string) (Program, error) {
	s := &struct {
		p    *byte
		n    uintptr
		errc int32
	}{p: unsafe.StringData(src), n: uintptr(len(src))}
	p := l.prog.createProgramWithSource.Call5(uintptr(c), 1, uintptr(unsafe.Pointer(&s.p)), uintptr(unsafe.Pointer(&s.n)), uintptr(unsafe.Pointer(&s.errc)))
	if s.errc != 0 || p == 0 {
		return 0, fail("clCreateProgramWithSource", s.errc, OutOfResources)
	}
	return Program(p), nil
}

// CreateProgramWithIL makes a program of a SPIR-V module
// (clCreateProgramWithIL). Check HasIL first.
func (l *Lib) CreateProgramWithIL(c Context, il []byte) (Program, error) {
	errc := new(int32)
	p := l.prog.createProgramWithIL.Call4(uintptr(c), uintptr(unsafe.Pointer(&il[0])), uintptr(len(il)), uintptr(unsafe.Pointer(errc)))
	if *errc != 0 || p == 0 {
		return 0, fail("clCreateProgramWithIL", *errc, OutOfResources)
	}
	return Program(p), nil
}

// BuildProgram builds p for one device with options, a NUL-terminated
// string (clBuildProgram, no callback: it returns when done).
func (l *Lib) BuildProgram(p Program, d Device, options []byte) error {
	dev := &d
	return check("clBuildProgram", l.prog.buildProgram.Call6(uintptr(p), 1, uintptr(unsafe.Pointer(dev)), uintptr(unsafe.Pointer(&options[0])), 0, 0))
}

// BuildLog reads the build log of p for d (CL_PROGRAM_BUILD_LOG).
func (l *Lib) BuildLog(p Program, d Device) string {
	var n uintptr
	fn := l.prog.getProgramBuildInfo
	if fn.Call6(uintptr(p), uintptr(d), ProgramBuildLog, 0, 0, uintptr(unsafe.Pointer(&n))) != 0 || n == 0 {
		return ""
	}
	buf := make([]byte, n)
	if fn.Call6(uintptr(p), uintptr(d), ProgramBuildLog, n, uintptr(unsafe.Pointer(&buf[0])), 0) != 0 {
		return ""
	}
	return cString(buf)
}

// ReleaseProgram drops a reference (clReleaseProgram).
func (l *Lib) ReleaseProgram(p Program) error {
	return check("clReleaseProgram", l.prog.releaseProgram.Call1(uintptr(p)))
}

// CreateKernel makes the kernel of a NUL-terminated name (clCreateKernel).
func (l *Lib) CreateKernel(p Program, name []byte) (Kernel, error) {
	errc := new(int32)
	k := l.prog.createKernel.Call3(uintptr(p), uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(errc)))
	if *errc != 0 || k == 0 {
		return 0, fail("clCreateKernel", *errc, InvalidKernelName)
	}
	return Kernel(k), nil
}

// ReleaseKernel drops a reference (clReleaseKernel).
func (l *Lib) ReleaseKernel(k Kernel) error {
	return check("clReleaseKernel", l.prog.releaseKernel.Call1(uintptr(k)))
}

// KernelNumArgs reads CL_KERNEL_NUM_ARGS.
func (l *Lib) KernelNumArgs(k Kernel) (int, error) {
	n := new(uint32)
	err := check("clGetKernelInfo", l.prog.getKernelInfo.Call5(uintptr(k), KernelNumArgs, 4, uintptr(unsafe.Pointer(n)), 0))
	return int(*n), err
}

// KernelArgAddress reads argument i's address qualifier
// (CL_KERNEL_ARG_ADDRESS_QUALIFIER: KernelArgAddressGlobal, ...); 0 when
// the runtime does not say (no clGetKernelArgInfo, or a program built
// without -cl-kernel-arg-info where the runtime needs it).
func (l *Lib) KernelArgAddress(k Kernel, i uint32) uint32 {
	if !l.prog.getKernelArgInfo.Present() {
		return 0
	}
	q := new(uint32)
	if check("clGetKernelArgInfo", l.prog.getKernelArgInfo.Call6(uintptr(k), uintptr(i), KernelArgAddressQualifier, 4, uintptr(unsafe.Pointer(q)), 0)) != nil {
		return 0 // CL_KERNEL_ARG_INFO_NOT_AVAILABLE, above all
	}
	return *q
}

// KernelArgType reads argument i's type name and type qualifiers
// (CL_KERNEL_ARG_TYPE_NAME, CL_KERNEL_ARG_TYPE_QUALIFIER: KernelArgTypePipe,
// ...); ok is false when the runtime does not say.
func (l *Lib) KernelArgType(k Kernel, i uint32) (name string, qual uint64, ok bool) {
	fn := l.prog.getKernelArgInfo
	if !fn.Present() {
		return "", 0, false
	}
	q, n := new(uint64), new(uintptr)
	if check("clGetKernelArgInfo", fn.Call6(uintptr(k), uintptr(i), KernelArgTypeQualifier, 8, uintptr(unsafe.Pointer(q)), 0)) != nil ||
		check("clGetKernelArgInfo", fn.Call6(uintptr(k), uintptr(i), KernelArgTypeName, 0, 0, uintptr(unsafe.Pointer(n)))) != nil ||
		*n == 0 || *n > 1<<16 {
		return "", 0, false
	}
	b := make([]byte, *n)
	if check("clGetKernelArgInfo", fn.Call6(uintptr(k), uintptr(i), KernelArgTypeName, *n, uintptr(unsafe.Pointer(&b[0])), 0)) != nil {
		return "", 0, false
	}
	if j := bytes.IndexByte(b, 0); j >= 0 {
		b = b[:j]
	}
	return string(b), *q, true
}

// SetKernelArg sets argument i to size bytes at value (clSetKernelArg);
// value must stay valid for the call only.
func (l *Lib) SetKernelArg(k Kernel, i uint32, size uintptr, value unsafe.Pointer) error {
	return check("clSetKernelArg", l.prog.setKernelArg.Call4(uintptr(k), uintptr(i), size, uintptr(value)))
}

// SetKernelArgSVMPointer sets argument i to an SVM pointer
// (clSetKernelArgSVMPointer). Check HasSVMArgs first.
func (l *Lib) SetKernelArgSVMPointer(k Kernel, i uint32, p uintptr) error {
	return check("clSetKernelArgSVMPointer", l.prog.setKernelArgSVMPointer.Call3(uintptr(k), uintptr(i), p))
}

// NDRange is the work of a launch, in memory the runtime reads: the
// caller keeps it (one per kernel) so a launch allocates nothing.
type NDRange struct {
	Global, Local [3]uintptr
	Wait          []Event
	Out           Event
}

// EnqueueNDRangeKernel enqueues k over dims dimensions of r (local sizes
// when local), after r.Wait, with its event in r.Out
// (clEnqueueNDRangeKernel).
func (l *Lib) EnqueueNDRangeKernel(q Queue, k Kernel, dims int, r *NDRange, local bool) error {
	var lp uintptr
	if local {
		lp = uintptr(unsafe.Pointer(&r.Local[0]))
	}
	var wn, wp uintptr
	if len(r.Wait) > 0 {
		wn, wp = uintptr(len(r.Wait)), uintptr(unsafe.Pointer(&r.Wait[0]))
	}
	return check("clEnqueueNDRangeKernel", l.prog.enqueueNDRangeKernel.Call9(uintptr(q), uintptr(k), uintptr(dims), 0,
		uintptr(unsafe.Pointer(&r.Global[0])), lp, wn, wp, uintptr(unsafe.Pointer(&r.Out))))
}

// WaitForEvent waits for one event (clWaitForEvents); *slot holds it and
// stays the caller's.
func (l *Lib) WaitForEvent(slot *Event) error {
	return check("clWaitForEvents", l.prog.waitForEvents.Call2(1, uintptr(unsafe.Pointer(slot))))
}

// eventCommandExecutionStatus is CL_EVENT_COMMAND_EXECUTION_STATUS.
const eventCommandExecutionStatus = 0x11D3

// EventComplete reports whether the event's command has completed
// (clGetEventInfo's CL_EVENT_COMMAND_EXECUTION_STATUS is CL_COMPLETE, 0);
// a command that failed (a negative status) is its error. A loader
// without clGetEventInfo is an error.
func (l *Lib) EventComplete(e Event) (bool, error) {
	if !l.prog.getEventInfo.Present() {
		return false, &Error{Op: "clGetEventInfo", Status: InvalidOperation} // the loader lacks it
	}
	var st int32
	err := check("clGetEventInfo", l.prog.getEventInfo.Call5(uintptr(e), eventCommandExecutionStatus, 4, uintptr(unsafe.Pointer(&st)), 0))
	switch {
	case err != nil:
		return false, err
	case st < 0:
		return false, &Error{Op: "the launch", Status: Status(st)}
	}
	return st == 0, nil
}

// RetainEvent adds a reference (clRetainEvent).
func (l *Lib) RetainEvent(e Event) error {
	return check("clRetainEvent", l.prog.retainEvent.Call1(uintptr(e)))
}
