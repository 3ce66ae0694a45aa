package levelzero

import (
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
)

// IPCHandle is a ze_ipc_mem_handle_t: 64 opaque bytes that another
// process (or this one) opens with Backend.OpenIPCHandle. Its Bytes are
// plain data and safe to send: the driver validates them when they are
// opened.
type IPCHandle struct {
	h   zeapi.IPCHandle
	ctx *Context // the exporting context; nil for a handle rebuilt from bytes
}

// Bytes returns a copy of the handle's bytes, for sending to another
// process.
func (h IPCHandle) Bytes() []byte { return append([]byte(nil), h.h.Data[:]...) }

// IPCHandleFromBytes rebuilds a handle received from another process.
func IPCHandleFromBytes(b []byte) (IPCHandle, error) {
	var h IPCHandle
	if len(b) != len(h.h.Data) {
		return h, errValue("levelzero.IPCHandleFromBytes", "an IPC handle is 64 bytes, got "+itoa(len(b)))
	}
	copy(h.h.Data[:], b)
	return h, nil
}

// GetIPCHandle exports the allocation at base for another process
// (zeMemGetIpcHandle). base must be the base pointer of USM the backend's
// drivers know, not an interior one. Where the loader has
// zeMemPutIpcHandle, release the handle with PutIPCHandle once the other
// side has opened it.
func (b *Backend) GetIPCHandle(base uintptr) (IPCHandle, error) {
	const op = "levelzero.Backend.GetIPCHandle"
	b.mu.RLock()
	defer b.mu.RUnlock()
	_, st := b.locate(base)
	if st == nil {
		if _, err := b.dev(op, 0); err != nil {
			return IPCHandle{}, err
		}
		// Let the driver of device 0 name what is wrong with the pointer.
		st = b.devs[0].drv
	}
	if !st.d.supportsIPC() {
		return IPCHandle{}, errkind.New(errkind.NotSupported, op, st.d.String()+" cannot share memory between processes")
	}
	return st.ctx.getIPCHandle(base)
}

func (c *Context) getIPCHandle(base uintptr) (IPCHandle, error) {
	h, err := c.lock("levelzero.Context.getIPCHandle")
	if err != nil {
		return IPCHandle{}, err
	}
	defer c.unlock()
	ipc, err := api.MemGetIpcHandle(h, base)
	return IPCHandle{h: ipc, ctx: c}, err
}

// PutIPCHandle releases a handle GetIPCHandle exported
// (zeMemPutIpcHandle, spec 1.6). With a loader that lacks it (Debian 12's
// 1.8.12) the error matches usm.ErrNotSupported and nothing needs
// releasing: older drivers tie the handle's lifetime to the allocation. A
// handle rebuilt from bytes is refused (usm.ErrValue): only the exporter
// releases it.
func (b *Backend) PutIPCHandle(ipc IPCHandle) error {
	const op = "levelzero.Backend.PutIPCHandle"
	if ipc.ctx == nil {
		return errValue(op, "the handle was not exported by this process")
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if _, err := b.dev(op, 0); err != nil {
		return err
	}
	h, err := ipc.ctx.lock(op)
	if err != nil {
		return err
	}
	defer ipc.ctx.unlock()
	if !api.HasPutIpcHandle() {
		return errkind.New(errkind.NotSupported, op, zeapi.Loader+" does not export zeMemPutIpcHandle (loader < 1.10)")
	}
	return api.MemPutIpcHandle(h, ipc.h)
}

// IPCMapping is memory opened from an IPC handle. Close it with its
// Close; the backend refuses to close while mappings are open.
type IPCMapping struct {
	h   ffi.Handle // the mapped address
	ctx *Context
}

// OpenIPCHandle maps memory exported by GetIPCHandle, in this process or
// another, for device i (zeMemOpenIpcHandle).
func (b *Backend) OpenIPCHandle(i int, ipc IPCHandle) (*IPCMapping, error) {
	const op = "levelzero.Backend.OpenIPCHandle"
	b.mu.RLock()
	defer b.mu.RUnlock()
	d, err := b.dev(op, i)
	if err != nil {
		return nil, err
	}
	c := d.drv.ctx
	h, err := c.lock(op)
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	p, err := api.MemOpenIpcHandle(h, d.dev.h, ipc.h)
	if err != nil {
		return nil, err
	}
	c.children.Add(1)
	c.memory.Add(1)
	m := &IPCMapping{ctx: c}
	m.h.Init(p, "IPC mapping", liveIPC)
	return m, nil
}

// Pointer is the mapped address; 0 after Close.
func (m *IPCMapping) Pointer() uintptr {
	if m == nil {
		return 0
	}
	return m.h.Raw()
}

// Close unmaps the memory (zeMemCloseIpcHandle) once; a second call does
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
		m.ctx.memory.Add(-1)
		return nil
	})
}
