// Command quickstart shows usmbridge's core round trip on any Linux machine:
// allocate USM on a backend, fill it, describe it as a
// __sycl_usm_array_interface__, hand it to a DLPack consumer and take it
// back, and check the data at each step.
//
//	go run ./examples/quickstart
//
// It uses an OpenCL CPU device (Intel USM, or SVM on PoCL) when an OpenCL
// runtime is installed, and usmbridge's own host backend otherwise, and
// says which.
package main

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// backend is where the quickstart allocates.
type backend interface {
	usm.Backend
	usm.Allocator
}

// pick prefers the first OpenCL CPU device that can allocate shared USM
// (or fine-grain SVM, served as shared USM) and falls back to the host
// backend, which needs no runtime at all.
func pick() (b backend, dev int, kind usm.Kind, done func(), why string) {
	ocl, err := opencl.New()
	if err != nil {
		return cpu.Default(), 0, usm.KindHost, func() {}, "no OpenCL runtime (" + err.Error() + ")"
	}
	for i, d := range ocl.Devices() {
		if d.Type != syclobj.CPU {
			continue
		}
		// A device that can allocate shared USM can serve the quickstart.
		if a, err := ocl.Alloc(i, usm.KindShared, 1); err == nil {
			_ = a.Free()
			return ocl, i, usm.KindShared, func() { _ = ocl.Close() }, "OpenCL device " + d.Name
		}
	}
	_ = ocl.Close()
	return cpu.Default(), 0, usm.KindHost, func() {}, "no OpenCL CPU device with USM or SVM"
}

func run() error {
	// 1. Pick a backend: OpenCL if installed, else the host backend.
	b, dev, kind, done, why := pick()
	defer done()
	reg := usm.NewRegistry(b)
	fmt.Printf("1. backend: %s — %s; devices: %v\n", b.Name(), why, b.Devices())

	// 2. Allocate a 3x4 float32 array and fill it from the host.
	const rows, cols = 3, 4
	alloc, err := b.Alloc(dev, kind, rows*cols*4)
	if err != nil {
		return err
	}
	defer alloc.Free()
	vals := unsafe.Slice((*float32)(unsafe.Pointer(&alloc.Bytes()[0])), rows*cols)
	for i := range vals {
		vals[i] = float32(i) * 0.5
	}
	what := alloc.Kind().String() + " USM"
	if b.Name() == syclobj.Host {
		what = "host memory (not USM)"
	}
	fmt.Printf("2. allocated %d bytes of %s at %#x, filled with 0, 0.5, ..., %g\n",
		alloc.Size(), what, alloc.Pointer(), vals[len(vals)-1])

	// 3. Describe it as a SUAI dict, as dpctl would see it, and parse it
	// back. Only USM has one: the host backend's memory is refused, as
	// Python refuses a NumPy array's, and travels through DLPack alone.
	arr, err := reg.NewArray(alloc, dtype.Float32, []int64{rows, cols})
	if err != nil {
		return err
	}
	suai, err := arr.SUAI()
	switch {
	case errors.Is(err, usm.ErrAttribute) && arr.DLDevice.Type == dlpack.CPU:
		fmt.Printf("3. no __sycl_usm_array_interface__ (%v)\n", err)
	case err != nil:
		return err
	default:
		fmt.Printf("3. __sycl_usm_array_interface__ = %v\n", suai)
		parsed, err := reg.Parse(suai)
		if err != nil {
			return err
		}
		fmt.Printf("   parsed back: shape %v, dtype %s, %s USM of %q, window %d bytes\n",
			parsed.Shape, parsed.DType, parsed.Memory.Kind, parsed.Syclobj, must(parsed.Window()).Len())
	}

	// 4. Export to DLPack (a versioned DLManagedTensorVersioned in C memory).
	m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1, Minor: 0}})
	if err != nil {
		return err
	}
	fmt.Printf("4. exported %v on device %v\n", m, arr.DLDevice)

	// 5. Import it as a consumer would, and check the data through it.
	t, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
	if err != nil {
		return err
	}
	raw, err := t.Bytes()
	if err != nil {
		return err
	}
	got := unsafe.Slice((*float32)(unsafe.Pointer(&raw[0])), rows*cols)
	for i := range got {
		if got[i] != float32(i)*0.5 {
			return fmt.Errorf("element %d: got %g, want %g", i, got[i], float32(i)*0.5)
		}
	}
	fmt.Printf("5. imported: DLPack %d.%d, shape %v, strides %v, dtype %s, same pointer: %v, data verified\n",
		t.Version.Major, t.Version.Minor, t.Shape, t.Strides, t.DType, t.Data == alloc.Pointer())

	// 6. Release: the deleter runs exactly once and the memory is freed with
	// the last reference.
	t.Release()
	s := dlpack.Live()
	fmt.Printf("6. released: live exports %d, live imports %d, C blocks %d\n", s["exports"], s["imports"], s["c_blocks"])
	if s["exports"] != 0 || s["imports"] != 0 || s["c_blocks"] != 0 {
		return fmt.Errorf("leak: %v", s)
	}
	return nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
