package opencl

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/syclobj"
)

// platform is an OpenCL platform (one ICD: PoCL, Intel's CPU runtime,
// ...). Platform ids are not reference counted.
type platform struct {
	id   clapi.Platform
	info platformInfo
	devs []*device

	usmOnce sync.Once
	usm     clapi.USM
}

// platformInfo is what clGetPlatformInfo reports.
type platformInfo struct {
	name, vendor, version, profile string
	extensions                     []string
}

// device is an OpenCL root device. Root devices are not reference counted.
type device struct {
	id       clapi.Device
	platform *platform
	index    int // position among the devices of all platforms: the Backend's device index
	info     deviceInfo
}

// deviceInfo is what clGetDeviceInfo reports.
type deviceInfo struct {
	name, vendor, version, driverVersion, profile string
	typ                                           uint64 // cl_device_type
	extensions                                    []string
	svm                                           uint64 // cl_device_svm_capabilities; 0 on OpenCL 1.x devices
	// usmExtension is the cl_intel_unified_shared_memory name the device
	// advertises ("" if none); older Intel runtimes say "..._preview".
	usmExtension string
	usm          usmCaps
}

// usmCaps are a device's cl_intel_unified_shared_memory capabilities per
// allocation kind (bit 0 access, 1 atomic, 2 concurrent, 3 concurrent
// atomic); zero means the kind is unsupported.
type usmCaps struct {
	host, device, singleDeviceShared, crossDeviceShared, sharedSystem uint64
}

// platforms lists every platform with its devices, in the ICD loader's
// order, once per process: the loader reads its configuration once. With
// no loader, or a loader that finds no vendor library
// (CL_PLATFORM_NOT_FOUND_KHR), the error matches usm.ErrNotAvailable.
var platforms = sync.OnceValues(func() ([]*platform, error) {
	l, err := lib()
	if err != nil {
		return nil, err
	}
	ids, err := l.PlatformIDs()
	if errors.Is(err, PlatformNotFoundKHR) {
		// The ICD loader found no vendor library: no runtime installed.
		return nil, errkind.Wrap(errkind.NotAvailable, "opencl", "the ICD loader found no OpenCL platform (install e.g. pocl-opencl-icd, or point OCL_ICD_VENDORS at an ICD)", err)
	}
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, errkind.Wrap(errkind.NotAvailable, "opencl", "the ICD loader found no OpenCL platform", &Error{Op: "clGetPlatformIDs", Status: PlatformNotFoundKHR})
	}
	ps := make([]*platform, 0, len(ids))
	index := 0
	for _, id := range ids {
		info := func(param uint32) string { s, _ := l.PlatformInfo(id, param); return s }
		p := &platform{id: id, info: platformInfo{
			name:       info(clapi.PlatformName),
			vendor:     info(clapi.PlatformVendor),
			version:    info(clapi.PlatformVersion),
			profile:    info(clapi.PlatformProfile),
			extensions: strings.Fields(info(clapi.PlatformExtensions)),
		}}
		if p.devs, err = p.loadDevices(l, index); err != nil {
			return nil, err
		}
		index += len(p.devs)
		ps = append(ps, p)
	}
	return ps, nil
})

// loadDevices lists the platform's root devices of every type; a platform
// without devices gives an empty list, not an error. Their indexes start
// at first.
func (p *platform) loadDevices(l *clapi.Lib, first int) ([]*device, error) {
	ids, err := l.DeviceIDs(p.id, clapi.DeviceTypeAll)
	if errors.Is(err, clapi.DeviceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	devs := make([]*device, 0, len(ids))
	for i, id := range ids {
		d := &device{id: id, platform: p, index: first + i}
		str := func(param uint32) string { s, _ := l.DeviceInfoString(id, param); return s }
		// 0 when the query fails, e.g. an extension query on a device
		// without the extension.
		num := func(param uint32) uint64 { v, _ := l.DeviceInfoUint(id, param); return v }
		d.info = deviceInfo{
			name:          str(clapi.DeviceName),
			vendor:        str(clapi.DeviceVendor),
			version:       str(clapi.DeviceVersion),
			driverVersion: str(clapi.DriverVersion),
			profile:       str(clapi.DeviceProfile),
			typ:           num(clapi.DeviceType),
			extensions:    strings.Fields(str(clapi.DeviceExtensions)),
			svm:           num(clapi.DeviceSVMCapabilities),
		}
		for _, e := range []string{"cl_intel_unified_shared_memory", "cl_intel_unified_shared_memory_preview"} {
			if slices.Contains(d.info.extensions, e) {
				d.info.usmExtension = e
				break
			}
		}
		if d.info.usmExtension != "" {
			d.info.usm = usmCaps{
				host:               num(clapi.DeviceHostMemCapsINTEL),
				device:             num(clapi.DeviceDevMemCapsINTEL),
				singleDeviceShared: num(clapi.DeviceSingleSharedINTEL),
				crossDeviceShared:  num(clapi.DeviceCrossSharedINTEL),
				sharedSystem:       num(clapi.DeviceSystemSharedINTEL),
			}
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// usmFuncs returns the platform's USM entry points, fetched on first use.
func (p *platform) usmFuncs() clapi.USM {
	p.usmOnce.Do(func() {
		if l, err := lib(); err == nil {
			p.usm = l.USM(p.id)
		}
	})
	return p.usm
}

// memory is how a device's USM is provided.
type memory uint8

const (
	// noMemory: the device has neither USM nor fine-grain SVM; Alloc
	// refuses it (usm.ErrNotSupported).
	noMemory memory = iota
	// usmMemory: cl_intel_unified_shared_memory (host, device and shared).
	usmMemory
	// svmMemory: clSVMAlloc fine-grain buffers, served for every kind and
	// reported as shared (see the package documentation).
	svmMemory
)

func (m memory) String() string {
	return [...]string{"none", "usm", "svm-fine-grain"}[m]
}

// memory reports how the device's USM is provided: the extension, where
// the device advertises it (or its _preview name) and the platform has
// every entry point the bridge uses; else fine-grain SVM, memory the host
// may use directly with no map/unmap.
func (d *device) memory() memory {
	if d.info.usmExtension != "" && d.platform.usmFuncs().Complete() {
		return usmMemory
	}
	if l, err := lib(); err == nil && l.HasSVM() && d.info.svm&clapi.SVMFineGrainBuffer != 0 {
		return svmMemory
	}
	return noMemory
}

// syclType is the SYCL device type filter selectors use for the device.
func (d *device) syclType() syclobj.DeviceType {
	switch {
	case d.info.typ&clapi.DeviceTypeGPU != 0:
		return syclobj.GPU
	case d.info.typ&clapi.DeviceTypeCPU != 0:
		return syclobj.CPU
	}
	// SYCL reports custom devices as accelerators when it lists them at all.
	return syclobj.Accelerator
}

func (d *device) String() string {
	if d == nil {
		return "no device"
	}
	return d.platform.info.name + ": " + d.info.name + " (" + d.syclType().String() + ")"
}

// findDevice maps a cl_device_id back to a known root device; nil for 0
// and for devices no platform listed (a sub-device, say).
func findDevice(id clapi.Device) *device {
	if id == 0 {
		return nil
	}
	ps, _ := platforms()
	for _, p := range ps {
		for _, d := range p.devs {
			if d.id == id {
				return d
			}
		}
	}
	return nil
}
