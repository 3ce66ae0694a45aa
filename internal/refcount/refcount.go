// Package refcount is the reference count shared by everything in
// usmbridge that keeps foreign or native memory alive (allocations,
// imported DLPack tensors, Python references): once it reaches zero it
// stays there, so a late Retain fails instead of reviving freed memory, and
// an extra Release is ignored instead of freeing twice.
package refcount

import "sync/atomic"

// Count is a reference count; the zero value is dead (use New or Init).
type Count struct{ n atomic.Int64 }

// Init sets the count to one, held by the creator.
func (c *Count) Init() { c.n.Store(1) }

// Retain adds a reference and reports false if the count is already zero.
func (c *Count) Retain() bool {
	for {
		n := c.n.Load()
		if n <= 0 {
			return false
		}
		if c.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference and reports whether it was the last one; the
// caller then frees what the count protects. Releasing a dead count does
// nothing and reports false.
func (c *Count) Release() (last bool) {
	for {
		n := c.n.Load()
		if n <= 0 {
			return false
		}
		if c.n.CompareAndSwap(n, n-1) {
			return n == 1
		}
	}
}

// Live reports whether any reference remains.
func (c *Count) Live() bool { return c.n.Load() > 0 }
