package evtable

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// src and ev stand for usm.EventSource and usm.Event: a source that
// counts its waits (and may fail them), an event that names it.
type src struct {
	waits int
	fail  error
}

func (s *src) wait() error { s.waits++; return s.fail }

type ev struct {
	s  *src
	id uint64
}

func (e ev) Source() (*src, uint64) { return e.s, e.id }
func (e ev) Wait() error            { return e.s.wait() }

// Follow waits on the host for another source's events, in order, and
// hands the table's own to own, pinned until Unpin.
func TestFollow(t *testing.T) {
	own, other := &src{}, &src{}
	tb := New[string](nil)
	a, b := tb.Put("a"), tb.Put("b")
	var pins Pins
	var got []string
	var order []int
	err := Follow(tb, own, []ev{{own, a}, {other, 9}, {own, b}}, &pins, "op", func(i int, h string) error {
		got, order = append(got, h), append(order, i)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got)
	assert.Equal(t, []int{0, 2}, order, "own gets each event's index in after")
	assert.Equal(t, 1, other.waits, "another source's event is waited for on the host")
	assert.Zero(t, own.waits)
	assert.Equal(t, Pins{a, b}, pins)

	// Released while pinned: the launch hands it back at Unpin.
	_, rel := tb.Take(a)
	assert.False(t, rel, "pinned")
	var released []string
	tb.Unpin(&pins, func(h string) { released = append(released, h) })
	assert.Equal(t, []string{"a"}, released)
	assert.Empty(t, pins)
	assert.Equal(t, 1, tb.Live(), "b stays the caller's")
}

func TestFollowRefusals(t *testing.T) {
	own, other := &src{}, &src{fail: errors.New("lost device")}
	tb := New[int](nil)
	id := tb.Put(1)
	var pins Pins
	calls := 0
	count := func(int, int) error { calls++; return nil }

	err := Follow(tb, own, []ev{{own, id}, {other, 3}}, &pins, "the launch", count)
	assert.ErrorIs(t, err, errkind.Value)
	assert.ErrorIs(t, err, other.fail)
	assert.ErrorContains(t, err, "the launch: event 1 of another runtime")
	assert.Equal(t, Pins{id}, pins, "what was pinned before the error stays pinned until Unpin")
	tb.Unpin(&pins, func(int) { t.Fatal("not released") })

	_, rel := tb.Take(id)
	require.True(t, rel)
	err = Follow(tb, own, []ev{{own, id}}, &pins, "the launch", count)
	assert.ErrorIs(t, err, errkind.Value)
	assert.ErrorContains(t, err, "the launch: event 0 was released")
	assert.Empty(t, pins)

	id2 := tb.Put(2)
	bad := errors.New("cannot wait")
	err = Follow(tb, own, []ev{{own, id2}}, &pins, "op", func(int, int) error { return bad })
	assert.ErrorIs(t, err, bad, "own's error as it is")
	assert.Equal(t, Pins{id2}, pins)
	tb.Unpin(&pins, func(int) { t.Fatal("not released") })
	assert.Equal(t, 1, calls)
}

// Following and unpinning allocate nothing once the pins have grown.
func TestFollowAllocatesNothing(t *testing.T) {
	own, other := &src{}, &src{}
	tb := New[int](nil)
	after := []ev{{own, tb.Put(1)}, {other, 5}, {own, tb.Put(2)}}
	var pins Pins
	sum := 0
	follow := func() {
		if err := Follow(tb, own, after, &pins, "op", func(_ int, h int) error { sum += h; return nil }); err != nil {
			t.Fatal(err)
		}
		tb.Unpin(&pins, func(int) {})
	}
	follow()
	assert.Zero(t, testing.AllocsPerRun(100, follow))
}
