// Package spans keeps a set of non-overlapping memory allocations sorted by
// base address, for backends that must answer "which allocation holds this
// pointer?" themselves (usmbridge's host backend, OpenCL SVM). Lookups are
// binary searches; interior pointers are found; an allocation of size 0
// still owns its first byte, so its (valid, distinct) pointer is known.
// A Set is not safe for concurrent use: callers hold their own lock.
package spans

import (
	"cmp"
	"iter"
	"slices"
)

// Span is implemented by the records a Set holds.
type Span interface {
	Span() (base, size uintptr)
}

// Set is a set of records sorted by base address. The zero value is empty.
type Set[T Span] struct{ items []T }

func base[T Span](r T) uintptr { b, _ := r.Span(); return b }

func (s *Set[T]) search(p uintptr) (int, bool) {
	return slices.BinarySearchFunc(s.items, p, func(r T, p uintptr) int { return cmp.Compare(base(r), p) })
}

// Insert adds r; its span must not overlap another record's.
func (s *Set[T]) Insert(r T) {
	i, _ := s.search(base(r))
	s.items = slices.Insert(s.items, i, r)
}

// Find returns the record whose span contains p.
func (s *Set[T]) Find(p uintptr) (T, bool) {
	i, found := s.search(p)
	if found {
		return s.items[i], true
	}
	if i > 0 {
		b, size := s.items[i-1].Span()
		if p-b < max(size, 1) {
			return s.items[i-1], true
		}
	}
	var zero T
	return zero, false
}

// Remove deletes and returns the record whose base is exactly b.
func (s *Set[T]) Remove(b uintptr) (T, bool) {
	i, found := s.search(b)
	if !found {
		var zero T
		return zero, false
	}
	r := s.items[i]
	s.items = slices.Delete(s.items, i, i+1)
	return r, true
}

// Len returns the number of records.
func (s *Set[T]) Len() int { return len(s.items) }

// All yields the records in address order.
func (s *Set[T]) All() iter.Seq[T] { return slices.Values(s.items) }

// Holds reports whether the n bytes at p lie inside the allocation
// [base, base+size), without overflow however large n or p are: a backend
// checks a copy against the allocations it knows with it.
func Holds(base, size, p, n uintptr) bool {
	return p >= base && p-base <= size && n <= size-(p-base)
}
