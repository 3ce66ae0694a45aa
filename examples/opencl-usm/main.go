// Command opencl-usm shows usmbridge's round trip on a real OpenCL runtime:
// allocate shared USM on the first OpenCL CPU device (SVM on runtimes
// without cl_intel_unified_shared_memory, such as PoCL 3.1), fill it,
// describe it as a __sycl_usm_array_interface__, export it to DLPack,
// import it back and check the data; then hand the device's queue and
// context to native code and take them back, as a SYCL program's
// get_native and make_queue would.
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
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/syclobj"
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

const rows, cols = 4, 8

func run() error {
	b, err := opencl.New()
	if err != nil {
		return err
	}
	defer b.Close()
	reg := usm.NewRegistry(b)

	// 1. The first OpenCL CPU device that can allocate shared USM (or
	// fine-grain SVM, which the backend serves as shared USM).
	dev, alloc := -1, (*usm.Allocation)(nil)
	for i, d := range b.Devices() {
		if d.Type != syclobj.CPU {
			continue
		}
		if alloc, err = b.Alloc(i, usm.KindShared, rows*cols*4); err == nil {
			dev = i
			break
		}
		if !errors.Is(err, usm.ErrNotSupported) {
			return err
		}
	}
	if dev < 0 {
		return fmt.Errorf("no OpenCL CPU device with USM or fine-grain SVM among %v: %w", reg.Devices(), usm.ErrNotAvailable)
	}
	defer alloc.Free()
	sel, err := reg.SelectorFor(b, dev)
	if err != nil {
		return err
	}
	fmt.Printf("1. device %s (%s)\n", sel, b.Devices()[dev].Name)

	// 2. Fill the 4x8 int32 array from Go through the backend's copier.
	vals := make([]int32, rows*cols)
	for i := range vals {
		vals[i] = 42
	}
	if err := b.Copy(alloc.Pointer(), uintptr(unsafe.Pointer(&vals[0])), alloc.Size()); err != nil {
		return err
	}
	fmt.Printf("2. %d bytes of %s USM, filled with 42\n", alloc.Size(), alloc.Kind())

	// 3. Describe it as a SUAI dict (this waits for the queue, as dpctl does).
	arr, err := reg.NewArray(alloc, dtype.Int32, []int64{rows, cols})
	if err != nil {
		return err
	}
	suai, err := arr.SUAI()
	if err != nil {
		return err
	}
	fmt.Printf("3. __sycl_usm_array_interface__: shape %v, typestr %v, syclobj %v\n", suai["shape"], suai["typestr"], suai["syclobj"])

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
	got := unsafe.Slice((*int32)(unsafe.Pointer(&raw[0])), rows*cols)
	for i, v := range got {
		if v != 42 {
			return fmt.Errorf("element %d is %d, want 42", i, v)
		}
	}
	fmt.Printf("5. data check: all %d elements are 42: ok\n", len(got))

	// 6. Native handles: the device's cl_command_queue and cl_context go
	//    to native code (a SYCL runtime's make_queue), and come back the
	//    way SYCL's get_native hands them out. Borrowing takes a reference
	//    of our own, dropped by Close.
	q, err := b.Queue(dev)
	if err != nil {
		return err
	}
	nq, err := opencl.UnsafeBorrowQueue(q.(*opencl.Queue).Native())
	if err != nil {
		return err
	}
	defer nq.Close()
	if err := nq.Wait(); err != nil {
		return err
	}
	ctx, err := b.Context(dev)
	if err != nil {
		return err
	}
	nc, err := opencl.UnsafeBorrowContext(ctx.Native())
	if err != nil {
		return err
	}
	defer nc.Close()
	fmt.Printf("6. borrowed the native queue (waited: ok) and context; the context classifies the array as %s USM\n",
		nc.QueryPointer(alloc.Pointer()).Kind)
	return nil
}
