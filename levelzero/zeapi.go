package levelzero

import (
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
)

// Loader is the SONAME of the Level Zero loader. The unversioned
// libze_loader.so exists only with libze-dev installed, so it is never
// opened.
const Loader = "libze_loader.so.1"

// zeAPI is the raw symbol table of the loader: one address per entry
// point, called through ffi.Call (purego.SyscallN: ≈3× cheaper than a
// RegisterFunc wrapper, and every function here takes integers and
// pointers only), except the two that take the 64-byte IPC handle by
// value, which need purego's struct passing (ffi.Bind).
type zeAPI struct {
	init                              uintptr
	driverGet                         uintptr
	driverGetAPIVersion               uintptr
	driverGetProperties               uintptr
	driverGetIpcProperties            uintptr
	driverGetExtensionFunctionAddress uintptr
	deviceGet                         uintptr
	deviceGetProperties               uintptr
	contextCreate                     uintptr
	contextDestroy                    uintptr
	memAllocHost                      uintptr
	memAllocDevice                    uintptr
	memAllocShared                    uintptr
	memFree                           uintptr
	memGetAllocProperties             uintptr
	memGetAddressRange                uintptr
	memGetIpcHandle                   uintptr
	memCloseIpcHandle                 uintptr
	commandQueueCreate                uintptr
	commandQueueDestroy               uintptr
	commandQueueExecuteCommandLists   uintptr
	commandQueueSynchronize           uintptr
	commandListCreate                 uintptr
	commandListCreateImmediate        uintptr
	commandListClose                  uintptr
	commandListReset                  uintptr
	commandListDestroy                uintptr
	commandListAppendMemoryCopy       uintptr
	commandListAppendMemoryFill       uintptr
	commandListAppendBarrier          uintptr
	eventPoolCreate                   uintptr
	eventPoolDestroy                  uintptr
	eventCreate                       uintptr
	eventDestroy                      uintptr
	eventHostSignal                   uintptr
	eventHostSynchronize              uintptr
	eventQueryStatus                  uintptr
	eventHostReset                    uintptr

	// Optional: absent from loader 1.8.12 (Debian 12). Zero when absent.
	initDrivers                uintptr // spec 1.10, loader ≥ 1.18
	commandListHostSynchronize uintptr // spec 1.6, loader ≥ 1.10
	memPutIpcHandleAddr        uintptr // spec 1.6, loader ≥ 1.10

	memOpenIpcHandle func(ctx, dev uintptr, h IPCHandle, flags uint32, pptr *uintptr) Result
	memPutIpcHandle  func(ctx uintptr, h IPCHandle) Result // nil when absent
}

// loadAPI opens the loader and resolves every symbol. A missing loader or
// a missing required symbol is errkind.NotAvailable: Level Zero cannot be
// used in this process.
func loadAPI() (*zeAPI, error) {
	lib, _, err := ffi.Open(ffi.RTLDNow|ffi.RTLDLocal, Loader)
	if err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "levelzero.Init", "the Level Zero loader is not installed (Debian: apt install libze1)", err)
	}
	a := &zeAPI{}
	required := []struct {
		name string
		p    *uintptr
	}{
		{"zeInit", &a.init},
		{"zeDriverGet", &a.driverGet},
		{"zeDriverGetApiVersion", &a.driverGetAPIVersion},
		{"zeDriverGetProperties", &a.driverGetProperties},
		{"zeDriverGetIpcProperties", &a.driverGetIpcProperties},
		{"zeDriverGetExtensionFunctionAddress", &a.driverGetExtensionFunctionAddress},
		{"zeDeviceGet", &a.deviceGet},
		{"zeDeviceGetProperties", &a.deviceGetProperties},
		{"zeContextCreate", &a.contextCreate},
		{"zeContextDestroy", &a.contextDestroy},
		{"zeMemAllocHost", &a.memAllocHost},
		{"zeMemAllocDevice", &a.memAllocDevice},
		{"zeMemAllocShared", &a.memAllocShared},
		{"zeMemFree", &a.memFree},
		{"zeMemGetAllocProperties", &a.memGetAllocProperties},
		{"zeMemGetAddressRange", &a.memGetAddressRange},
		{"zeMemGetIpcHandle", &a.memGetIpcHandle},
		{"zeMemCloseIpcHandle", &a.memCloseIpcHandle},
		{"zeCommandQueueCreate", &a.commandQueueCreate},
		{"zeCommandQueueDestroy", &a.commandQueueDestroy},
		{"zeCommandQueueExecuteCommandLists", &a.commandQueueExecuteCommandLists},
		{"zeCommandQueueSynchronize", &a.commandQueueSynchronize},
		{"zeCommandListCreate", &a.commandListCreate},
		{"zeCommandListCreateImmediate", &a.commandListCreateImmediate},
		{"zeCommandListClose", &a.commandListClose},
		{"zeCommandListReset", &a.commandListReset},
		{"zeCommandListDestroy", &a.commandListDestroy},
		{"zeCommandListAppendMemoryCopy", &a.commandListAppendMemoryCopy},
		{"zeCommandListAppendMemoryFill", &a.commandListAppendMemoryFill},
		{"zeCommandListAppendBarrier", &a.commandListAppendBarrier},
		{"zeEventPoolCreate", &a.eventPoolCreate},
		{"zeEventPoolDestroy", &a.eventPoolDestroy},
		{"zeEventCreate", &a.eventCreate},
		{"zeEventDestroy", &a.eventDestroy},
		{"zeEventHostSignal", &a.eventHostSignal},
		{"zeEventHostSynchronize", &a.eventHostSynchronize},
		{"zeEventQueryStatus", &a.eventQueryStatus},
		{"zeEventHostReset", &a.eventHostReset},
	}
	for _, s := range required {
		p, err := ffi.Sym(lib, s.name)
		if err != nil {
			return nil, errkind.Wrap(errkind.NotAvailable, "levelzero.Init", Loader+" lacks "+s.name, err)
		}
		*s.p = p
	}
	open, err := ffi.Sym(lib, "zeMemOpenIpcHandle")
	if err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "levelzero.Init", Loader+" lacks zeMemOpenIpcHandle", err)
	}
	ffi.Bind(&a.memOpenIpcHandle, open)

	// Optional symbols are looked up, never assumed: purego's
	// RegisterLibFunc would panic on them with loader 1.8.12.
	a.initDrivers, _ = ffi.Sym(lib, "zeInitDrivers")
	a.commandListHostSynchronize, _ = ffi.Sym(lib, "zeCommandListHostSynchronize")
	if p, err := ffi.Sym(lib, "zeMemPutIpcHandle"); err == nil {
		a.memPutIpcHandleAddr = p
		ffi.Bind(&a.memPutIpcHandle, p)
	}
	return a, nil
}
