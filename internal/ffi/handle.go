package ffi

import (
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/live"
)

// Handle owns one native handle for a Go object; every native object of
// usmbridge embeds one as a named field. It guarantees that a handle is
// released at most once and never used after, whatever the goroutines do:
//
//   - a use takes the shared lock (RLock) or, for runtimes whose handles
//     must not be used from two threads at once, the exclusive lock (Lock)
//     for the duration of its native call, and gets an error instead of
//     the handle once the object is closed;
//   - Close takes the exclusive lock, so it waits for uses in progress
//     instead of freeing the object under them, runs the release function
//     once, and does nothing on later calls.
//
// The zero Handle is closed. All methods accept a nil *Handle, which acts
// as a closed one, so objects can pass their (possibly nil) receiver on.
type Handle struct {
	mu    sync.RWMutex
	raw   uintptr
	open  bool
	what  string // the C type, for messages: "cl_command_queue"
	count *live.Counter
}

// Init makes h own raw, a handle of C type what. count, if not nil, counts
// the object as live until Close succeeds. Call it once, before h is
// shared.
func (h *Handle) Init(raw uintptr, what string, count *live.Counter) {
	h.raw, h.open, h.what, h.count = raw, true, what, count
	if count != nil {
		count.Add(1)
	}
}

func (h *Handle) errClosed(op string) error {
	if h == nil {
		return errkind.New(errkind.Value, op, "nil object (not obtained from this package)")
	}
	return errkind.New(errkind.Value, op, "the "+h.what+" is closed")
}

// RLock returns the handle with the shared lock held; call RUnlock when
// the native call is done. op names the operation for the error.
func (h *Handle) RLock(op string) (uintptr, error) {
	if h == nil {
		return 0, h.errClosed(op)
	}
	h.mu.RLock()
	if !h.open {
		h.mu.RUnlock()
		return 0, h.errClosed(op)
	}
	return h.raw, nil
}

// RUnlock ends a use begun by a successful RLock.
func (h *Handle) RUnlock() { h.mu.RUnlock() }

// Lock is RLock for exclusive use: no other use runs meanwhile.
func (h *Handle) Lock(op string) (uintptr, error) {
	if h == nil {
		return 0, h.errClosed(op)
	}
	h.mu.Lock()
	if !h.open {
		h.mu.Unlock()
		return 0, h.errClosed(op)
	}
	return h.raw, nil
}

// Unlock ends a use begun by a successful Lock.
func (h *Handle) Unlock() { h.mu.Unlock() }

// Raw returns the handle, or 0 once closed. The value is for handing to
// other native code that the caller keeps from outliving the object.
func (h *Handle) Raw() uintptr {
	if h == nil {
		return 0
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if !h.open {
		return 0
	}
	return h.raw
}

// Close runs release with the handle once, after uses in progress have
// ended. When release fails the handle stays open, so a refused release
// (an object with live children, say) can be retried. Closing a closed or
// nil Handle does nothing and returns nil.
func (h *Handle) Close(release func(raw uintptr) error) error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.open {
		return nil
	}
	if release != nil {
		if err := release(h.raw); err != nil {
			return err
		}
	}
	h.open = false
	if h.count != nil {
		h.count.Add(-1)
	}
	return nil
}
