package levelzero

import (
	"testing"

	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
)

// Test-only operations: the package itself never calls them, so they live
// here instead of in the package.

// allocProperties classifies ptr (zeMemGetAllocProperties). Interior
// pointers are accepted; memory the driver does not know is
// MemoryTypeUnknown, not an error. NULL is never USM: it is Unknown
// without asking the driver, whose validation layer would refuse it as a
// NULL pointer.
func (c *Context) allocProperties(ptr uintptr) (zeapi.AllocProperties, error) {
	h, err := c.lock("levelzero.Context.allocProperties")
	if err != nil {
		return zeapi.AllocProperties{}, err
	}
	defer c.unlock()
	if ptr == 0 {
		return zeapi.AllocProperties{}, nil
	}
	p, err := api.MemAllocProperties(h, ptr)
	if err != nil || p.Type == zeapi.MemoryTypeUnknown {
		return zeapi.AllocProperties{}, err
	}
	return p, nil
}

// addressRange returns the allocation containing ptr
// (zeMemGetAddressRange); drivers answer an error for memory they do not
// know (Intel's: ZE_RESULT_ERROR_UNKNOWN).
func (c *Context) addressRange(ptr uintptr) (base, size uintptr, err error) {
	h, err := c.lock("levelzero.Context.addressRange")
	if err != nil {
		return 0, 0, err
	}
	defer c.unlock()
	return api.MemAddressRange(h, ptr)
}

// hostSignal signals the event from the host.
func (e *event) hostSignal() error {
	h, err := e.rlock("levelzero.event.hostSignal")
	if err != nil {
		return err
	}
	defer e.h.RUnlock()
	return api.EventHostSignal(h)
}

// signalled reports whether the event is signalled (zeEventQueryStatus).
func (e *event) signalled() (bool, error) {
	h, err := e.rlock("levelzero.event.signalled")
	if err != nil {
		return false, err
	}
	defer e.h.RUnlock()
	switch s := api.EventQueryStatus(h); s {
	case zeapi.Success:
		return true, nil
	case zeapi.NotReady:
		return false, nil
	default:
		return false, &Error{Op: "zeEventQueryStatus", Status: s}
	}
}

// hostEvent returns a host-visible event, the one of its own pool of ctx
// (a gate a test signals from the host, a launch's event); both are
// closed when tb ends, and must close cleanly.
func hostEvent(tb testing.TB, ctx *Context) *event {
	tb.Helper()
	pool, err := newEventPool(ctx, 1, true)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := pool.close(); err != nil {
			tb.Error(err)
		}
	})
	ev, err := pool.newEvent(0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := ev.close(); err != nil {
			tb.Error(err)
		}
	})
	return ev
}
