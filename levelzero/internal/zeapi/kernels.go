package zeapi

import (
	"bytes"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
)

// Modules, kernels and launches (spec 1.0, in loader 1.8.12). They are
// optional in the table: a loader or driver without them leaves
// HasKernels false, and queues then build no programs.

// Native module and kernel handles.
type (
	Module   uintptr // ze_module_handle_t
	Kernel   uintptr // ze_kernel_handle_t
	BuildLog uintptr // ze_module_build_log_handle_t
)

const (
	stypeModuleDesc       = 0x1b
	stypeKernelDesc       = 0x1d
	stypeKernelProperties = 0x1e
	moduleFormatSPIRV     = 0
)

type zeModuleDesc struct { // ze_module_desc_t, 56 bytes
	header
	format       uint32
	_            uint32
	inputSize    uintptr
	pInputModule uintptr
	pBuildFlags  uintptr
	pConstants   uintptr
}

type zeKernelDesc struct { // ze_kernel_desc_t, 32 bytes
	header
	flags       uint32
	_           uint32
	pKernelName uintptr
}

type zeKernelProperties struct { // ze_kernel_properties_t, 96 bytes
	header
	numKernelArgs uint32
	_             [76]byte
}

// GroupCount is a ze_group_count_t (12 bytes).
type GroupCount struct{ X, Y, Z uint32 }

type kernelFns struct {
	translateHandle                                                            ffi.Fn
	moduleCreate, moduleDestroy, buildLogDestroy, buildLogGetString            ffi.Fn
	kernelCreate, kernelDestroy, kernelSetGroupSize, kernelSuggestGroupSize    ffi.Fn
	kernelSetArgumentValue, kernelGetProperties, commandListAppendLaunchKernel ffi.Fn
}

func (l *Lib) kernelEntries() []ffi.Symbol {
	k := &l.kern
	return []ffi.Symbol{
		ffi.Optional(&k.moduleCreate, "zeModuleCreate"),
		ffi.Optional(&k.moduleDestroy, "zeModuleDestroy"),
		ffi.Optional(&k.buildLogDestroy, "zeModuleBuildLogDestroy"),
		ffi.Optional(&k.buildLogGetString, "zeModuleBuildLogGetString"),
		ffi.Optional(&k.kernelCreate, "zeKernelCreate"),
		ffi.Optional(&k.kernelDestroy, "zeKernelDestroy"),
		ffi.Optional(&k.kernelSetGroupSize, "zeKernelSetGroupSize"),
		ffi.Optional(&k.kernelSuggestGroupSize, "zeKernelSuggestGroupSize"),
		ffi.Optional(&k.kernelSetArgumentValue, "zeKernelSetArgumentValue"),
		ffi.Optional(&k.kernelGetProperties, "zeKernelGetProperties"),
		ffi.Optional(&k.commandListAppendLaunchKernel, "zeCommandListAppendLaunchKernel"),
		ffi.Optional(&k.translateHandle, "zelLoaderTranslateHandle"),
	}
}

// HasKernels reports whether every entry point of modules and launches
// is there.
func (l *Lib) HasKernels() bool {
	k := &l.kern
	return k.moduleCreate.Present() && k.moduleDestroy.Present() && k.buildLogDestroy.Present() &&
		k.buildLogGetString.Present() && k.kernelCreate.Present() && k.kernelDestroy.Present() &&
		k.kernelSetGroupSize.Present() && k.kernelSuggestGroupSize.Present() && k.kernelSetArgumentValue.Present() &&
		k.kernelGetProperties.Present() && k.commandListAppendLaunchKernel.Present()
}

// zelHandleContext is ZEL_HANDLE_CONTEXT (loader/ze_loader.h).
const zelHandleContext = 2

// DirectHandles reports whether the loader hands out the driver's own
// handles (one driver, no ZE_ENABLE_LOADER_INTERCEPT):
// zelLoaderTranslateHandle leaves c as it is. false when the loader
// wraps handles, or cannot say.
func (l *Lib) DirectHandles(c Context) bool {
	if !l.kern.translateHandle.Present() {
		return false
	}
	out := new(uintptr)
	r := l.kern.translateHandle.Call3(zelHandleContext, uintptr(c), uintptr(unsafe.Pointer(out)))
	return Status(uint32(r)) == Success && *out == uintptr(c)
}

// ModuleCreate builds a SPIR-V module for dev with NUL-terminated build
// flags (zeModuleCreate), and returns the build log when withLog. A loader
// that wraps handles does not wrap the build log of a failed build
// (source/loader/ze_ldrddi.cpp returns first, at v1.8.12 and since), so
// reading it would misread the driver's object as the loader's:
// withLog must be false there (DirectHandles).
func (l *Lib) ModuleCreate(c Context, dev Device, spirv, flags []byte, withLog bool) (Module, string, error) {
	s := &struct {
		desc zeModuleDesc
		m    Module
		log  BuildLog
	}{desc: zeModuleDesc{header: header{stype: stypeModuleDesc}, format: moduleFormatSPIRV, inputSize: uintptr(len(spirv)),
		pInputModule: uintptr(unsafe.Pointer(&spirv[0])), pBuildFlags: uintptr(unsafe.Pointer(&flags[0]))}}
	var logp uintptr
	if withLog {
		logp = uintptr(unsafe.Pointer(&s.log))
	}
	r := l.kern.moduleCreate.Call5(uintptr(c), uintptr(dev), uintptr(unsafe.Pointer(&s.desc)), uintptr(unsafe.Pointer(&s.m)), logp)
	var text string
	if s.log != 0 {
		text = l.buildLog(s.log)
		l.kern.buildLogDestroy.Call1(uintptr(s.log))
	}
	if err := check("zeModuleCreate", r); err != nil {
		return 0, text, err
	}
	return s.m, text, nil
}

func (l *Lib) buildLog(h BuildLog) string {
	n := new(uintptr)
	if Status(uint32(l.kern.buildLogGetString.Call3(uintptr(h), uintptr(unsafe.Pointer(n)), 0))) != Success || *n == 0 {
		return ""
	}
	buf := make([]byte, *n)
	if Status(uint32(l.kern.buildLogGetString.Call3(uintptr(h), uintptr(unsafe.Pointer(n)), uintptr(unsafe.Pointer(&buf[0]))))) != Success {
		return ""
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}

// ModuleDestroy destroys a module (zeModuleDestroy).
func (l *Lib) ModuleDestroy(m Module) error {
	return check("zeModuleDestroy", l.kern.moduleDestroy.Call1(uintptr(m)))
}

// KernelCreate makes the kernel of a NUL-terminated name (zeKernelCreate)
// and returns it with its argument count (zeKernelGetProperties).
func (l *Lib) KernelCreate(m Module, name []byte) (Kernel, int, error) {
	s := &struct {
		desc  zeKernelDesc
		k     Kernel
		props zeKernelProperties
	}{desc: zeKernelDesc{header: header{stype: stypeKernelDesc}, pKernelName: uintptr(unsafe.Pointer(&name[0]))},
		props: zeKernelProperties{header: header{stype: stypeKernelProperties}}}
	if err := check("zeKernelCreate", l.kern.kernelCreate.Call3(uintptr(m), uintptr(unsafe.Pointer(&s.desc)), uintptr(unsafe.Pointer(&s.k)))); err != nil {
		return 0, 0, err
	}
	if err := check("zeKernelGetProperties", l.kern.kernelGetProperties.Call2(uintptr(s.k), uintptr(unsafe.Pointer(&s.props)))); err != nil {
		l.kern.kernelDestroy.Call1(uintptr(s.k))
		return 0, 0, err
	}
	return s.k, int(s.props.numKernelArgs), nil
}

// KernelDestroy destroys a kernel (zeKernelDestroy).
func (l *Lib) KernelDestroy(k Kernel) error {
	return check("zeKernelDestroy", l.kern.kernelDestroy.Call1(uintptr(k)))
}

// KernelSetGroupSize sets the work-group size (zeKernelSetGroupSize).
func (l *Lib) KernelSetGroupSize(k Kernel, x, y, z uint32) error {
	return check("zeKernelSetGroupSize", l.kern.kernelSetGroupSize.Call4(uintptr(k), uintptr(x), uintptr(y), uintptr(z)))
}

// KernelSuggestGroupSize asks the driver for a group size for a global
// size, written to out (memory the caller keeps: a launch's scratch)
// (zeKernelSuggestGroupSize).
func (l *Lib) KernelSuggestGroupSize(k Kernel, gx, gy, gz uint32, out *[3]uint32) error {
	return check("zeKernelSuggestGroupSize", l.kern.kernelSuggestGroupSize.Call7(uintptr(k), uintptr(gx), uintptr(gy), uintptr(gz),
		uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&out[1])), uintptr(unsafe.Pointer(&out[2]))))
}

// Launch is the native calls of one kernel launch, made in one crossing
// into C (ffi.StatusSeq) by Run: the arguments set since the last launch
// (zeKernelSetArgumentValue), the reset of the event the launch signals
// (zeEventHostReset) and the append (zeCommandListAppendLaunchKernel).
// It is its owner's scratch (a kernel's, one launch at a time), sized
// once, so a launch allocates nothing. What the calls read through
// addresses (argument values, the group count, the wait list) is read
// during Run: Go heap memory or C memory its owner keeps alive.
type Launch struct {
	l     *Lib
	calls []ffi.StatusCall
	what  []int // per call: the argument index it sets, or a step below
	n     int   // the calls added since the last Run
}

// The calls of a Launch that set no argument.
const (
	stepReset  = -1 - iota // zeEventHostReset
	stepAppend             // zeCommandListAppendLaunchKernel
)

// NewLaunch returns the scratch of launches of a kernel of nargs
// arguments.
func (l *Lib) NewLaunch(nargs int) *Launch {
	return &Launch{l: l, calls: make([]ffi.StatusCall, nargs+2), what: make([]int, nargs+2)}
}

// add appends a call of fn and returns its arguments to fill in (at most
// nargs + 2 calls are added before a Run). The row is written in place,
// and the arguments the callee does not take are left as they were: it
// never reads them.
func (s *Launch) add(what int, fn ffi.Fn) *[6]uintptr {
	c := &s.calls[s.n]
	s.what[s.n] = what
	s.n++
	c.Fn = fn
	return &c.Args
}

// SetArgumentValue adds the setting of argument i to size bytes at v,
// which the driver copies (zeKernelSetArgumentValue).
func (s *Launch) SetArgumentValue(k Kernel, i uint32, size uintptr, v unsafe.Pointer) {
	a := s.add(int(i), s.l.kern.kernelSetArgumentValue)
	a[0], a[1], a[2], a[3] = uintptr(k), uintptr(i), size, uintptr(v)
}

// Append adds the append of a launch of count groups after wait that
// signals signal (zeCommandListAppendLaunchKernel), an event reset first
// (zeEventHostReset), or nothing (signal 0).
func (s *Launch) Append(cl CommandList, k Kernel, count *GroupCount, signal Event, wait []Event) {
	if signal != 0 {
		a := s.add(stepReset, s.l.eventHostReset)
		a[0] = uintptr(signal)
	}
	a := s.add(stepAppend, s.l.kern.commandListAppendLaunchKernel)
	a[0], a[1], a[2], a[3] = uintptr(cl), uintptr(k), uintptr(unsafe.Pointer(count)), uintptr(signal)
	a[4], a[5] = sliceArg(wait)
}

// Run makes the calls added since the last Run, in one crossing, and
// forgets them. It stops at the first that fails: err is an *Error
// naming it, and arg the index of the argument when it was a
// zeKernelSetArgumentValue (else -1).
func (s *Launch) Run() (arg int, err error) {
	n := s.n
	s.n = 0
	at, st := ffi.StatusSeq(s.calls[:n])
	if at == n {
		return -1, nil
	}
	switch what := s.what[at]; what {
	case stepReset:
		return -1, &Error{Op: "zeEventHostReset", Status: Status(uint32(st))}
	case stepAppend:
		return -1, &Error{Op: "zeCommandListAppendLaunchKernel", Status: Status(uint32(st))}
	default:
		return what, &Error{Op: "zeKernelSetArgumentValue", Status: Status(uint32(st))}
	}
}

// TypeQuery is the memory of MemTypes, kept by its caller (a kernel's
// launch scratch) and sized once, so a query allocates nothing.
type TypeQuery struct {
	calls []ffi.StatusCall
	props []zeMemoryAllocationProperties
	devs  []Device
	types []uint32
}

// NewTypeQuery returns the memory of MemTypes of up to n pointers.
func NewTypeQuery(n int) *TypeQuery {
	return &TypeQuery{calls: make([]ffi.StatusCall, n), props: make([]zeMemoryAllocationProperties, n),
		devs: make([]Device, n), types: make([]uint32, n)}
}

// MemTypes classifies each of ps (zeMemGetAllocProperties, all in one
// crossing into C) into q's memory and returns their MemoryType*, valid
// until q is used again: MemoryTypeUnknown for unknown memory, and for a
// pointer the driver fails to classify and every one after it (the
// calls stop at the first failure). ps holds at most the n of q.
func (l *Lib) MemTypes(c Context, ps []uintptr, q *TypeQuery) []uint32 {
	n := len(ps)
	for i, p := range ps {
		q.props[i] = zeMemoryAllocationProperties{header: header{stype: stypeMemoryAllocationProps}}
		q.calls[i] = ffi.StatusCall{Fn: l.memGetAllocProperties, Args: [6]uintptr{uintptr(c), p,
			uintptr(unsafe.Pointer(&q.props[i])), uintptr(unsafe.Pointer(&q.devs[i]))}}
	}
	at, _ := ffi.StatusSeq(q.calls[:n])
	for i := range n {
		q.types[i] = MemoryTypeUnknown
		if i < at {
			q.types[i] = q.props[i].typ
		}
	}
	return q.types[:n]
}
