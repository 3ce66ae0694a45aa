package levelzero

import (
	"github.com/usmbridge/usmbridge/internal/ffi"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
)

// GetIPCHandle exports the allocation at base for another process
// (zeMemGetIpcHandle). base must be the allocation's base pointer, not an
// interior one. Where the loader has zeMemPutIpcHandle, release the handle
// with PutIPCHandle when it has been opened by the other side.
func (c *Context) GetIPCHandle(base uintptr) (IPCHandle, error) {
	var ipc IPCHandle
	h, err := c.lock("levelzero.Context.GetIPCHandle")
	if err != nil {
		return ipc, err
	}
	defer c.unlock()
	ipc.h, err = api.MemGetIpcHandle(h, base)
	return ipc, err
}

// PutIPCHandle releases an exported handle (zeMemPutIpcHandle, spec 1.6).
// With a loader that lacks it (Debian 12's 1.8.12) the error matches
// errkind.NotSupported and nothing needs releasing: older drivers tie the
// handle's lifetime to the allocation.
func (c *Context) PutIPCHandle(ipc IPCHandle) error {
	h, err := c.lock("levelzero.Context.PutIPCHandle")
	if err != nil {
		return err
	}
	defer c.unlock()
	if !api.HasPutIpcHandle() {
		return errkind.New(errkind.NotSupported, "levelzero.Context.PutIPCHandle", zeapi.Loader+" does not export zeMemPutIpcHandle (loader < 1.10)")
	}
	return api.MemPutIpcHandle(h, ipc.h)
}

// IPCMapping is memory opened from an IPC handle. Close it with Close, not
// Context.Free.
type IPCMapping struct {
	h   ffi.Handle // the mapped address
	ctx *Context
}

// OpenIPCHandle maps memory exported by GetIPCHandle, in this process or
// another, for dev (zeMemOpenIpcHandle; the handle is passed by value).
func (c *Context) OpenIPCHandle(dev *Device, ipc IPCHandle) (*IPCMapping, error) {
	const op = "levelzero.Context.OpenIPCHandle"
	h, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	dh, err := c.checkDevice(op, dev, false)
	if err != nil {
		return nil, err
	}
	p, err := api.MemOpenIpcHandle(h, dh, ipc.h)
	if err != nil {
		return nil, err
	}
	c.children.Add(1)
	m := &IPCMapping{ctx: c}
	m.h.Init(p, "IPC mapping", liveIPC)
	return m, nil
}

// Pointer is the mapped address; 0 after Close.
func (m *IPCMapping) Pointer() uintptr { return m.h.Raw() }

// Close unmaps the memory (zeMemCloseIpcHandle); a second call does
// nothing.
func (m *IPCMapping) Close() error {
	if m == nil {
		return nil
	}
	return m.h.Close(func(p uintptr) error {
		h, err := m.ctx.lock("levelzero.IPCMapping.Close")
		if err != nil {
			return err
		}
		defer m.ctx.unlock()
		if err := api.MemCloseIpcHandle(h, p); err != nil {
			return err
		}
		m.ctx.children.Add(-1)
		return nil
	})
}
