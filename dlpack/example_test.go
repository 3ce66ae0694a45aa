package dlpack_test

import (
	"fmt"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// Export an array to a DLPack consumer and take it back, as a consumer in
// another library would.
func Example() {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, _ := host.AllocHost(6 * 8)
	defer alloc.Free()
	arr, _ := reg.NewArray(alloc, dtype.Float64, []int64{2, 3})

	m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1, Minor: 0}})
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Versioned(), t.Version, t.DLDevice, t.Shape, t.EffectiveStrides(), t.DType)
	t.Release()
	fmt.Println("live exports:", dlpack.Live()["exports"])
	// Output:
	// true {1 0} (kDLCPU, 0) [2 3] [3 1] float64
	// live exports: 0
}

// Refusals carry the Python exception the array API standard requires.
func ExampleExport_refusal() {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, _ := host.AllocHost(8)
	defer alloc.Free()
	arr, _ := reg.NewArray(alloc, dtype.Float32, []int64{2})
	arr.ReadOnly = true
	_, err := dlpack.Export(arr, dlpack.ExportOptions{}) // legacy: cannot say read-only
	fmt.Println(usm.PythonException(err))
	// Output:
	// BufferError
}

// The shortest round trip: Go memory out as a DLPack tensor and back in,
// as any consumer takes it (README.md's Go example).
func Example_roundTrip() {
	host := cpu.Default() // the host backend: no runtime needed
	alloc, _ := host.AllocHost(6 * 4)
	defer alloc.Free()
	arr, _ := usm.NewRegistry(host).NewArray(alloc, dtype.Float32, []int64{2, 3})
	xs, _ := usm.View[float32](arr) // a []float32 over the memory, no copy
	copy(xs, []float32{0, 1, 2, 3, 4, 5})

	m, _ := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	t, err := dlpack.Import(m, dlpack.ImportOptions{}) // what a consumer does
	v, _ := usm.At[float32](&t.Array, 1, 2)
	fmt.Println(t.Shape, t.DType, t.DLDevice, v, err)
	t.Release() // runs the deleter, once
	// Output: [2 3] float32 (kDLCPU, 0) 5 <nil>
}

// Leak checks: each package counts what is alive, and a program that
// released everything sees zeros. An export keeps its memory alive after
// the allocation is freed, until the consumer calls the deleter.
func ExampleLive() {
	host := cpu.Default()
	alloc, _ := host.AllocHost(64)
	arr, _ := usm.NewRegistry(host).NewArray(alloc, dtype.Uint8, []int64{64})
	m, _ := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	_ = alloc.Free() // the export still holds the memory
	fmt.Println(dlpack.Live()["exports"], cpu.Live()["allocations"])
	m.Delete() // what a consumer's call of the deleter does
	fmt.Println(dlpack.Live()["exports"], cpu.Live()["allocations"])
	// Output:
	// 1 1
	// 0 0
}
