package usm_test

import (
	"testing"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// strided4D is the generic form of a 4-D float32 view with explicit,
// non-contiguous strides (every other element of a [8,16,32,128] parent,
// starting 5 elements in), as Python code hands it over: tuples of int.
func strided4D(ptr uint64) map[string]any {
	return map[string]any{
		"data":    []any{ptr, false},
		"shape":   []any{8, 16, 32, 64},
		"strides": []any{16 * 32 * 128, 32 * 128, 128, 2},
		"offset":  5,
		"typestr": "|f4",
		"version": 1,
		"syclobj": "host",
	}
}

// Bytes the view touches: (7·65536 + 15·4096 + 31·128 + 63·2 + 5 + 1) · 4.
const strided4DBytes = (7*65536 + 15*4096 + 31*128 + 63*2 + 5 + 1) * 4

func BenchmarkParse4DStrided(b *testing.B) {
	m := strided4D(0x10000)
	b.ReportAllocs()
	for b.Loop() {
		in, err := usm.Parse(m)
		if err != nil || len(in.Shape) != 4 {
			b.Fatal(err)
		}
	}
}

func BenchmarkRegistryParse(b *testing.B) {
	be := new(cpu.Backend)
	alloc, err := be.AllocHost(strided4DBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer alloc.Free()
	reg := usm.NewRegistry(be)
	m := strided4D(uint64(alloc.Pointer()))
	b.ReportAllocs()
	for b.Loop() {
		a, err := reg.Parse(m)
		if err != nil || a.Memory.Kind != usm.KindHost {
			b.Fatal(err)
		}
	}
}

func BenchmarkByteWindow(b *testing.B) {
	shape := []int64{8, 16, 32, 64}
	strides := []int64{16 * 32 * 128, 32 * 128, -128, 2}
	b.ReportAllocs()
	for b.Loop() {
		w, err := usm.ByteWindow(shape, strides, 4000, 4)
		if err != nil || w.Empty() {
			b.Fatal(err)
		}
	}
}

// Parsing a 4-D map allocates twice whatever the strings (the field reader
// and the shape/strides block): selectors are parsed once per string
// (syclobjFromValue), nothing is formatted on success.
func TestParseAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	m := strided4D(0x10000)
	n := testing.AllocsPerRun(100, func() {
		if _, err := usm.Parse(m); err != nil {
			t.Fatal(err)
		}
	})
	if n > 2 {
		t.Errorf("usm.Parse of a 4-D map: %v allocations, want <= 2", n)
	}
}

// typedBenchArray is a 1-D float32 array of 256 elements in host memory
// of the cpu backend, owned by its allocation: what typed access costs
// per call, the owner's liveness check included.
func typedBenchArray(b *testing.B) *usm.Array {
	be := new(cpu.Backend)
	alloc, err := be.AllocHost(256 * 4)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = alloc.Free() })
	arr, err := usm.NewRegistry(be).NewArray(alloc, dtype.Float32, []int64{256})
	if err != nil {
		b.Fatal(err)
	}
	return arr
}

func BenchmarkView(b *testing.B) {
	arr := typedBenchArray(b)
	b.ReportAllocs()
	for b.Loop() {
		if xs, err := usm.View[float32](arr); err != nil || len(xs) != 256 {
			b.Fatal(err)
		}
	}
}

func BenchmarkAt(b *testing.B) {
	arr := typedBenchArray(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := usm.At[float32](arr, 100); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCopyToSlice(b *testing.B) {
	arr := typedBenchArray(b)
	dst := make([]float32, 256)
	b.ReportAllocs()
	for b.Loop() {
		if err := usm.CopyToSlice(dst, arr); err != nil {
			b.Fatal(err)
		}
	}
}
