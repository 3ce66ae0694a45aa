/*
 * Prints the sizes and field offsets of the Level Zero structs that
 * package levelzero/internal/zeapi mirrors in Go, and the ze_result_t codes, as compiled
 * against the installed headers. layout_test.go compares its Go mirrors
 * with this output, so a header that disagrees with the mirrors fails the
 * test instead of corrupting memory at run time.
 */
#include <level_zero/ze_api.h>
#include <stddef.h>
#include <stdio.h>

#define SIZE(t) printf("%s %zu\n", #t, sizeof(t))
#define OFF(t, f) printf("%s.%s %zu\n", #t, #f, offsetof(t, f))
#define RES(r) printf("result %s %u\n", #r, (unsigned)(r))

int main(void) {
    SIZE(ze_driver_properties_t); OFF(ze_driver_properties_t, uuid); OFF(ze_driver_properties_t, driverVersion);
    SIZE(ze_driver_ipc_properties_t); OFF(ze_driver_ipc_properties_t, flags);
    SIZE(ze_device_properties_t); OFF(ze_device_properties_t, type); OFF(ze_device_properties_t, vendorId);
    OFF(ze_device_properties_t, deviceId); OFF(ze_device_properties_t, maxMemAllocSize);
    OFF(ze_device_properties_t, numSlices); OFF(ze_device_properties_t, timerResolution);
    OFF(ze_device_properties_t, kernelTimestampValidBits); OFF(ze_device_properties_t, uuid); OFF(ze_device_properties_t, name);
    SIZE(ze_context_desc_t); OFF(ze_context_desc_t, flags);
    SIZE(ze_command_queue_desc_t); OFF(ze_command_queue_desc_t, ordinal); OFF(ze_command_queue_desc_t, index);
    OFF(ze_command_queue_desc_t, flags); OFF(ze_command_queue_desc_t, mode); OFF(ze_command_queue_desc_t, priority);
    SIZE(ze_command_list_desc_t); OFF(ze_command_list_desc_t, commandQueueGroupOrdinal); OFF(ze_command_list_desc_t, flags);
    SIZE(ze_event_pool_desc_t); OFF(ze_event_pool_desc_t, flags); OFF(ze_event_pool_desc_t, count);
    SIZE(ze_event_desc_t); OFF(ze_event_desc_t, index); OFF(ze_event_desc_t, signal); OFF(ze_event_desc_t, wait);
    SIZE(ze_device_mem_alloc_desc_t); OFF(ze_device_mem_alloc_desc_t, flags); OFF(ze_device_mem_alloc_desc_t, ordinal);
    SIZE(ze_host_mem_alloc_desc_t); OFF(ze_host_mem_alloc_desc_t, flags);
    SIZE(ze_memory_allocation_properties_t); OFF(ze_memory_allocation_properties_t, type);
    OFF(ze_memory_allocation_properties_t, id); OFF(ze_memory_allocation_properties_t, pageSize);
    SIZE(ze_ipc_mem_handle_t);
    SIZE(ze_module_desc_t); OFF(ze_module_desc_t, format); OFF(ze_module_desc_t, inputSize);
    OFF(ze_module_desc_t, pInputModule); OFF(ze_module_desc_t, pBuildFlags); OFF(ze_module_desc_t, pConstants);
    SIZE(ze_kernel_desc_t); OFF(ze_kernel_desc_t, flags); OFF(ze_kernel_desc_t, pKernelName);
    SIZE(ze_kernel_properties_t); OFF(ze_kernel_properties_t, numKernelArgs);
    SIZE(ze_group_count_t); OFF(ze_group_count_t, groupCountX); OFF(ze_group_count_t, groupCountY);
    OFF(ze_group_count_t, groupCountZ);
    printf("stype MODULE_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_MODULE_DESC);
    printf("stype KERNEL_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_KERNEL_DESC);
    printf("stype KERNEL_PROPERTIES %u\n", (unsigned)ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES);
    printf("stype DRIVER_PROPERTIES %u\n", (unsigned)ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES);
    printf("stype DRIVER_IPC_PROPERTIES %u\n", (unsigned)ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES);
    printf("stype DEVICE_PROPERTIES %u\n", (unsigned)ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
    printf("stype CONTEXT_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_CONTEXT_DESC);
    printf("stype COMMAND_QUEUE_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
    printf("stype COMMAND_LIST_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC);
    printf("stype EVENT_POOL_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_EVENT_POOL_DESC);
    printf("stype EVENT_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_EVENT_DESC);
    printf("stype DEVICE_MEM_ALLOC_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
    printf("stype HOST_MEM_ALLOC_DESC %u\n", (unsigned)ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
    printf("stype MEMORY_ALLOCATION_PROPERTIES %u\n", (unsigned)ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
    RES(ZE_RESULT_SUCCESS); RES(ZE_RESULT_NOT_READY); RES(ZE_RESULT_ERROR_DEVICE_LOST);
    RES(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY); RES(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    RES(ZE_RESULT_ERROR_UNINITIALIZED); RES(ZE_RESULT_ERROR_UNSUPPORTED_VERSION); RES(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    RES(ZE_RESULT_ERROR_INVALID_ARGUMENT); RES(ZE_RESULT_ERROR_INVALID_NULL_HANDLE); RES(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    RES(ZE_RESULT_ERROR_INVALID_NULL_POINTER); RES(ZE_RESULT_ERROR_INVALID_SIZE); RES(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    RES(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT); RES(ZE_RESULT_ERROR_INVALID_ENUMERATION);
    RES(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE); RES(ZE_RESULT_ERROR_UNKNOWN);
    return 0;
}
