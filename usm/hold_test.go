package usm_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// Hold keeps the memory through a Free on another goroutine, and refuses
// once it is gone; an array without an Owner is the caller's to keep.
func TestHold(t *testing.T) {
	host := new(cpu.Backend)
	alloc, err := host.AllocHost(16)
	require.NoError(t, err)
	arr, err := usm.NewRegistry(host).NewArray(alloc, dtype.Float32, []int64{4})
	require.NoError(t, err)

	o, err := arr.Hold()
	require.NoError(t, err)
	require.NoError(t, alloc.Free())
	assert.True(t, alloc.Live(), "held through the Free")
	xs := alloc.Bytes()
	xs[15] = 1 // the memory is still there
	o.Release()
	assert.False(t, alloc.Live())

	_, err = arr.Hold()
	assert.ErrorIs(t, err, usm.ErrClosed)
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.Equal(t, "ValueError", usm.PythonException(err))
	assert.ErrorIs(t, usm.ErrClosed, usm.ErrValue)

	bare := *arr
	bare.Owner = nil
	o, err = bare.Hold()
	assert.NoError(t, err)
	assert.Nil(t, o)
}

// An iterator of Values holds the memory while it runs, and one run after
// the memory went yields nothing.
func TestValuesAfterFree(t *testing.T) {
	host := new(cpu.Backend)
	alloc, err := host.AllocHost(16)
	require.NoError(t, err)
	arr, err := usm.NewRegistry(host).NewArray(alloc, dtype.Float32, []int64{4})
	require.NoError(t, err)
	seq, err := usm.Values[float32](arr)
	require.NoError(t, err)
	n := 0
	for range seq {
		if n == 0 {
			require.NoError(t, alloc.Free()) // during the run: the memory stays until it ends
			assert.True(t, alloc.Live())
		}
		n++
	}
	assert.Equal(t, 4, n)
	assert.False(t, alloc.Live())
	for range seq {
		t.Fatal("an element of freed memory")
	}
}

// Typed access racing a Free on another goroutine either reads the memory
// while it is still there or is refused: never a read of freed memory
// (the race detector and the cpu backend's unmapping would show one).
func TestAccessRacesFree(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	for range 200 {
		alloc, err := host.AllocHost(4096)
		require.NoError(t, err)
		arr, err := reg.NewArray(alloc, dtype.Float32, []int64{1024})
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			_ = alloc.Free()
		}()
		go func() {
			defer wg.Done()
			dst := make([]float32, 1024)
			if err := usm.CopyToSlice(dst, arr); err != nil {
				assert.ErrorIs(t, err, usm.ErrClosed)
			}
		}()
		wg.Wait()
		assert.False(t, alloc.Live())
	}
}
