package opencl

import (
	"sync"
	"sync/atomic"
)

// handle guards one reference to an OpenCL object. Operations hold the
// read lock for the duration of their native call and Release takes the
// write lock, so a Release racing with a call waits for it instead of
// freeing the object under it; a second Release, or any use after
// Release, is an error instead of a crash in the runtime.
type handle struct {
	mu       sync.RWMutex
	id       uintptr
	released bool
}

// acquire returns the native id with the read lock held; call h.mu.RUnlock
// when the native call is done.
func (h *handle) acquire(what string) (uintptr, error) {
	h.mu.RLock()
	if h.released {
		h.mu.RUnlock()
		return 0, errReleased(what)
	}
	return h.id, nil
}

// release marks the handle released and runs fn with the id, once.
func (h *handle) release(what string, fn func(id uintptr) error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return errReleased(what)
	}
	h.released = true
	return fn(h.id)
}

// Counts are the process's live OpenCL objects and allocations made
// through this package, for leak checks.
type Counts struct {
	Contexts, Queues, Events, Allocations int64
}

var live struct {
	contexts, queues, events, allocations atomic.Int64
}

// Live returns the current counts. A program (or test) that released
// everything it made sees all zeros.
func Live() Counts {
	return Counts{
		Contexts:    live.contexts.Load(),
		Queues:      live.queues.Load(),
		Events:      live.events.Load(),
		Allocations: live.allocations.Load(),
	}
}
