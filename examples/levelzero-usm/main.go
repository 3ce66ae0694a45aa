// Command levelzero-usm walks through usmbridge's Level Zero backend:
// enumerate the drivers and devices the Level Zero loader finds, allocate
// shared USM on the first device, describe it as a
// __sycl_usm_array_interface__ and hand it to a DLPack consumer as a
// kDLOneAPI tensor.
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
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/levelzero"
	"github.com/usmbridge/usmbridge/typestr"
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
	// 1. Drivers and devices, as the loader reports them.
	drivers, err := levelzero.Drivers()
	if err != nil {
		return err
	}
	fmt.Printf("1. Level Zero initialised through %s: %d driver(s)\n", levelzero.InitPath(), len(drivers))
	for _, d := range drivers {
		fmt.Printf("   %v, IPC %v\n", d, d.SupportsIPC())
		for _, dev := range d.Devices() {
			p := dev.Properties()
			fmt.Printf("     device %d: %q type %v vendor %#x uuid %x\n", dev.Index(), p.Name, p.Type, p.VendorID, p.UUID)
		}
	}

	// 2. The backend in a registry: selectors such as level_zero:gpu:0
	// resolve to its devices.
	b, err := levelzero.New()
	if err != nil {
		return err
	}
	defer b.Close()
	reg := usm.NewRegistry(b)
	fmt.Printf("2. global devices: %v\n", reg.Devices())

	// 3. Shared USM on device 0, written from the host.
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
	fmt.Printf("3. %d bytes of %v USM at %#x; the driver says base+8 is %v USM on device %d, allocation [%#x, +%d)\n",
		alloc.Size(), alloc.Kind(), alloc.Pointer(), info.Kind, info.Device, info.Base, info.Size)

	// 4. As a __sycl_usm_array_interface__.
	arr, err := reg.NewArray(alloc, typestr.Float64, []int64{n})
	if err != nil {
		return err
	}
	suai, err := arr.SUAI()
	if err != nil {
		return err
	}
	fmt.Printf("4. __sycl_usm_array_interface__ = %v\n", suai)

	// 5. To DLPack and back, as a consumer would see it.
	m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	if err != nil {
		return err
	}
	t, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
	if err != nil {
		return err
	}
	defer t.Release()
	fmt.Printf("5. DLPack %d.%d tensor on %v, shape %v, dtype %s, same memory: %v\n",
		t.Version.Major, t.Version.Minor, t.DLDevice, t.Shape, t.Typestr, t.Data == alloc.Pointer())
	return nil
}
