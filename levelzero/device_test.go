package levelzero

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// A Level Zero device says its driver, every kind of USM, and SPIR-V only.
func TestDescribeDevice(t *testing.T) {
	b := newBackend(t)
	reg := usm.NewRegistry(b)
	devs := reg.Devices()
	require.Len(t, devs, wantDevices())
	for i, d := range devs {
		assert.Equal(t, syclobj.LevelZero, d.Backend)
		assert.Equal(t, b.devs[i].dev.props.Name, d.Name)
		assert.Equal(t, "Level Zero driver 0", d.Platform)
		assert.NotEmpty(t, d.Vendor)
		assert.Equal(t, []usm.Kind{usm.KindHost, usm.KindDevice, usm.KindShared}, d.USM)
		assert.True(t, d.SPIRV)
		assert.False(t, d.OpenCLC)
	}
	assert.Equal(t, usm.Device{}, b.DescribeDevice(len(devs)), "no such device")
}

// An array Empty makes is on the device it was asked for, with that
// device's queue, whatever device the driver files host memory under.
func TestEmptyOnDevice(t *testing.T) {
	b := newBackend(t)
	reg := usm.NewRegistry(b)
	devs := reg.Devices()
	last := devs[len(devs)-1]
	for _, kind := range last.USM {
		x, err := usm.Empty[int32](last, kind, 4)
		require.NoError(t, err, kind)
		a, err := x.Array()
		require.NoError(t, err)
		assert.Equal(t, len(devs)-1, a.Device, kind)
		q, err := last.Queue()
		require.NoError(t, err)
		assert.Same(t, q, x.Queue(), kind)
		require.NoError(t, x.CopyFrom([]int32{1, 2, 3, 4}))
		require.NoError(t, x.Close())
	}
}
