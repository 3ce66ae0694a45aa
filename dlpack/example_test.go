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
