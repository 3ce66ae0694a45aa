package levelzero

import "github.com/usmbridge/usmbridge/levelzero/internal/zeapi"

// IPCHandle is a ze_ipc_mem_handle_t: 64 opaque bytes that another
// process (or this one) opens with Context.OpenIPCHandle. It is plain data
// and safe to send: the driver validates it when it is opened.
type IPCHandle struct {
	h zeapi.IPCHandle
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
