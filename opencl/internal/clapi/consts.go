package clapi

// Values from CL/cl.h and CL/cl_ext.h (opencl-headers 3.0) that this
// package and package opencl use.
const (
	True  = 1
	False = 0

	// cl_platform_info
	PlatformProfile    = 0x0900
	PlatformVersion    = 0x0901
	PlatformName       = 0x0902
	PlatformVendor     = 0x0903
	PlatformExtensions = 0x0904

	// cl_device_type
	DeviceTypeCPU = 1 << 1
	DeviceTypeGPU = 1 << 2
	DeviceTypeAll = 0xFFFFFFFF

	// cl_device_info
	DeviceType              = 0x1000
	DeviceName              = 0x102B
	DeviceVendor            = 0x102C
	DriverVersion           = 0x102D
	DeviceProfile           = 0x102E
	DeviceVersion           = 0x102F
	DeviceExtensions        = 0x1030
	DeviceSVMCapabilities   = 0x1053
	DeviceHostMemCapsINTEL  = 0x4190
	DeviceDevMemCapsINTEL   = 0x4191
	DeviceSingleSharedINTEL = 0x4192
	DeviceCrossSharedINTEL  = 0x4193
	DeviceSystemSharedINTEL = 0x4194

	// cl_device_svm_capabilities
	SVMFineGrainBuffer = 1 << 1

	// cl_svm_mem_flags
	MemReadWrite          = 1 << 0
	MemSVMFineGrainBuffer = 1 << 10

	// cl_context_properties
	ContextPlatform = 0x1084
	// cl_context_info
	ContextReferenceCount = 0x1080
	ContextDevices        = 0x1081

	// cl_command_queue_info
	QueueDevice         = 0x1091
	QueueReferenceCount = 0x1092
	QueueContext        = 0x1090
	QueueProperties     = 0x1093

	QueueOutOfOrderExecModeEnable = 1 << 0 // cl_command_queue_properties

	// cl_intel_unified_shared_memory
	MemTypeUnknownINTEL  = 0x4196
	MemTypeHostINTEL     = 0x4197
	MemTypeDeviceINTEL   = 0x4198
	MemTypeSharedINTEL   = 0x4199
	MemAllocTypeINTEL    = 0x419A
	MemAllocBasePtrINTEL = 0x419B
	MemAllocSizeINTEL    = 0x419C
	MemAllocDeviceINTEL  = 0x419D
)
