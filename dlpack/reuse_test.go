package dlpack_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
)

// ImportOptions.Reuse: a released Tensor is filled again, with nothing of
// its last import left; a live one is never touched.
func TestImportReuse(t *testing.T) {
	buf := cmem.Alloc(64)
	t.Cleanup(func() { cmem.Free(buf, 64) })
	first := foreign{versioned: true, major: 1, flags: dlabi.FlagReadOnly, data: buf, device: cpuDev(),
		ndim: 2, dtype: f32, shape: []int64{2, 3}, strides: []int64{3, 1}}
	m1, id1 := first.build(t)
	t1, err := dlpack.Import(m1, dlpack.ImportOptions{})
	require.NoError(t, err)

	// Live: Import makes a new Tensor and leaves t1 as it was.
	second := foreign{versioned: true, major: 1, minor: 3, data: buf + 4, device: cpuDev(), ndim: 1, dtype: dlabi.DataType{Code: 4, Bits: 16, Lanes: 1}, shape: []int64{4}}
	m2, id2 := second.build(t)
	t2, err := dlpack.Import(m2, dlpack.ImportOptions{Reuse: t1})
	require.NoError(t, err)
	assert.NotSame(t, t1, t2)
	assert.Equal(t, []int64{2, 3}, t1.Shape)
	assert.True(t, t1.ReadOnly)
	t2.Release()

	// Released: the same Tensor, all of it from the new import.
	t1.Release()
	require.Equal(t, 1, deletesOf(id1))
	m3, id3 := second.build(t)
	t3, err := dlpack.Import(m3, dlpack.ImportOptions{Reuse: t1})
	require.NoError(t, err)
	assert.Same(t, t1, t3)
	assert.Equal(t, []int64{4}, t3.Shape)
	assert.Nil(t, t3.Strides)
	assert.False(t, t3.ReadOnly)
	assert.Equal(t, dlpack.Version{Major: 1, Minor: 3}, t3.Version)
	assert.Equal(t, dtype.Bfloat16, t3.DType)
	assert.Equal(t, buf+4, t3.Data)
	assert.True(t, t3.Retain(), "a reused Tensor is live again")
	t3.Release()
	t3.Release()
	assert.Equal(t, 1, deletesOf(id3), "its own deleter, once")
	assert.Equal(t, 1, deletesOf(id1), "the old producer's deleter is not called again")
	assert.Equal(t, 1, deletesOf(id2))
}
