package dpctlapi

import (
	"debug/elf"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Generation is the dpctl release line whose C API a
// libDPCTLSyclInterface exports. The functions package dpctl calls have
// one signature in every generation but DPCTLKernelBundle_CreateFromSpirv,
// which dpctl 0.23 gave two more parameters (docs/native.md, "dpctl's C
// API generations").
type Generation uint8

const (
	// GenUnknown: the exports match no generation below; calls whose
	// signature differs between generations are refused.
	GenUnknown Generation = iota
	// Gen022: dpctl 0.20.0 to 0.22.1, one C API;
	// CreateFromSpirv(Ctx, Dev, IL, Length, CompileOpts).
	Gen022
	// Gen023: dpctl 0.23; CreateFromSpirv(Ctx, Dev, IL, Length,
	// CompileOpts, NumSpecConsts, SpecConsts).
	Gen023
)

func (g Generation) String() string {
	switch g {
	case Gen022:
		return "0.22"
	case Gen023:
		return "0.23"
	}
	return "unknown"
}

// capiPrefix begins the name of every function of dpctl's C API (and of
// no C++ symbol: those are mangled).
const capiPrefix = "DPCTL"

// exports022 is the C API of dpctl 0.22.1, exactly: the DPCTL functions
// its libDPCTLSyclInterface.so exports (0.20.0 to 0.22.0 declare the same
// ones).
var exports022 = []string{
	"DPCTLAcceleratorSelector_Create", "DPCTLCPUSelector_Create", "DPCTLCString_Delete",
	"DPCTLContext_AreEq", "DPCTLContext_Copy", "DPCTLContext_Create",
	"DPCTLContext_CreateFromDevices", "DPCTLContext_Delete", "DPCTLContext_DeviceCount",
	"DPCTLContext_GetBackend", "DPCTLContext_GetDevices", "DPCTLContext_Hash",
	"DPCTLDefaultSelector_Create", "DPCTLDeviceMgr_GetCachedContext",
	"DPCTLDeviceMgr_GetCompositeDevices", "DPCTLDeviceMgr_GetDeviceInfoStr",
	"DPCTLDeviceMgr_GetDevices", "DPCTLDeviceMgr_GetNumDevices",
	"DPCTLDeviceMgr_GetPositionInDevices", "DPCTLDeviceMgr_GetRelativeId",
	"DPCTLDeviceMgr_PrintDeviceInfo", "DPCTLDeviceSelector_Delete", "DPCTLDeviceSelector_Score",
	"DPCTLDeviceVector_Clear", "DPCTLDeviceVector_Create", "DPCTLDeviceVector_CreateFromArray",
	"DPCTLDeviceVector_Delete", "DPCTLDeviceVector_GetAt", "DPCTLDeviceVector_Size",
	"DPCTLDevice_AreEq", "DPCTLDevice_CanAccessPeer", "DPCTLDevice_Copy", "DPCTLDevice_Create",
	"DPCTLDevice_CreateFromSelector", "DPCTLDevice_CreateSubDevicesByAffinity",
	"DPCTLDevice_CreateSubDevicesByCounts", "DPCTLDevice_CreateSubDevicesEqually",
	"DPCTLDevice_Delete", "DPCTLDevice_DisablePeerAccess", "DPCTLDevice_EnablePeerAccess",
	"DPCTLDevice_GetBackend", "DPCTLDevice_GetComponentDevices", "DPCTLDevice_GetCompositeDevice",
	"DPCTLDevice_GetDeviceType", "DPCTLDevice_GetDriverVersion",
	"DPCTLDevice_GetGlobalMemCacheLineSize", "DPCTLDevice_GetGlobalMemCacheSize",
	"DPCTLDevice_GetGlobalMemCacheType", "DPCTLDevice_GetGlobalMemSize",
	"DPCTLDevice_GetImage2dMaxHeight", "DPCTLDevice_GetImage2dMaxWidth",
	"DPCTLDevice_GetImage3dMaxDepth", "DPCTLDevice_GetImage3dMaxHeight",
	"DPCTLDevice_GetImage3dMaxWidth", "DPCTLDevice_GetLocalMemSize",
	"DPCTLDevice_GetMaxClockFrequency", "DPCTLDevice_GetMaxComputeUnits",
	"DPCTLDevice_GetMaxMemAllocSize", "DPCTLDevice_GetMaxNumSubGroups",
	"DPCTLDevice_GetMaxReadImageArgs", "DPCTLDevice_GetMaxWorkGroupSize",
	"DPCTLDevice_GetMaxWorkItemDims", "DPCTLDevice_GetMaxWorkItemSizes1d",
	"DPCTLDevice_GetMaxWorkItemSizes2d", "DPCTLDevice_GetMaxWorkItemSizes3d",
	"DPCTLDevice_GetMaxWriteImageArgs", "DPCTLDevice_GetName", "DPCTLDevice_GetNativeVectorWidthChar",
	"DPCTLDevice_GetNativeVectorWidthDouble", "DPCTLDevice_GetNativeVectorWidthFloat",
	"DPCTLDevice_GetNativeVectorWidthHalf", "DPCTLDevice_GetNativeVectorWidthInt",
	"DPCTLDevice_GetNativeVectorWidthLong", "DPCTLDevice_GetNativeVectorWidthShort",
	"DPCTLDevice_GetParentDevice", "DPCTLDevice_GetPartitionMaxSubDevices", "DPCTLDevice_GetPlatform",
	"DPCTLDevice_GetPreferredVectorWidthChar", "DPCTLDevice_GetPreferredVectorWidthDouble",
	"DPCTLDevice_GetPreferredVectorWidthFloat", "DPCTLDevice_GetPreferredVectorWidthHalf",
	"DPCTLDevice_GetPreferredVectorWidthInt", "DPCTLDevice_GetPreferredVectorWidthLong",
	"DPCTLDevice_GetPreferredVectorWidthShort", "DPCTLDevice_GetProfilingTimerResolution",
	"DPCTLDevice_GetSubGroupIndependentForwardProgress", "DPCTLDevice_GetSubGroupSizes",
	"DPCTLDevice_GetVendor", "DPCTLDevice_HasAspect", "DPCTLDevice_Hash", "DPCTLDevice_IsAccelerator",
	"DPCTLDevice_IsCPU", "DPCTLDevice_IsGPU", "DPCTLEventVector_Clear", "DPCTLEventVector_Create",
	"DPCTLEventVector_CreateFromArray", "DPCTLEventVector_Delete", "DPCTLEventVector_GetAt",
	"DPCTLEventVector_Size", "DPCTLEvent_Copy", "DPCTLEvent_Create", "DPCTLEvent_Delete",
	"DPCTLEvent_GetBackend", "DPCTLEvent_GetCommandExecutionStatus", "DPCTLEvent_GetProfilingInfoEnd",
	"DPCTLEvent_GetProfilingInfoStart", "DPCTLEvent_GetProfilingInfoSubmit", "DPCTLEvent_GetWaitList",
	"DPCTLEvent_Wait", "DPCTLEvent_WaitAndThrow", "DPCTLFilterSelector_Create",
	"DPCTLGPUSelector_Create", "DPCTLKernelBundle_Copy", "DPCTLKernelBundle_CreateFromOCLSource",
	"DPCTLKernelBundle_CreateFromSpirv", "DPCTLKernelBundle_Delete", "DPCTLKernelBundle_GetKernel",
	"DPCTLKernelBundle_HasKernel", "DPCTLKernel_Copy", "DPCTLKernel_Delete",
	"DPCTLKernel_GetCompileNumSubGroups", "DPCTLKernel_GetCompileSubGroupSize",
	"DPCTLKernel_GetMaxNumSubGroups", "DPCTLKernel_GetMaxSubGroupSize", "DPCTLKernel_GetNumArgs",
	"DPCTLKernel_GetPreferredWorkGroupSizeMultiple", "DPCTLKernel_GetPrivateMemSize",
	"DPCTLKernel_GetWorkGroupSize", "DPCTLPlatformMgr_GetInfo", "DPCTLPlatformMgr_PrintInfo",
	"DPCTLPlatformVector_Clear", "DPCTLPlatformVector_Create", "DPCTLPlatformVector_CreateFromArray",
	"DPCTLPlatformVector_Delete", "DPCTLPlatformVector_GetAt", "DPCTLPlatformVector_Size",
	"DPCTLPlatform_AreEq", "DPCTLPlatform_Copy", "DPCTLPlatform_Create",
	"DPCTLPlatform_CreateFromSelector", "DPCTLPlatform_Delete", "DPCTLPlatform_GetBackend",
	"DPCTLPlatform_GetCompositeDevices", "DPCTLPlatform_GetDefaultContext",
	"DPCTLPlatform_GetDevices", "DPCTLPlatform_GetName", "DPCTLPlatform_GetPlatforms",
	"DPCTLPlatform_GetVendor", "DPCTLPlatform_GetVersion", "DPCTLPlatform_Hash", "DPCTLQueue_AreEq",
	"DPCTLQueue_Copy", "DPCTLQueue_Create", "DPCTLQueue_CreateForDevice", "DPCTLQueue_Delete",
	"DPCTLQueue_Fill128", "DPCTLQueue_Fill16", "DPCTLQueue_Fill32", "DPCTLQueue_Fill64",
	"DPCTLQueue_Fill8", "DPCTLQueue_GetBackend", "DPCTLQueue_GetContext", "DPCTLQueue_GetDevice",
	"DPCTLQueue_HasEnableProfiling", "DPCTLQueue_Hash", "DPCTLQueue_IsInOrder",
	"DPCTLQueue_MemAdvise", "DPCTLQueue_Memcpy", "DPCTLQueue_MemcpyWithEvents", "DPCTLQueue_Memset",
	"DPCTLQueue_Prefetch", "DPCTLQueue_SubmitBarrier", "DPCTLQueue_SubmitBarrierForEvents",
	"DPCTLQueue_SubmitNDRange", "DPCTLQueue_SubmitRange", "DPCTLQueue_Wait",
	"DPCTLRawKernelArg_Available", "DPCTLRawKernelArg_Create", "DPCTLRawKernelArg_Delete",
	"DPCTLService_GetDPCPPVersion", "DPCTLService_InitLogger", "DPCTLService_ShutdownLogger",
	"DPCTLSize_t_Array_Delete", "DPCTLUSM_GetPointerDevice", "DPCTLUSM_GetPointerType",
	"DPCTLWorkGroupMemory_Available", "DPCTLWorkGroupMemory_Create", "DPCTLWorkGroupMemory_Delete",
	"DPCTLaligned_alloc_device", "DPCTLaligned_alloc_host", "DPCTLaligned_alloc_shared",
	"DPCTLfree_with_context", "DPCTLfree_with_queue", "DPCTLmalloc_device", "DPCTLmalloc_host",
	"DPCTLmalloc_shared",
}

// removed023 and added023 are what dpctl 0.23 changed in that set.
var (
	removed023 = []string{"DPCTLDevice_GetSubGroupIndependentForwardProgress"}
	added023   = []string{
		"DPCTLBuildOptionList_Append", "DPCTLBuildOptionList_Create", "DPCTLBuildOptionList_Delete",
		"DPCTLContext_GetAtomicFenceOrderCapabilities", "DPCTLContext_GetAtomicFenceScopeCapabilities",
		"DPCTLContext_GetAtomicMemoryOrderCapabilities", "DPCTLContext_GetAtomicMemoryScopeCapabilities",
		"DPCTLContext_GetPlatform", "DPCTLDevice_CanCompileOpenCL", "DPCTLDevice_CanCompileSPIRV",
		"DPCTLDevice_CanCompileSYCL", "DPCTLDevice_GetAddressBits",
		"DPCTLDevice_GetAtomicFenceOrderCapabilities", "DPCTLDevice_GetAtomicFenceScopeCapabilities",
		"DPCTLDevice_GetAtomicMemoryOrderCapabilities", "DPCTLDevice_GetAtomicMemoryScopeCapabilities",
		"DPCTLDevice_GetBackendVersion", "DPCTLDevice_GetDoubleFPConfig",
		"DPCTLDevice_GetErrorCorrectionSupport", "DPCTLDevice_GetHalfFPConfig",
		"DPCTLDevice_GetImageMaxBufferSize", "DPCTLDevice_GetLocalMemType",
		"DPCTLDevice_GetMaxParameterSize", "DPCTLDevice_GetMaxSamplers",
		"DPCTLDevice_GetMemBaseAddrAlign", "DPCTLDevice_GetPartitionAffinityDomains",
		"DPCTLDevice_GetPartitionProperties", "DPCTLDevice_GetPartitionTypeAffinityDomain",
		"DPCTLDevice_GetPartitionTypeProperty", "DPCTLDevice_GetSingleFPConfig",
		"DPCTLDevice_GetVendorId", "DPCTLDevice_GetVersion", "DPCTLDevice_IsAvailable",
		"DPCTLIPCMem_Available", "DPCTLIPCMem_CloseHandle", "DPCTLIPCMem_FreeHandleData",
		"DPCTLIPCMem_GetHandle", "DPCTLIPCMem_OpenHandle", "DPCTLInt_Array_Delete",
		"DPCTLKernelBuildLog_Create", "DPCTLKernelBuildLog_Delete", "DPCTLKernelBuildLog_Get",
		"DPCTLKernelBundle_CreateFromSYCLSource", "DPCTLKernelBundle_CreateFromSYCLSource_Available",
		"DPCTLKernelBundle_GetSyclKernel", "DPCTLKernelBundle_HasSyclKernel",
		"DPCTLKernelNameList_Append", "DPCTLKernelNameList_Create", "DPCTLKernelNameList_Delete",
		"DPCTLQueue_CopyData", "DPCTLQueue_CopyDataWithEvents", "DPCTLQueue_Fill128WithEvents",
		"DPCTLQueue_Fill16WithEvents", "DPCTLQueue_Fill32WithEvents", "DPCTLQueue_Fill64WithEvents",
		"DPCTLQueue_Fill8WithEvents", "DPCTLQueue_MemsetWithEvents", "DPCTLVirtualHeaderList_Append",
		"DPCTLVirtualHeaderList_Create", "DPCTLVirtualHeaderList_Delete",
	}
)

// exports023 is the C API of dpctl 0.23, exactly.
var exports023 = func() []string {
	s := slices.DeleteFunc(slices.Clone(exports022), func(n string) bool { return slices.Contains(removed023, n) })
	s = append(s, added023...)
	slices.Sort(s)
	return s
}()

// generationOf names the generation whose C API is exactly exports (the
// DPCTL functions a library exports, sorted), or returns GenUnknown and
// how exports differ from the nearest one: a function of neither
// generation (a newer or patched dpctl) or one a generation has and the
// library lacks (an older dpctl, or a build between releases) is a
// library whose signatures usmbridge cannot vouch for.
func generationOf(exports []string) (Generation, string) {
	switch {
	case slices.Equal(exports, exports022):
		return Gen022, ""
	case slices.Equal(exports, exports023):
		return Gen023, ""
	}
	near, known := Gen022, exports022
	if slices.ContainsFunc(exports, func(n string) bool { _, ok := slices.BinarySearch(added023, n); return ok }) {
		near, known = Gen023, exports023
	}
	var why []string
	if extra := difference(exports, known); len(extra) > 0 {
		why = append(why, "exports "+names(extra)+", which dpctl "+near.String()+" has not")
	}
	if lack := difference(known, exports); len(lack) > 0 {
		why = append(why, "lacks "+names(lack)+" of dpctl "+near.String())
	}
	return GenUnknown, strings.Join(why, " and ")
}

// difference returns the names of a that b lacks (both sorted).
func difference(a, b []string) []string {
	var d []string
	for _, n := range a {
		if _, ok := slices.BinarySearch(b, n); !ok {
			d = append(d, n)
		}
	}
	return d
}

// names lists up to four names, and how many more there are.
func names(l []string) string {
	const most = 4
	if len(l) <= most {
		return strings.Join(l, ", ")
	}
	return strings.Join(l[:most], ", ") + " and " + strconv.Itoa(len(l)-most) + " more"
}

// capiExports reads the DPCTL functions the shared library at path
// defines, from its ELF dynamic symbol table, sorted. dlsym can tell
// whether a name is there but not which names are, and a function newer
// than every generation is exactly a name usmbridge cannot ask for.
func capiExports(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, err
	}
	var out []string
	for _, s := range syms {
		bind := elf.ST_BIND(s.Info)
		if s.Section == elf.SHN_UNDEF || (bind != elf.STB_GLOBAL && bind != elf.STB_WEAK) || !strings.HasPrefix(s.Name, capiPrefix) {
			continue
		}
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// detectGeneration is generationOf the library at path.
func detectGeneration(path string) (Generation, string) {
	exports, err := capiExports(path)
	if err != nil {
		return GenUnknown, "its exports cannot be read: " + err.Error()
	}
	return generationOf(exports)
}

// Exports returns the DPCTL functions of generation g's C API, sorted
// (nil for GenUnknown): what a test's fake library exports to be of g.
func (g Generation) Exports() []string {
	switch g {
	case Gen022:
		return slices.Clone(exports022)
	case Gen023:
		return slices.Clone(exports023)
	}
	return nil
}
