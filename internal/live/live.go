// Package live counts the native and C objects usmbridge's packages have
// made and not yet released, for leak checks. Each package that owns such
// objects keeps one Set of named counters and publishes it with a
// package-level function Live() map[string]int64: a program (or test) that
// released everything it made sees only zeros.
package live

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Counter is one count of live objects.
type Counter struct{ n atomic.Int64 }

// Add changes the count by d.
func (c *Counter) Add(d int64) { c.n.Add(d) }

// Load returns the count.
func (c *Counter) Load() int64 { return c.n.Load() }

// Set is a package's counters, by name.
type Set struct {
	pkg      string
	names    []string
	counters []*Counter
}

var (
	mu   sync.Mutex
	sets []*Set
)

// NewSet makes the counters of package pkg, one per name, and registers
// them for All.
func NewSet(pkg string, names ...string) *Set {
	s := &Set{pkg: pkg, names: names}
	for range names {
		s.counters = append(s.counters, new(Counter))
	}
	mu.Lock()
	sets = append(sets, s)
	mu.Unlock()
	return s
}

// Counter returns the counter called name; it panics on a name NewSet was
// not given, which is a programming error.
func (s *Set) Counter(name string) *Counter {
	for i, n := range s.names {
		if n == name {
			return s.counters[i]
		}
	}
	panic("live: " + s.pkg + " has no counter " + name)
}

// Snapshot returns every count by name.
func (s *Set) Snapshot() map[string]int64 {
	m := make(map[string]int64, len(s.names))
	for i, n := range s.names {
		m[n] = s.counters[i].Load()
	}
	return m
}

// All returns the counts of every registered package, keyed "pkg.name".
func All() map[string]int64 {
	mu.Lock()
	ss := append([]*Set(nil), sets...)
	mu.Unlock()
	m := map[string]int64{}
	for _, s := range ss {
		for n, v := range s.Snapshot() {
			m[s.pkg+"."+n] = v
		}
	}
	return m
}

// Leaks returns the non-zero entries of counts.
func Leaks(counts map[string]int64) map[string]int64 {
	m := maps.Clone(counts)
	maps.DeleteFunc(m, func(_ string, v int64) bool { return v == 0 })
	return m
}
