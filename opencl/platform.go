package opencl

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
)

// Platform is an OpenCL platform (one ICD: PoCL, Intel's CPU runtime, ...).
// The zero value is invalid. Platform ids are not reference counted, so a
// Platform needs no release.
type Platform struct{ p *platform }

type platform struct {
	id   clapi.Platform
	info PlatformInfo

	usmOnce sync.Once
	usm     clapi.USM

	devOnce sync.Once
	devs    []Device
	devErr  error
}

// PlatformInfo is what clGetPlatformInfo reports.
type PlatformInfo struct {
	Name, Vendor, Version, Profile string
	Extensions                     []string
}

// Device is an OpenCL root device. The zero value is invalid. Root devices
// are not reference counted.
type Device struct{ d *device }

type device struct {
	id       clapi.Device
	platform *platform
	info     DeviceInfo
}

// DeviceType is the cl_device_type bitfield.
type DeviceType uint64

// Device types.
const (
	TypeCPU         DeviceType = clapi.DeviceTypeCPU
	TypeGPU         DeviceType = clapi.DeviceTypeGPU
	TypeAccelerator DeviceType = clapi.DeviceTypeAccelerator
	TypeCustom      DeviceType = clapi.DeviceTypeCustom
)

func (t DeviceType) String() string {
	var parts []string
	for _, x := range []struct {
		t DeviceType
		n string
	}{{TypeCPU, "cpu"}, {TypeGPU, "gpu"}, {TypeAccelerator, "accelerator"}, {TypeCustom, "custom"}} {
		if t&x.t != 0 {
			parts = append(parts, x.n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// SVMCaps is the cl_device_svm_capabilities bitfield.
type SVMCaps uint64

// SVM capabilities.
const (
	SVMCoarseGrainBuffer SVMCaps = clapi.SVMCoarseGrainBuffer
	SVMFineGrainBuffer   SVMCaps = clapi.SVMFineGrainBuffer
	SVMFineGrainSystem   SVMCaps = clapi.SVMFineGrainSystem
	SVMAtomics           SVMCaps = clapi.SVMAtomics
)

// USMCaps are a device's cl_intel_unified_shared_memory capabilities per
// allocation kind (bit 0 access, 1 atomic, 2 concurrent, 3 concurrent
// atomic); zero means the kind is unsupported.
type USMCaps struct {
	Host, Device, SingleDeviceShared, CrossDeviceShared, SharedSystem uint64
}

// DeviceInfo is what clGetDeviceInfo reports.
type DeviceInfo struct {
	Name, Vendor, Version, DriverVersion, Profile string
	Type                                          DeviceType
	Extensions                                    []string
	SVM                                           SVMCaps // 0 on OpenCL 1.x devices
	// USMExtension is the cl_intel_unified_shared_memory name the device
	// advertises ("" if none); older Intel runtimes say "..._preview".
	USMExtension string
	USM          USMCaps
}

// HasExtension reports whether ext is in the extension list.
func (i DeviceInfo) HasExtension(ext string) bool { return slices.Contains(i.Extensions, ext) }

var platformsOnce = sync.OnceValues(func() ([]Platform, error) {
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
	ps := make([]Platform, 0, len(ids))
	for _, id := range ids {
		p := &platform{id: id}
		info := func(param uint32) string { s, _ := l.PlatformInfo(id, param); return s }
		p.info = PlatformInfo{
			Name:       info(clapi.PlatformName),
			Vendor:     info(clapi.PlatformVendor),
			Version:    info(clapi.PlatformVersion),
			Profile:    info(clapi.PlatformProfile),
			Extensions: strings.Fields(info(clapi.PlatformExtensions)),
		}
		ps = append(ps, Platform{p})
	}
	return ps, nil
})

// Platforms lists the OpenCL platforms in the ICD loader's order. With no
// loader, or a loader that finds no vendor library
// (CL_PLATFORM_NOT_FOUND_KHR), the error matches usm.ErrNotAvailable. The
// list is read once per process, as the loader reads its configuration once.
func Platforms() ([]Platform, error) {
	ps, err := platformsOnce()
	return slices.Clone(ps), err
}

// Info returns the platform's properties.
func (p Platform) Info() PlatformInfo {
	if p.p == nil {
		return PlatformInfo{}
	}
	pi := p.p.info
	pi.Extensions = slices.Clone(pi.Extensions)
	return pi
}

// Name is Info().Name.
func (p Platform) Name() string {
	if p.p == nil {
		return ""
	}
	return p.p.info.Name
}

// Native returns the cl_platform_id.
func (p Platform) Native() uintptr {
	if p.p == nil {
		return 0
	}
	return uintptr(p.p.id)
}

// Valid reports whether p came from Platforms.
func (p Platform) Valid() bool { return p.p != nil }

// Devices lists the platform's root devices of every type, read once.
// A platform without devices gives an empty list, not an error.
func (p Platform) Devices() ([]Device, error) {
	if p.p == nil {
		return nil, errZero("platform")
	}
	p.p.devOnce.Do(func() { p.p.devs, p.p.devErr = p.p.loadDevices() })
	return slices.Clone(p.p.devs), p.p.devErr
}

func (p *platform) loadDevices() ([]Device, error) {
	l, err := lib()
	if err != nil {
		return nil, err
	}
	ids, err := l.DeviceIDs(p.id, clapi.DeviceTypeAll)
	if errors.Is(err, DeviceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	devs := make([]Device, 0, len(ids))
	for _, id := range ids {
		d := &device{id: id, platform: p}
		str := func(param uint32) string { s, _ := l.DeviceInfoString(id, param); return s }
		// 0 when the query fails, e.g. an extension query on a device
		// without the extension.
		num := func(param uint32) uint64 { v, _ := l.DeviceInfoUint(id, param); return v }
		d.info = DeviceInfo{
			Name:          str(clapi.DeviceName),
			Vendor:        str(clapi.DeviceVendor),
			Version:       str(clapi.DeviceVersion),
			DriverVersion: str(clapi.DriverVersion),
			Profile:       str(clapi.DeviceProfile),
			Type:          DeviceType(num(clapi.DeviceType)),
			Extensions:    strings.Fields(str(clapi.DeviceExtensions)),
			SVM:           SVMCaps(num(clapi.DeviceSVMCapabilities)),
		}
		for _, e := range []string{"cl_intel_unified_shared_memory", "cl_intel_unified_shared_memory_preview"} {
			if d.info.HasExtension(e) {
				d.info.USMExtension = e
				break
			}
		}
		if d.info.USMExtension != "" {
			d.info.USM = USMCaps{
				Host:               num(clapi.DeviceHostMemCapsINTEL),
				Device:             num(clapi.DeviceDevMemCapsINTEL),
				SingleDeviceShared: num(clapi.DeviceSingleSharedINTEL),
				CrossDeviceShared:  num(clapi.DeviceCrossSharedINTEL),
				SharedSystem:       num(clapi.DeviceSystemSharedINTEL),
			}
		}
		devs = append(devs, Device{d})
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

// Info returns the device's properties.
func (d Device) Info() DeviceInfo {
	if d.d == nil {
		return DeviceInfo{}
	}
	di := d.d.info
	di.Extensions = slices.Clone(di.Extensions)
	return di
}

// Name is Info().Name.
func (d Device) Name() string {
	if d.d == nil {
		return ""
	}
	return d.d.info.Name
}

// Type is Info().Type.
func (d Device) Type() DeviceType {
	if d.d == nil {
		return 0
	}
	return d.d.info.Type
}

// Platform returns the device's platform.
func (d Device) Platform() Platform {
	if d.d == nil {
		return Platform{}
	}
	return Platform{d.d.platform}
}

// Native returns the cl_device_id.
func (d Device) Native() uintptr {
	if d.d == nil {
		return 0
	}
	return uintptr(d.d.id)
}

// Valid reports whether d came from Platform.Devices.
func (d Device) Valid() bool { return d.d != nil }

// SupportsUSM reports whether the device advertises
// cl_intel_unified_shared_memory (or its _preview name) and its platform
// provides every entry point the bridge uses.
func (d Device) SupportsUSM() bool {
	return d.d != nil && d.d.info.USMExtension != "" && d.d.platform.usmFuncs().Complete()
}

// SupportsFineGrainSVM reports whether clSVMAlloc can give memory the host
// may use directly, with no map/unmap (the SVM stand-in for shared USM).
func (d Device) SupportsFineGrainSVM() bool {
	if d.d == nil {
		return false
	}
	l, err := lib()
	return err == nil && l.HasSVM() && d.d.info.SVM&SVMFineGrainBuffer != 0
}

func (d Device) String() string {
	if d.d == nil {
		return "opencl.Device(invalid)"
	}
	return d.d.platform.info.Name + ": " + d.d.info.Name + " (" + d.d.info.Type.String() + ")"
}

// findDevice maps a cl_device_id back to a known root device.
func findDevice(id clapi.Device) (Device, bool) {
	if id == 0 {
		return Device{}, false
	}
	ps, _ := platformsOnce()
	for _, p := range ps {
		ds, _ := p.Devices()
		for _, d := range ds {
			if d.d.id == id {
				return d, true
			}
		}
	}
	return Device{}, false
}
