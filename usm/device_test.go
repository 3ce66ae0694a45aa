package usm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// bareBackend says nothing of its devices beyond usm.Backend: it
// allocates (so its devices get every kind) and builds nothing.
type bareBackend struct{ poolBackend }

func (*bareBackend) Name() syclobj.Backend { return syclobj.LevelZero }
func (*bareBackend) Devices() []syclobj.Device {
	return []syclobj.Device{{Backend: syclobj.LevelZero, Type: syclobj.GPU, Name: "bare"}}
}

func TestRegistryDevices(t *testing.T) {
	host := new(cpu.Backend)
	bare := &bareBackend{poolBackend{live: map[uintptr]*usm.Allocation{}}}
	reg := usm.NewRegistry(host, bare)
	devs := reg.Devices()
	require.Len(t, devs, 2)
	// Level Zero first: SYCL's order.
	assert.Equal(t, "level_zero:gpu:0", devs[0].Selector.String())
	assert.Equal(t, "bare", devs[0].Name)
	assert.Equal(t, []usm.Kind{usm.KindHost, usm.KindDevice, usm.KindShared}, devs[0].USM)
	assert.False(t, devs[0].OpenCLC || devs[0].SPIRV)
	assert.Equal(t, `level_zero:gpu:0 "bare"`, devs[0].String())

	h := devs[1]
	assert.Equal(t, "host:host:0", h.Selector.String())
	assert.Equal(t, syclobj.Host, h.Backend)
	assert.Equal(t, []usm.Kind{usm.KindHost}, h.USM)
	assert.Equal(t, "usmbridge host", h.Platform)
	q, err := h.Queue()
	require.NoError(t, err)
	require.NotNil(t, q)

	got, err := reg.Device("host")
	require.NoError(t, err)
	assert.Equal(t, h, got)
	got, err = reg.Device("0")
	require.NoError(t, err)
	assert.Equal(t, devs[0], got)

	for _, bad := range []string{"opencl:cpu", "nonsense:gpu", "", "level_zero:gpu:1"} {
		_, err := reg.Device(bad)
		assert.ErrorIs(t, err, usm.ErrValue, bad)
	}
	_, err = usm.Device{}.Queue()
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.Equal(t, "no device", usm.Device{}.String())
}
