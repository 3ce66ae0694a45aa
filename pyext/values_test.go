package pyext

import (
	"runtime"
	"testing"
	"unsafe"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closing is a value whose Close is counted; big enough to stay out of
// Go's tiny allocator, whose blocks free their objects together.
type closing struct {
	id     int
	closes int
	_      [4]int
}

func (c *closing) Close() error { c.closes++; return nil }

type zeroCloser struct{}

var zeroCloses int

func (*zeroCloser) Close() error { zeroCloses++; return nil }

type unclosed struct{ id int }

func classFor[T any](t testing.TB) *class {
	m := &Module{name: "m"}
	c := NewClass[T](m, "C", "")
	if err := m.err(); err != nil {
		panic(err)
	}
	return c.c
}

// One owner per value (issue 41): a value Go returns while its object
// lives is that object's; once the object went and Close ran, Go returning
// it is refused (where it was wrapped again, and closed a second time), and
// a handle dropped twice closes nothing.
func TestValuesCloseOnce(t *testing.T) {
	c := classFor[closing](t)
	v := &closing{id: 1}
	h, got := values.adopt(v, c)
	require.Equal(t, valueNew, got)
	h2, got := values.adopt(v, c)
	assert.Equal(t, h, h2)
	assert.Equal(t, valueAlive, got)
	require.NoError(t, dropValue(h))
	assert.Equal(t, 1, v.closes)
	_, got = values.adopt(v, c)
	assert.Equal(t, valueClosed, got, "a closed value adopted again")
	require.NoError(t, dropValue(h))
	assert.Equal(t, 1, v.closes)
	w := &closing{id: 2}
	hw, got := values.adopt(w, c)
	assert.Equal(t, valueNew, got)
	require.NoError(t, dropValue(hw))
	runtime.KeepAlive(v)
}

// A value of a type without Close is wrapped again after its object went:
// nothing happened to it.
func TestValuesWithoutClose(t *testing.T) {
	c := classFor[unclosed](t)
	v := &unclosed{id: 1}
	h, _ := values.adopt(v, c)
	require.NoError(t, dropValue(h))
	h, got := values.adopt(v, c)
	assert.Equal(t, valueNew, got)
	require.NoError(t, dropValue(h))
}

// A zero-size type's values share one address: each object is its own,
// and each is closed once (issue 41: two constructions were one object,
// closed once).
func TestValuesZeroSize(t *testing.T) {
	c := classFor[zeroCloser](t)
	before := zeroCloses
	a, b := &zeroCloser{}, &zeroCloser{}
	ha, gotA := values.adopt(a, c)
	hb, gotB := values.adopt(b, c)
	assert.NotEqual(t, ha, hb)
	assert.Equal(t, []adoption{valueNew, valueNew}, []adoption{gotA, gotB})
	require.NoError(t, dropValue(ha))
	hc, got := values.adopt(a, c)
	assert.Equal(t, valueNew, got, "no closed record of a value without identity")
	require.NoError(t, dropValue(hb))
	require.NoError(t, dropValue(hc))
	assert.Equal(t, before+3, zeroCloses)
}

// A closed value's record lasts while Go can reach it, and no longer: a
// new value at a freed one's address is new, and the records of freed
// values are swept as the record map grows, so that it stays within
// twice the records whose values were alive at the last sweep (here at
// most a round's: 8000 records, no more than 2000 at once).
func TestValuesForgetFreed(t *testing.T) {
	c := classFor[closing](t)
	base := values.closedCount()
	for range 8 {
		for i := range 1000 {
			v := &closing{id: i}
			h, got := values.adopt(v, c) // at a freed value's address, often
			require.Equal(t, valueNew, got, "a new value taken for a closed one")
			require.NoError(t, dropValue(h))
		}
		runtime.GC()
		assert.LessOrEqual(t, values.closedCount(), base+2000, "closed records outlived their values")
	}
	values.mu.Lock()
	values.prune()
	values.mu.Unlock()
	assert.LessOrEqual(t, values.closedCount(), base)
}

// A closed record whose value Go freed, not swept yet, does not refuse a
// new value at its address: its weak pointer tells them apart.
func TestValuesStaleRecord(t *testing.T) {
	c := classFor[closing](t)
	w := weak.Make((*byte)(unsafe.Pointer(&closing{})))
	for i := 0; w.Value() != nil; i++ {
		require.Less(t, i, 100, "the value was not freed")
		runtime.GC()
	}
	v := &closing{}
	k := valueKey{c, uintptr(unsafe.Pointer(v))}
	values.mu.Lock()
	values.closed[k] = closedValue{w: w}
	values.mu.Unlock()
	h, got := values.adopt(v, c)
	assert.Equal(t, valueNew, got)
	values.mu.Lock()
	_, kept := values.closed[k]
	values.mu.Unlock()
	assert.False(t, kept, "the stale record was kept")
	require.NoError(t, dropValue(h))
}

// An object's start and end, as the table sees them: adopt, then drop
// (with the closed record of a value of a type with Close).
func BenchmarkValuesAdoptDrop(b *testing.B) {
	for _, cl := range []struct {
		name string
		c    *class
		v    func() any
	}{
		{"closer", classFor[closing](nil), func() any { return &closing{} }},
		{"plain", classFor[unclosed](nil), func() any { return &unclosed{} }},
	} {
		b.Run(cl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h, _ := values.adopt(cl.v(), cl.c)
				if err := dropValue(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
