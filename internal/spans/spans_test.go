package spans

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

type rec struct{ base, size uintptr }

func (r rec) Span() (uintptr, uintptr) { return r.base, r.size }

func TestSet(t *testing.T) {
	var s Set[rec]
	for _, r := range []rec{{300, 50}, {100, 100}, {200, 0}, {500, 1}} {
		s.Insert(r)
	}
	assert.Equal(t, 4, s.Len())
	var order []uintptr
	for r := range s.All() {
		order = append(order, r.base)
	}
	assert.Equal(t, []uintptr{100, 200, 300, 500}, order)
	for p, want := range map[uintptr]uintptr{100: 100, 150: 100, 199: 100, 200: 200, 300: 300, 349: 300, 500: 500} {
		got, ok := s.Find(p)
		assert.True(t, ok, "%d", p)
		assert.Equal(t, want, got.base, "%d", p)
	}
	for _, p := range []uintptr{0, 99, 201, 299, 350, 501, ^uintptr(0)} {
		_, ok := s.Find(p)
		assert.False(t, ok, "%d", p)
	}
	_, ok := s.Remove(150)
	assert.False(t, ok, "only exact bases are removed")
	r, ok := s.Remove(100)
	assert.True(t, ok)
	assert.Equal(t, rec{100, 100}, r)
	_, ok = s.Find(150)
	assert.False(t, ok)
	assert.Equal(t, 3, s.Len())
}

// Holds is the range check of a copy: inside, at the edges, past the end,
// before the start, and sizes that wrap an address.
func TestHolds(t *testing.T) {
	const max = ^uintptr(0)
	for _, c := range []struct {
		base, size, p, n uintptr
		want             bool
	}{
		{0x1000, 64, 0x1000, 64, true},
		{0x1000, 64, 0x1020, 32, true},
		{0x1000, 64, 0x1040, 0, true}, // empty, at the end
		{0x1000, 64, 0x1004, 64, false},
		{0x1000, 64, 0x1041, 0, false},
		{0x1000, 64, 0xfff, 1, false},
		{0x1000, 64, 0x1004, max, false}, // p+n wraps
		{0x1000, 0, 0x1000, 1, false},    // a size-0 allocation holds no byte
		{max - 8, 8, max - 4, 4, true},
	} {
		if got := Holds(c.base, c.size, c.p, c.n); got != c.want {
			t.Errorf("Holds(%#x, %d, %#x, %d) = %v, want %v", c.base, c.size, c.p, c.n, got, c.want)
		}
	}
}
