package zeapi

// Structure types (ze_structure_type_t) of the descriptors used here.
const (
	stypeDriverProperties      = 0x1
	stypeDriverIpcProperties   = 0x2
	stypeDeviceProperties      = 0x3
	stypeContextDesc           = 0xd
	stypeCommandQueueDesc      = 0xe
	stypeCommandListDesc       = 0xf
	stypeEventPoolDesc         = 0x10
	stypeEventDesc             = 0x11
	stypeDeviceMemAllocDesc    = 0x15
	stypeHostMemAllocDesc      = 0x16
	stypeMemoryAllocationProps = 0x17
	stypeInitDriverTypeDesc    = 0x00020021
	initDriverTypeFlagGPU      = 1
	eventPoolFlagHostVisible   = 1
	eventScopeFlagHost         = 4
)

// QueueMode is a ze_command_queue_mode_t.
type QueueMode uint32

// Command queue modes.
const (
	QueueModeDefault      QueueMode = 0
	QueueModeSynchronous  QueueMode = 1
	QueueModeAsynchronous QueueMode = 2
)

// Timeouts of the Synchronize calls, in nanoseconds.
const (
	Poll     uint64 = 0          // return at once: SUCCESS or NOT_READY
	Infinite uint64 = ^uint64(0) // wait until done or the device is lost
)

// The mirrors below copy the x86-64 layout of the 1.8.12 headers (the
// table is in docs/native.md). purego does not align fields, so every gap
// is an explicit padding field; layout_test.go checks size and offsets
// against the table and against the installed headers through a C
// program.

// header is the {stype, pNext} prefix of every descriptor.
type header struct {
	stype uint32
	_     uint32
	pNext uintptr
}

type zeDriverProperties struct { // ze_driver_properties_t, 40 bytes
	header
	uuid          [16]byte
	driverVersion uint32
	_             uint32
}

type zeDriverIpcProperties struct { // ze_driver_ipc_properties_t, 24 bytes
	header
	flags uint32
	_     uint32
}

type zeDeviceProperties struct { // ze_device_properties_t, 368 bytes
	header
	typ                      uint32
	vendorID                 uint32
	deviceID                 uint32
	flags                    uint32
	subdeviceID              uint32
	coreClockRate            uint32
	maxMemAllocSize          uint64
	maxHardwareContexts      uint32
	maxCommandQueuePriority  uint32
	numThreadsPerEU          uint32
	physicalEUSimdWidth      uint32
	numEUsPerSubslice        uint32
	numSubslicesPerSlice     uint32
	numSlices                uint32
	_                        uint32
	timerResolution          uint64
	timestampValidBits       uint32
	kernelTimestampValidBits uint32
	uuid                     [16]byte
	name                     [256]byte
}

type zeContextDesc struct { // ze_context_desc_t, 24 bytes
	header
	flags uint32
	_     uint32
}

type zeCommandQueueDesc struct { // ze_command_queue_desc_t, 40 bytes
	header
	ordinal  uint32
	index    uint32
	flags    uint32
	mode     uint32
	priority uint32
	_        uint32
}

type zeCommandListDesc struct { // ze_command_list_desc_t, 24 bytes
	header
	commandQueueGroupOrdinal uint32
	flags                    uint32
}

type zeEventPoolDesc struct { // ze_event_pool_desc_t, 24 bytes
	header
	flags uint32
	count uint32
}

type zeEventDesc struct { // ze_event_desc_t, 32 bytes
	header
	index  uint32
	signal uint32
	wait   uint32
	_      uint32
}

type zeDeviceMemAllocDesc struct { // ze_device_mem_alloc_desc_t, 24 bytes
	header
	flags   uint32
	ordinal uint32
}

type zeHostMemAllocDesc struct { // ze_host_mem_alloc_desc_t, 24 bytes
	header
	flags uint32
	_     uint32
}

type zeMemoryAllocationProperties struct { // ze_memory_allocation_properties_t, 40 bytes
	header
	typ      uint32
	_        uint32
	id       uint64
	pageSize uint64
}

type zeInitDriverTypeDesc struct { // ze_init_driver_type_desc_t (spec 1.10), 24 bytes
	header
	flags uint32
	_     uint32
}

// IPCHandle is a ze_ipc_mem_handle_t: 64 opaque bytes, passed by value.
type IPCHandle struct {
	Data [64]byte
}
