package evtable

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/live"
)

func TestPutTakeOnce(t *testing.T) {
	set := live.NewSet("evtabletest", "events")
	tb := New[int](set.Counter("events"))
	id := tb.Put(7)
	require.NotZero(t, id)
	assert.EqualValues(t, 1, set.Snapshot()["events"])
	h, ok := tb.Use(id)
	require.True(t, ok)
	assert.Equal(t, 7, h)
	_, rel := tb.Done(id)
	assert.False(t, rel, "a live event is not released by its waiter")

	h, rel = tb.Take(id)
	assert.True(t, rel)
	assert.Equal(t, 7, h)
	_, rel = tb.Take(id)
	assert.False(t, rel, "a second Take finds nothing")
	_, ok = tb.Use(id)
	assert.False(t, ok)
	assert.Zero(t, set.Snapshot()["events"])

	// The slot is reused under a new generation: the old id stays dead.
	id2 := tb.Put(8)
	assert.Equal(t, uint32(id), uint32(id2), "slot reused")
	assert.NotEqual(t, id, id2)
	_, rel = tb.Take(id)
	assert.False(t, rel, "a stale id does not release the slot's new event")
	h, rel = tb.Take(id2)
	assert.True(t, rel)
	assert.Equal(t, 8, h)
	_, ok = tb.Use(0)
	assert.False(t, ok, "0 is never an id")
	_, ok = tb.Use(1<<32 | 99)
	assert.False(t, ok, "a forged id finds nothing")
}

// A Take while a waiter uses the event leaves its release to the waiter.
func TestTakeWhileInUse(t *testing.T) {
	tb := New[string](nil)
	id := tb.Put("ev")
	_, ok := tb.Use(id)
	require.True(t, ok)
	_, ok = tb.Use(id)
	require.True(t, ok)
	_, rel := tb.Take(id)
	assert.False(t, rel)
	assert.Zero(t, tb.Live())
	_, rel = tb.Done(id)
	assert.False(t, rel, "one waiter left")
	h, rel := tb.Done(id)
	assert.True(t, rel, "the last waiter releases")
	assert.Equal(t, "ev", h)
	_, rel = tb.Done(id)
	assert.False(t, rel)
	id2 := tb.Put("next")
	assert.Equal(t, uint32(id), uint32(id2))
}
