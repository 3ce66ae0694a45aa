// Command levelzero-usm walks through usmbridge's Level Zero backend:
// list the devices the Level Zero loader finds, allocate shared USM on the
// first one, describe it as a __sycl_usm_array_interface__, hand it to a
// DLPack consumer as a kDLOneAPI tensor, share it through an IPC handle,
// and wait on the device's queue through its native handle as a SYCL
// program would.
//
//	go run ./examples/levelzero-usm
//
// It needs the Level Zero loader (Debian: apt install libze1) and a driver,
// such as Intel's GPU driver (intel-level-zero-gpu / libze-intel-gpu1).
// Like any Level Zero program it honours ZE_ENABLE_ALT_DRIVERS, so it can
// also run on the fake driver the tests build. Without a driver it says so
// and exits with status 0: that is a normal state of a machine, not an
// error of this program.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/levelzero"
	"github.com/usmbridge/usmbridge/usm"
)

func main() {
	err := run()
	if errors.Is(err, usm.ErrNotAvailable) {
		fmt.Println("No Level Zero driver is available, so there is nothing to show on this machine:")
		fmt.Println("  ", err)
		fmt.Println("Level Zero needs the loader (Debian/Ubuntu: apt install libze1) and a driver for the")
		fmt.Println("hardware, e.g. Intel's GPU driver (intel-level-zero-gpu or libze-intel-gpu1).")
		fmt.Println("For development, ZE_ENABLE_ALT_DRIVERS=/path/to/driver.so selects any driver library.")
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "levelzero-usm:", err)
		os.Exit(1)
	}
}

func run() error {
	// 1. The backend in a registry: selectors such as level_zero:gpu:0
	// resolve to its devices.
	b, err := levelzero.New()
	if err != nil {
		return err
	}
	defer b.Close()
	reg := usm.NewRegistry(b)
	fmt.Printf("1. Level Zero devices: %v\n", b.Devices())

	// 2. Shared USM on device 0, written from the host.
	const n = 8
	alloc, err := b.Alloc(0, usm.KindShared, n*8)
	if err != nil {
		return err
	}
	defer alloc.Free()
	vals := unsafe.Slice((*float64)(unsafe.Pointer(&alloc.Bytes()[0])), n)
	for i := range vals {
		vals[i] = float64(i * i)
	}
	info := b.QueryPointer(alloc.Pointer() + 8)
	fmt.Printf("2. %d bytes of %v USM; the driver says base+8 is %v USM on device %d, in an allocation of %d bytes at offset %d\n",
		alloc.Size(), alloc.Kind(), info.Kind, info.Device, info.Size, alloc.Pointer()+8-info.Base)

	// 3. As a __sycl_usm_array_interface__.
	arr, err := reg.NewArray(alloc, dtype.Float64, []int64{n})
	if err != nil {
		return err
	}
	suai, err := arr.SUAI()
	if err != nil {
		return err
	}
	fmt.Printf("3. __sycl_usm_array_interface__: shape %v, typestr %v, syclobj %v\n", suai["shape"], suai["typestr"], suai["syclobj"])

	// 4. To DLPack and back, as a consumer would see it.
	m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	if err != nil {
		return err
	}
	t, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
	if err != nil {
		return err
	}
	defer t.Release()
	fmt.Printf("4. DLPack %d.%d tensor on %v, shape %v, dtype %s, same memory: %v\n",
		t.Version.Major, t.Version.Minor, t.DLDevice, t.Shape, t.DType, t.Data == alloc.Pointer())

	// 5. IPC: the handle's bytes go to another process, which opens them
	//    with its own backend; here the same process plays both sides.
	h, err := b.GetIPCHandle(alloc.Pointer())
	if err != nil {
		return err
	}
	received, err := levelzero.IPCHandleFromBytes(h.Bytes())
	if err != nil {
		return err
	}
	mapping, err := b.OpenIPCHandle(0, received)
	if err != nil {
		return err
	}
	seen := make([]byte, n*8)
	if err := b.Copy(uintptr(unsafe.Pointer(&seen[0])), mapping.Pointer(), n*8); err != nil {
		return err
	}
	same := bytes.Equal(seen, alloc.Bytes())
	if err := mapping.Close(); err != nil {
		return err
	}
	if err := b.PutIPCHandle(h); err != nil && !errors.Is(err, usm.ErrNotSupported) {
		return err
	}
	fmt.Printf("5. IPC: %d-byte handle opened, same data: %v\n", len(h.Bytes()), same)

	// 6. Native handles: the device's immediate command list and context
	//    go to native code (a SYCL runtime's make_queue), and come back the
	//    way SYCL's get_native hands them out; waiting synchronises the
	//    list. Borrowed handles stay owned by whoever made them.
	q, err := b.Queue(0)
	if err != nil {
		return err
	}
	ctx, err := b.Context(0)
	if err != nil {
		return err
	}
	sycl, err := levelzero.UnsafeBorrowContext(ctx.Native())
	if err != nil {
		return err
	}
	list, err := sycl.UnsafeBorrowImmediateList(q.(*levelzero.Queue).Native())
	if err != nil {
		return err
	}
	if err := list.Wait(); err != nil {
		return err
	}
	kind := sycl.QueryPointer(alloc.Pointer()).Kind
	if err := list.Close(); err != nil {
		return err
	}
	if err := sycl.Close(); err != nil {
		return err
	}
	fmt.Printf("6. borrowed the native context and immediate command list: waited, and the context classifies the array as %v USM\n", kind)
	return nil
}
