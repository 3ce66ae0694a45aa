package ffi

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/live"
)

func TestHandleCloseIsIdempotent(t *testing.T) {
	set := live.NewSet("ffitest", "things")
	var h Handle
	h.Init(0x1234, "thing_t", set.Counter("things"))
	assert.EqualValues(t, 1, set.Snapshot()["things"])
	raw, err := h.RLock("op")
	require.NoError(t, err)
	assert.EqualValues(t, 0x1234, raw)
	h.RUnlock()
	assert.EqualValues(t, 0x1234, h.Raw())

	failing := errors.New("refused")
	assert.Equal(t, failing, h.Close(func(uintptr) error { return failing }))
	assert.EqualValues(t, 0x1234, h.Raw(), "a refused release leaves the handle open")
	assert.EqualValues(t, 1, set.Snapshot()["things"])

	calls := 0
	for range 3 {
		require.NoError(t, h.Close(func(r uintptr) error { calls++; assert.EqualValues(t, 0x1234, r); return nil }))
	}
	assert.Equal(t, 1, calls, "release runs once")
	assert.Zero(t, set.Snapshot()["things"])
	assert.Zero(t, h.Raw())
	_, err = h.RLock("pkg.Thing.Use")
	assert.ErrorIs(t, err, errkind.Value)
	assert.EqualError(t, err, "pkg.Thing.Use: the thing_t is closed")
	_, err = h.Lock("pkg.Thing.Use")
	assert.ErrorIs(t, err, errkind.Value)

	var zero Handle
	_, err = zero.RLock("op")
	assert.ErrorIs(t, err, errkind.Value, "the zero Handle is closed")
	var nilh *Handle
	_, err = nilh.Lock("pkg.Thing.Use")
	assert.ErrorIs(t, err, errkind.Value)
	assert.ErrorContains(t, err, "nil object")
	assert.NoError(t, nilh.Close(nil))
	assert.Zero(t, nilh.Raw())
}

// Close waits for a use in progress, and uses after it fail: the release
// function never runs while a native call holds the handle. Run with -race.
func TestHandleCloseWaitsForUses(t *testing.T) {
	var h Handle
	h.Init(1, "thing_t", nil)
	raw, err := h.RLock("use")
	require.NoError(t, err)
	var inUse, released atomic.Bool
	inUse.Store(true)
	done := make(chan error)
	go func() {
		done <- h.Close(func(uintptr) error {
			if inUse.Load() {
				t.Error("released while in use")
			}
			released.Store(true)
			return nil
		})
	}()
	time.Sleep(10 * time.Millisecond)
	assert.False(t, released.Load())
	assert.EqualValues(t, 1, raw)
	inUse.Store(false)
	h.RUnlock()
	require.NoError(t, <-done)
	assert.True(t, released.Load())

	var g Handle
	g.Init(2, "thing_t", nil)
	var wg sync.WaitGroup
	var releases, uses atomic.Int64
	for i := range 16 {
		wg.Go(func() {
			for range 200 {
				lock, unlock := g.RLock, g.RUnlock
				if i%2 == 0 {
					lock, unlock = g.Lock, g.Unlock
				}
				if _, err := lock("use"); err == nil {
					if releases.Load() != 0 {
						t.Error("use after release")
					}
					uses.Add(1)
					unlock()
				}
				if i == 7 {
					_ = g.Close(func(uintptr) error { releases.Add(1); return nil })
				}
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, releases.Load())
}
