// Command opencl-usm shows usmbridge's round trip on a real OpenCL runtime:
// allocate shared USM on the first OpenCL CPU device (SVM on runtimes
// without cl_intel_unified_shared_memory, such as PoCL 3.1), fill it with
// the runtime, describe it as a __sycl_usm_array_interface__, export it to
// DLPack, import it back and check the data.
//
//	go run ./examples/opencl-usm
//
// Runtimes: Debian's PoCL (apt-get install ocl-icd-libopencl1
// pocl-opencl-icd), or Intel's CPU runtime (pip install intel-opencl-rt,
// then point OCL_ICD_VENDORS at a directory holding a .icd file that names
// its libintelocl.so; scripts/setup-20-opencl.sh does both). Without any,
// the program says so and exits 0.
package main

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

func main() {
	if err := run(); err != nil {
		if errors.Is(err, usm.ErrNotAvailable) {
			fmt.Println("opencl-usm: no OpenCL runtime here, nothing to show:", err)
			fmt.Println("install one with: apt-get install ocl-icd-libopencl1 pocl-opencl-icd")
			return
		}
		fmt.Fprintln(os.Stderr, "opencl-usm:", err)
		os.Exit(1)
	}
}

func run() error {
	b, err := opencl.New()
	if err != nil {
		return err
	}
	defer b.Close()
	reg := usm.NewRegistry(b)

	// 1. The first OpenCL CPU device.
	dev := -1
	for i := range b.Devices() {
		if d, _ := b.Device(i); d.Type()&opencl.TypeCPU != 0 && b.Memory(i) != opencl.NoMemory {
			dev = i
			break
		}
	}
	if dev < 0 {
		return fmt.Errorf("no OpenCL CPU device with USM or fine-grain SVM among %v: %w", reg.Devices(), usm.ErrNotAvailable)
	}
	d, _ := b.Device(dev)
	sel, err := reg.SelectorFor(b, dev)
	if err != nil {
		return err
	}
	fmt.Printf("1. device %s (%s), platform %q, memory: %s\n", sel, d.Name(), d.Platform().Name(), b.Memory(dev))

	// 2. Allocate 4x8 int32 of shared USM and fill it on the device's queue.
	const rows, cols = 4, 8
	alloc, err := b.Alloc(dev, usm.KindShared, rows*cols*4)
	if err != nil {
		return err
	}
	defer alloc.Free()
	q, err := b.CommandQueue(dev)
	if err != nil {
		return err
	}
	pattern := []byte{42, 0, 0, 0} // int32 42
	if b.Memory(dev) == opencl.USM {
		err = q.MemFill(alloc.Pointer(), pattern, alloc.Size())
	} else {
		err = q.SVMMemFill(alloc.Pointer(), pattern, alloc.Size())
	}
	if err != nil {
		return err
	}
	fmt.Printf("2. %d bytes of %s USM at %#x, fill enqueued\n", alloc.Size(), alloc.Kind(), alloc.Pointer())

	// 3. Describe it as a SUAI dict (this waits for the queue, as dpctl does).
	arr, err := reg.NewArray(alloc, typestr.Int32, []int64{rows, cols})
	if err != nil {
		return err
	}
	suai, err := arr.SUAI()
	if err != nil {
		return err
	}
	fmt.Printf("3. __sycl_usm_array_interface__ = %v\n", suai)

	// 4. Export to DLPack on the array's own device (kDLOneAPI), and import
	//    it back as a consumer would.
	m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	if err != nil {
		return err
	}
	t, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
	if err != nil {
		return err
	}
	defer t.Release()
	fmt.Printf("4. exported and imported: device %v, USM kind %s, backend %s, zero copy %v\n",
		t.DLDevice, t.Memory.Kind, t.Backend.Name(), t.Data == alloc.Pointer())

	// 5. Check the data through the imported tensor (host-accessible).
	raw, err := t.Bytes()
	if err != nil {
		return err
	}
	vals := unsafe.Slice((*int32)(unsafe.Pointer(&raw[0])), rows*cols)
	for i, v := range vals {
		if v != 42 {
			return fmt.Errorf("element %d is %d, want 42", i, v)
		}
	}
	fmt.Printf("5. data check: all %d elements are 42: ok\n", len(vals))
	return nil
}
