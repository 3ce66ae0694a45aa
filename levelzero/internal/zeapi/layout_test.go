package zeapi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// layout is the expected x86-64 layout of one mirrored struct, from the
// table in docs/native.md: its C name, size, and the offsets of named
// fields (Go field name → C field name and offset).
type layout struct {
	c      string
	v      any
	size   uintptr
	fields map[string]field
}

type field struct {
	c   string
	off uintptr
}

var layouts = []layout{
	{"ze_driver_properties_t", zeDriverProperties{}, 40, map[string]field{"uuid": {"uuid", 16}, "driverVersion": {"driverVersion", 32}}},
	{"ze_driver_ipc_properties_t", zeDriverIpcProperties{}, 24, map[string]field{"flags": {"flags", 16}}},
	{"ze_device_properties_t", zeDeviceProperties{}, 368, map[string]field{
		"typ": {"type", 16}, "vendorID": {"vendorId", 20}, "deviceID": {"deviceId", 24}, "maxMemAllocSize": {"maxMemAllocSize", 40},
		"numSlices": {"numSlices", 72}, "timerResolution": {"timerResolution", 80}, "kernelTimestampValidBits": {"kernelTimestampValidBits", 92},
		"uuid": {"uuid", 96}, "name": {"name", 112}}},
	{"ze_context_desc_t", zeContextDesc{}, 24, map[string]field{"flags": {"flags", 16}}},
	{"ze_command_queue_desc_t", zeCommandQueueDesc{}, 40, map[string]field{
		"ordinal": {"ordinal", 16}, "index": {"index", 20}, "flags": {"flags", 24}, "mode": {"mode", 28}, "priority": {"priority", 32}}},
	{"ze_command_list_desc_t", zeCommandListDesc{}, 24, map[string]field{"commandQueueGroupOrdinal": {"commandQueueGroupOrdinal", 16}, "flags": {"flags", 20}}},
	{"ze_event_pool_desc_t", zeEventPoolDesc{}, 24, map[string]field{"flags": {"flags", 16}, "count": {"count", 20}}},
	{"ze_event_desc_t", zeEventDesc{}, 32, map[string]field{"index": {"index", 16}, "signal": {"signal", 20}, "wait": {"wait", 24}}},
	{"ze_device_mem_alloc_desc_t", zeDeviceMemAllocDesc{}, 24, map[string]field{"flags": {"flags", 16}, "ordinal": {"ordinal", 20}}},
	{"ze_host_mem_alloc_desc_t", zeHostMemAllocDesc{}, 24, map[string]field{"flags": {"flags", 16}}},
	{"ze_memory_allocation_properties_t", zeMemoryAllocationProperties{}, 40, map[string]field{"typ": {"type", 16}, "id": {"id", 24}, "pageSize": {"pageSize", 32}}},
	{"ze_ipc_mem_handle_t", IPCHandle{}, 64, nil},
	{"ze_init_driver_type_desc_t", zeInitDriverTypeDesc{}, 24, map[string]field{"flags": {"flags", 16}}}, // not in the 1.8 headers
	{"ze_module_desc_t", zeModuleDesc{}, 56, map[string]field{"format": {"format", 16}, "inputSize": {"inputSize", 24},
		"pInputModule": {"pInputModule", 32}, "pBuildFlags": {"pBuildFlags", 40}, "pConstants": {"pConstants", 48}}},
	{"ze_kernel_desc_t", zeKernelDesc{}, 32, map[string]field{"flags": {"flags", 16}, "pKernelName": {"pKernelName", 24}}},
	{"ze_kernel_properties_t", zeKernelProperties{}, 96, map[string]field{"numKernelArgs": {"numKernelArgs", 16}}},
	{"ze_group_count_t", GroupCount{}, 12, map[string]field{"X": {"groupCountX", 0}, "Y": {"groupCountY", 4}, "Z": {"groupCountZ", 8}}},
}

// goOffset finds a field's offset by name, through the embedded header.
func goOffset(v any, name string) (uintptr, bool) {
	f, ok := reflect.TypeOf(v).FieldByName(name)
	if !ok {
		return 0, false
	}
	var off uintptr
	t := reflect.TypeOf(v)
	for _, i := range f.Index {
		off += t.Field(i).Offset
		t = t.Field(i).Type
	}
	return off, true
}

// TestLayout checks every mirror against the table; the header prefix
// sits at 0/8 in all of them.
func TestLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the mirrors are for 64-bit targets")
	}
	for _, l := range layouts {
		t.Run(l.c, func(t *testing.T) {
			if got := reflect.TypeOf(l.v).Size(); got != l.size {
				t.Errorf("size %d, want %d", got, l.size)
			}
			for name, f := range l.fields {
				if got, ok := goOffset(l.v, name); !ok || got != f.off {
					t.Errorf("%s at %d (found %v), want %d", name, got, ok, f.off)
				}
			}
			if _, desc := reflect.TypeOf(l.v).FieldByName("header"); desc {
				if off, _ := goOffset(l.v, "pNext"); off != 8 {
					t.Errorf("pNext at %d", off)
				}
			}
		})
	}
}

// TestLayoutAgainstHeaders compiles testdata/layout/layout.c against the
// installed headers and compares sizes, offsets, structure types and
// result codes with the Go side.
func TestLayoutAgainstHeaders(t *testing.T) {
	if _, err := os.Stat("/usr/include/level_zero/ze_api.h"); err != nil {
		testutil.Runtime(t, testutil.LevelZero, loaderErrOr(err))
	}
	cc, err := testutil.CC()
	testutil.Runtime(t, testutil.CCompiler, err)
	exe := filepath.Join(t.TempDir(), "layout")
	args := append(cc[1:], "-std=c11", "-Wall", "-o", exe, filepath.Join("testdata", "layout", "layout.c"))
	if out, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("compiling layout.c: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseUint(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("bad line %q", line)
		}
		c[line[:i]] = n
	}
	checked := 0
	for _, l := range layouts {
		size, ok := c[l.c]
		if !ok {
			continue // newer than the installed headers
		}
		checked++
		if uint64(reflect.TypeOf(l.v).Size()) != size {
			t.Errorf("%s: Go size %d, C size %d", l.c, reflect.TypeOf(l.v).Size(), size)
		}
		for name, f := range l.fields {
			off, _ := goOffset(l.v, name)
			if coff, ok := c[l.c+"."+f.c]; !ok || uint64(off) != coff {
				t.Errorf("%s.%s: Go offset %d, C offset %d (%v)", l.c, f.c, off, coff, ok)
			}
		}
	}
	if checked < len(layouts)-1 {
		t.Errorf("only %d structs found in the C output", checked)
	}
	stypes := map[string]uint64{
		"DRIVER_PROPERTIES": stypeDriverProperties, "DRIVER_IPC_PROPERTIES": stypeDriverIpcProperties,
		"DEVICE_PROPERTIES": stypeDeviceProperties, "CONTEXT_DESC": stypeContextDesc, "COMMAND_QUEUE_DESC": stypeCommandQueueDesc,
		"COMMAND_LIST_DESC": stypeCommandListDesc, "EVENT_POOL_DESC": stypeEventPoolDesc, "EVENT_DESC": stypeEventDesc,
		"DEVICE_MEM_ALLOC_DESC": stypeDeviceMemAllocDesc, "HOST_MEM_ALLOC_DESC": stypeHostMemAllocDesc,
		"MEMORY_ALLOCATION_PROPERTIES": stypeMemoryAllocationProps, "MODULE_DESC": stypeModuleDesc,
		"KERNEL_DESC": stypeKernelDesc, "KERNEL_PROPERTIES": stypeKernelProperties,
	}
	for name, v := range stypes {
		if c["stype "+name] != v {
			t.Errorf("stype %s: Go %#x, C %#x", name, v, c["stype "+name])
		}
	}
	results := 0
	for k, v := range c {
		if name, ok := strings.CutPrefix(k, "result "); ok {
			results++
			if got := Status(v).Name(); got != name {
				t.Errorf("code %#x is %q in Go, %s in C", v, got, name)
			}
		}
	}
	if results == 0 {
		t.Error("no result codes in the C output")
	}
}

// loaderErrOr is "runtime not available" without a loader, and a failure
// when the loader is there but its headers are not.
func loaderErrOr(err error) error {
	if _, e := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDLocal, Loader); e != nil {
		return e
	}
	return fmt.Errorf("headers missing although the loader is installed: %w", err)
}
