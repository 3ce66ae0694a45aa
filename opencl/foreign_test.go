package opencl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/usm"
)

// A cl_context handed over the way SYCL's context::getNative() hands it
// (one reference for the receiver) is adopted, measures the allocations
// made in it elsewhere, and gives its reference back exactly once.
func TestAdoptForeignContext(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		h := r.ctx.Native()
		before, err := r.ctx.ReferenceCount()
		require.NoError(t, err)
		require.NoError(t, opencl.RawRetainContext(h))
		c, err := opencl.UnsafeAdoptContext(h)
		require.NoError(t, err)
		n, _ := r.ctx.ReferenceCount()
		assert.Equal(t, before+1, n, "the adopted reference is the one the sender took")
		assert.Equal(t, r.ctx.Devices(), c.Devices())
		assert.Equal(t, r.ctx.Platform(), c.Platform())
		assert.Equal(t, h, c.Native())

		foreign := cmem.Alloc(64)
		defer cmem.Free(foreign, 64)
		for _, p := range []uintptr{0, foreign} {
			base, size, err := c.AddressRange(p)
			require.NoError(t, err)
			assert.Zero(t, base, "memory the context does not know")
			assert.Zero(t, size)
		}
		const size = 4096
		if r.mem == opencl.USM {
			for _, alloc := range []func() (uintptr, error){
				func() (uintptr, error) { return r.ctx.HostMemAlloc(size, 0) },
				func() (uintptr, error) { return r.ctx.DeviceMemAlloc(r.dev, size, 0) },
				func() (uintptr, error) { return r.ctx.SharedMemAlloc(r.dev, size, 0) },
			} {
				p, err := alloc()
				require.NoError(t, err)
				for _, q := range []uintptr{p, p + 1, p + size - 1} {
					base, n, err := c.AddressRange(q)
					require.NoError(t, err)
					assert.Equal(t, p, base, "base of base+%d", q-p)
					assert.EqualValues(t, size, n)
				}
				require.NoError(t, r.ctx.Free(p))
				base, _, err := c.AddressRange(p)
				require.NoError(t, err)
				assert.Zero(t, base, "a freed allocation is unknown")
			}
		} else {
			// SVM has no query: what another Context of the same cl_context
			// allocated is registered there, not here.
			p, err := r.ctx.SVMAlloc(r.dev, opencl.SVMFineGrainShared, size, 0)
			require.NoError(t, err)
			base, _, err := c.AddressRange(p)
			require.NoError(t, err)
			assert.Zero(t, base)
			base, n, err := r.ctx.AddressRange(p + 8)
			require.NoError(t, err)
			assert.Equal(t, p, base)
			assert.EqualValues(t, size, n)
			require.NoError(t, r.ctx.Free(p))
		}

		require.NoError(t, c.Release())
		n, _ = r.ctx.ReferenceCount()
		assert.Equal(t, before, n, "Release gave the adopted reference back")
		assert.ErrorIs(t, c.Release(), usm.ErrValue, "a second Release never reaches the runtime")
		_, _, err = c.AddressRange(foreign)
		assert.ErrorIs(t, err, usm.ErrValue, "no query through a released context")
	})
	_, err := opencl.UnsafeAdoptContext(0)
	assert.ErrorIs(t, err, usm.ErrValue)
}
