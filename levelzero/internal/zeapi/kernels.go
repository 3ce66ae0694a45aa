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

// KernelSetArgumentValue sets argument i to size bytes at v, which the
// driver copies (zeKernelSetArgumentValue).
func (l *Lib) KernelSetArgumentValue(k Kernel, i uint32, size uintptr, v unsafe.Pointer) error {
	return check("zeKernelSetArgumentValue", l.kern.kernelSetArgumentValue.Call4(uintptr(k), uintptr(i), size, uintptr(v)))
}

// AppendLaunchKernel appends a launch of count groups that signals signal
// (may be 0) after wait (zeCommandListAppendLaunchKernel); count and wait
// are the caller's memory, read during the call.
func (l *Lib) AppendLaunchKernel(cl CommandList, k Kernel, count *GroupCount, signal Event, wait []Event) error {
	nw, pw := sliceArg(wait)
	return check("zeCommandListAppendLaunchKernel", l.kern.commandListAppendLaunchKernel.Call6(uintptr(cl), uintptr(k),
		uintptr(unsafe.Pointer(count)), uintptr(signal), nw, pw))
}

// TypeQuery is the memory zeMemGetAllocProperties writes, kept by its
// caller (a kernel's launch scratch) so a query allocates nothing.
type TypeQuery struct {
	props zeMemoryAllocationProperties
	dev   Device
}

// MemType classifies p (zeMemGetAllocProperties) into q's memory and
// returns its MemoryType*, MemoryTypeUnknown for unknown memory or any
// error.
func (l *Lib) MemType(c Context, p uintptr, q *TypeQuery) uint32 {
	q.props = zeMemoryAllocationProperties{header: header{stype: stypeMemoryAllocationProps}}
	if Status(uint32(l.memGetAllocProperties.Call4(uintptr(c), p, uintptr(unsafe.Pointer(&q.props)), uintptr(unsafe.Pointer(&q.dev))))) != Success {
		return MemoryTypeUnknown
	}
	return q.props.typ
}
