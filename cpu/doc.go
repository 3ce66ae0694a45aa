// Package cpu is usmbridge's embedded host backend, for machines with no
// SYCL runtime. It allocates page-aligned host memory with mmap, outside
// the Go heap (allocations of 4 MiB or more advised to use transparent
// huge pages, as NumPy's arrays are), and registers every allocation so that pointer queries report
// kind (always host), base and size, exactly as a USM runtime would. Its
// queue is synchronous and copies are plain memmove.
//
// In filter selectors the backend is "host" and its one device has device
// type "host"; it comes last in the global device order. Its arrays export
// to DLPack as (kDLCPU, 0), so NumPy and any other CPU consumer can take
// them without a copy.
package cpu
