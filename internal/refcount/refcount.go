// Package refcount is the reference count shared by everything in
// usmbridge that keeps foreign or native memory alive (allocations,
// imported DLPack tensors, Python references): once it reaches zero it
// stays there, so a late Retain fails instead of reviving freed memory, and
// an extra Release is ignored instead of freeing twice.
package refcount

import "sync/atomic"

// Count is a reference count; the zero value is dead (use Init).
type Count struct {
	_ [0]atomic.Int64 // 64-bit alignment for the atomic operations on n, on every platform
	n int64
}

// Init sets the count to one, held by the creator, before the value is
// shared with any other goroutine: so a plain store, where an atomic one
// would be a full barrier on every import of a tensor.
func (c *Count) Init() { c.n = 1 }

// Retain adds a reference and reports false if the count is already zero.
func (c *Count) Retain() bool {
	for {
		n := atomic.LoadInt64(&c.n)
		if n <= 0 {
			return false
		}
		if atomic.CompareAndSwapInt64(&c.n, n, n+1) {
			return true
		}
	}
}

// Release drops a reference and reports whether it was the last one; the
// caller then frees what the count protects. Releasing a dead count does
// nothing and reports false.
func (c *Count) Release() (last bool) {
	for {
		n := atomic.LoadInt64(&c.n)
		if n <= 0 {
			return false
		}
		if atomic.CompareAndSwapInt64(&c.n, n, n-1) {
			return n == 1
		}
	}
}

// Live reports whether any reference remains.
func (c *Count) Live() bool { return atomic.LoadInt64(&c.n) > 0 }
