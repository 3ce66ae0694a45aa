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
