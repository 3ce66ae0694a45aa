package levelzero

import (
	"strconv"

	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// MemoryType is a ze_memory_type_t.
type MemoryType uint32

const (
	MemoryTypeUnknown      MemoryType = 0
	MemoryTypeHost         MemoryType = 1
	MemoryTypeDevice       MemoryType = 2
	MemoryTypeShared       MemoryType = 3
	MemoryTypeHostImported MemoryType = 4 // newer specs: host memory imported from the system
)

func (t MemoryType) String() string {
	switch t {
	case MemoryTypeUnknown:
		return "unknown"
	case MemoryTypeHost:
		return "host"
	case MemoryTypeDevice:
		return "device"
	case MemoryTypeShared:
		return "shared"
	case MemoryTypeHostImported:
		return "host_imported"
	}
	return "MemoryType(" + strconv.Itoa(int(t)) + ")"
}

// Kind maps t to a USM kind. Types this package does not know (such as
// HOST_IMPORTED) are host-accessible but not owned by the USM allocator,
// so they are KindUnknown: usmbridge must not treat them as USM.
func (t MemoryType) Kind() usm.Kind {
	switch t {
	case MemoryTypeHost:
		return usm.KindHost
	case MemoryTypeDevice:
		return usm.KindDevice
	case MemoryTypeShared:
		return usm.KindShared
	}
	return usm.KindUnknown
}

// AllocHost allocates host USM (zeMemAllocHost). alignment 0 is the
// driver's default; otherwise it must be a power of two.
func (c *Context) AllocHost(size, alignment uintptr) (uintptr, error) {
	h, err := c.lock("levelzero.Context.AllocHost")
	if err != nil {
		return 0, err
	}
	defer c.unlock()
	return c.allocated(api.MemAllocHost(h, size, alignment))
}

// AllocDevice allocates device USM on dev (zeMemAllocDevice).
func (c *Context) AllocDevice(dev *Device, size, alignment uintptr) (uintptr, error) {
	h, err := c.lock("levelzero.Context.AllocDevice")
	if err != nil {
		return 0, err
	}
	defer c.unlock()
	dh, err := c.checkDevice("levelzero.Context.AllocDevice", dev, false)
	if err != nil {
		return 0, err
	}
	return c.allocated(api.MemAllocDevice(h, dh, size, alignment))
}

// AllocShared allocates shared USM (zeMemAllocShared). dev may be nil for
// memory not associated with one device.
func (c *Context) AllocShared(dev *Device, size, alignment uintptr) (uintptr, error) {
	h, err := c.lock("levelzero.Context.AllocShared")
	if err != nil {
		return 0, err
	}
	defer c.unlock()
	dh, err := c.checkDevice("levelzero.Context.AllocShared", dev, true)
	if err != nil {
		return 0, err
	}
	return c.allocated(api.MemAllocShared(h, dh, size, alignment))
}

func (c *Context) allocated(p uintptr, err error) (uintptr, error) {
	if err != nil {
		return 0, err
	}
	liveAllocations.Add(1)
	c.children.Add(1)
	return p, nil
}

// Free returns USM to the driver (zeMemFree). Memory opened from an IPC
// handle is released with IPCMapping.Close instead.
func (c *Context) Free(ptr uintptr) error {
	h, err := c.lock("levelzero.Context.Free")
	if err != nil {
		return err
	}
	defer c.unlock()
	if err := api.MemFree(h, ptr); err != nil {
		return err
	}
	liveAllocations.Add(-1)
	c.children.Add(-1)
	return nil
}

// AllocProperties is what zeMemGetAllocProperties reports about a pointer.
type AllocProperties struct {
	Type     MemoryType
	ID       uint64  // unique per allocation; unspecified for Unknown
	PageSize uint64  // unspecified for Unknown
	Device   *Device // nil for host memory, Unknown, or a device this package did not enumerate
}

// AllocProperties classifies ptr (zeMemGetAllocProperties). Interior
// pointers are accepted. Memory the driver does not know is Type Unknown,
// not an error. NULL is never USM: it is Unknown without asking the
// driver, whose validation layer would refuse it as a NULL pointer.
func (c *Context) AllocProperties(ptr uintptr) (AllocProperties, error) {
	h, err := c.lock("levelzero.Context.AllocProperties")
	if err != nil {
		return AllocProperties{}, err
	}
	defer c.unlock()
	if ptr == 0 {
		return AllocProperties{}, nil
	}
	p, err := api.MemAllocProperties(h, ptr)
	if err != nil {
		return AllocProperties{}, err
	}
	ap := AllocProperties{Type: MemoryType(p.Type)}
	if ap.Type != MemoryTypeUnknown {
		ap.ID, ap.PageSize = p.ID, p.PageSize
		if p.Device != 0 {
			ap.Device = c.driver.device(p.Device)
		}
	}
	return ap, nil
}

// AddressRange returns the base and size of the allocation containing ptr
// (zeMemGetAddressRange). Drivers answer an error for memory they do not
// know (Intel's: ZE_RESULT_ERROR_UNKNOWN).
func (c *Context) AddressRange(ptr uintptr) (base, size uintptr, err error) {
	h, err := c.lock("levelzero.Context.AddressRange")
	if err != nil {
		return 0, 0, err
	}
	defer c.unlock()
	return api.MemAddressRange(h, ptr)
}

// query is the hot path of Backend.QueryPointer: alloc properties, then
// the address range for known memory. ok is false for unknown memory and
// for any error (a query never fails loudly).
func (c *Context) query(ptr uintptr) (info zeapi.MemInfo, ok bool) {
	if ptr == 0 {
		return
	}
	h, err := c.lock("levelzero.Context.query")
	if err != nil {
		return
	}
	defer c.unlock()
	info, ok = api.MemQuery(h, ptr)
	if !ok || MemoryType(info.Type).Kind() == usm.KindUnknown {
		return info, false
	}
	return info, true
}
