package dlabi

import (
	"testing"
	"unsafe"
)

// ExchangeAPI is read in producers' memory: dlpack.h 1.3's layout on LP64.
func TestExchangeAPILayout(t *testing.T) {
	var x ExchangeAPI
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"size", unsafe.Sizeof(x), 56},
		{"prev_api", unsafe.Offsetof(x.PrevAPI), 8},
		{"managed_tensor_allocator", unsafe.Offsetof(x.ManagedTensorAllocator), 16},
		{"managed_tensor_from_py_object_no_sync", unsafe.Offsetof(x.ManagedTensorFromPyObjectNoSync), 24},
		{"managed_tensor_to_py_object_no_sync", unsafe.Offsetof(x.ManagedTensorToPyObjectNoSync), 32},
		{"dltensor_from_py_object_no_sync", unsafe.Offsetof(x.DLTensorFromPyObjectNoSync), 40},
		{"current_work_stream", unsafe.Offsetof(x.CurrentWorkStream), 48},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}
