package programs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// prog stands for a backend's program (or kernel): it counts its Closes
// and may fail them.
type prog struct {
	closed int
	fail   error
}

func (p *prog) Close() error {
	if p.fail != nil {
		return p.fail
	}
	p.closed++
	return nil
}

func TestKey(t *testing.T) {
	spv := []byte{0x03, 0x02, 0x23, 0x07, 0}
	k := LookupKey(7, "", spv, "-O2")
	assert.Equal(t, Key{Dev: 7, IL: true, Src: string(spv), Flags: "-O2"}, k)
	assert.Equal(t, Key{Dev: 7, Src: "kernel", Flags: ""}, LookupKey(7, "kernel", nil, ""))
	assert.NotEqual(t, LookupKey(7, string(spv), nil, ""), LookupKey(7, "", spv, ""), "OpenCL C and SPIR-V of the same bytes are different programs")
	assert.Equal(t, []byte("-O2\x00"), k.CFlags())

	kept := k.Keep()
	assert.Equal(t, k, kept)
	spv[0] = 0xff
	assert.NotEqual(t, string(spv), kept.Src, "a kept key holds a copy")
	assert.Equal(t, string(spv), k.Src, "a lookup key is a view")
}

func TestCacheBuildsOnce(t *testing.T) {
	var c Cache[*prog]
	builds := 0
	build := func(Key) (*prog, error) { builds++; return &prog{}, nil }
	spv := []byte{1, 2, 3, 4}
	p1, err := c.Get("op", LookupKey(1, "", spv, ""), build)
	require.NoError(t, err)
	spv[0] = 9 // the caller's memory changes: the kept key does not
	p2, err := c.Get("op", LookupKey(1, "", []byte{1, 2, 3, 4}, ""), build)
	require.NoError(t, err)
	assert.Same(t, p1, p2)
	assert.Equal(t, 1, builds)
	p3, err := c.Get("op", LookupKey(2, "", []byte{1, 2, 3, 4}, ""), build)
	require.NoError(t, err)
	assert.NotSame(t, p1, p3, "per device")
	_, err = c.Get("op", LookupKey(1, "", []byte{1, 2, 3, 4}, "-g"), build)
	require.NoError(t, err)
	assert.Equal(t, 3, builds, "per options")

	failed := errors.New("no build")
	_, err = c.Get("op", LookupKey(1, "bad", nil, ""), func(Key) (*prog, error) { return nil, failed })
	assert.ErrorIs(t, err, failed)
	_, err = c.Get("op", LookupKey(1, "bad", nil, ""), build)
	require.NoError(t, err, "a failed build is not kept")
	assert.Equal(t, 4, builds)

	c.Drop(LookupKey(2, "", []byte{1, 2, 3, 4}, ""), p1)
	p, err := c.Get("op", LookupKey(2, "", []byte{1, 2, 3, 4}, ""), build)
	require.NoError(t, err)
	assert.Same(t, p3, p, "Drop forgets a key's own program only")
	c.Drop(LookupKey(1, "", []byte{1, 2, 3, 4}, ""), p1)
	p, err = c.Get("op", LookupKey(1, "", []byte{1, 2, 3, 4}, ""), build)
	require.NoError(t, err)
	assert.NotSame(t, p1, p, "built again after Drop")
}

func TestCacheClose(t *testing.T) {
	var c Cache[*prog]
	bad := errors.New("release failed")
	a, b := &prog{}, &prog{fail: bad}
	_, err := c.Get("op", LookupKey(1, "a", nil, ""), func(Key) (*prog, error) { return a, nil })
	require.NoError(t, err)
	_, err = c.Get("op", LookupKey(1, "b", nil, ""), func(Key) (*prog, error) { return b, nil })
	require.NoError(t, err)
	assert.ErrorIs(t, c.Close(), bad)
	assert.Equal(t, 1, a.closed, "every program is closed, whatever fails")
	_, err = c.Get("the caller", LookupKey(1, "c", nil, ""), func(Key) (*prog, error) { return &prog{}, nil })
	assert.ErrorIs(t, err, errkind.Value)
	assert.ErrorContains(t, err, "the caller: the queue's context is closed")

	var none *Cache[*prog]
	assert.NoError(t, none.Close())
	none.Drop(Key{}, a)
}

func TestKernels(t *testing.T) {
	var ks Kernels[*prog]
	var names []string
	create := func(cname []byte) (*prog, error) { names = append(names, string(cname)); return &prog{}, nil }
	k1, err := ks.Get("op", "saxpy", create)
	require.NoError(t, err)
	k2, err := ks.Get("op", "saxpy", create)
	require.NoError(t, err)
	assert.Same(t, k1, k2)
	assert.Equal(t, []string{"saxpy\x00"}, names, "made once, of the NUL-terminated name")
	_, err = ks.Get("the caller", "sa\x00xpy", create)
	assert.ErrorIs(t, err, errkind.Value)
	assert.ErrorContains(t, err, "the caller: the kernel name holds a NUL byte")
	missing := errors.New("no such kernel")
	_, err = ks.Get("op", "nope", func([]byte) (*prog, error) { return nil, missing })
	assert.ErrorIs(t, err, missing)
	assert.Len(t, names, 1)

	bad := errors.New("release failed")
	k3, err := ks.Get("op", "fill", func([]byte) (*prog, error) { return &prog{fail: bad}, nil })
	require.NoError(t, err)
	released := 0
	release := func() error { released++; return nil }
	assert.ErrorIs(t, ks.Close(release), bad)
	assert.Zero(t, released, "the program stays while a kernel does")
	k3.fail = nil
	require.NoError(t, ks.Close(release), "what failed stays, and is closed by the next Close")
	assert.Equal(t, 1, k1.closed)
	assert.Equal(t, 1, k3.closed)
	assert.Equal(t, 1, released, "the program goes after its kernels")
	require.NoError(t, ks.Close(release))
	assert.Equal(t, 1, k1.closed, "once")
	k4, err := ks.Get("op", "saxpy", create)
	require.NoError(t, err)
	assert.NotSame(t, k1, k4, "made again after Close")
}
