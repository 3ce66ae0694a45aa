package levelzero

// Synchronising through native handles handed over by a SYCL runtime
// (sycl::get_native on a queue). From revision 4 of the SYCL Level Zero
// extension, and always with Unified Runtime's v2 adapter, that handle is
// an immediate command list rather than a command queue, and the two must
// be synchronised differently (docs/native.md):
//
//   - command queue → zeCommandQueueSynchronize. Best effort: it covers the
//     command lists already executed on that queue.
//   - immediate command list → zeCommandListHostSynchronize where the
//     loader exports it (≥ 1.10); else a barrier that signals a
//     host-visible event, then zeEventHostSynchronize. The fallback appends
//     to the runtime's list, so it is safe only while the SYCL side is not
//     appending concurrently.
//
// Passing a list where a queue is expected is type confusion that crashes
// inside the driver, so the two have separate, explicitly unsafe entry
// points, and the wrappers are the package's ordinary CommandQueue and
// CommandList types with ownership left to the runtime.

// UnsafeCommandQueue wraps a ze_command_queue_handle_t that a SYCL runtime
// handed out. The caller guarantees raw is a live command queue of this
// context's driver for as long as the wrapper is used; Close only
// forgets it. The result's Wait is zeCommandQueueSynchronize(raw, ∞).
func (c *Context) UnsafeCommandQueue(dev *Device, raw uintptr) (*CommandQueue, error) {
	const op = "levelzero.Context.UnsafeCommandQueue"
	if _, err := c.lock(op); err != nil {
		return nil, err
	}
	defer c.unlock()
	if raw == 0 {
		return nil, errValue(op, "NULL command queue handle")
	}
	q := &CommandQueue{ctx: c, dev: dev}
	q.init(raw, "ze_command_queue_handle_t", nil, true)
	return q, nil
}

// UnsafeImmediateCommandList wraps an immediate ze_command_list_handle_t
// that a SYCL runtime handed out. The caller guarantees raw is a live
// immediate command list of this context (the barrier fallback creates
// its event pool here), on dev (may be nil), for as long as the wrapper is
// used. Wait synchronises it as described above; Close forgets the list
// and destroys the fallback's event pool.
func (c *Context) UnsafeImmediateCommandList(dev *Device, raw uintptr) (*CommandList, error) {
	const op = "levelzero.Context.UnsafeImmediateCommandList"
	if _, err := c.lock(op); err != nil {
		return nil, err
	}
	defer c.unlock()
	if raw == 0 {
		return nil, errValue(op, "NULL command list handle")
	}
	if dev != nil {
		if _, err := c.checkDevice(op, dev, true); err != nil {
			return nil, err
		}
	}
	l := &CommandList{ctx: c, dev: dev, immediate: true}
	l.init(raw, "ze_command_list_handle_t", nil, true)
	return l, nil
}

// Raw returns the native handle, for handing to other native code (a SYCL
// runtime's make_queue, for instance). It is 0 once destroyed.
func (q *CommandQueue) Native() uintptr { return q.h.Raw() }

// Raw returns the native handle; 0 once destroyed.
func (l *CommandList) Native() uintptr { return l.h.Raw() }
