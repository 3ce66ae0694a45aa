package opencl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// The registry's Device values tell PoCL's CPU device from Intel's, both
// "opencl:cpu": by platform, by memory (PoCL's is fine-grain SVM, Intel's
// the USM extension) and by what programs build from (PoCL 3.1 takes no
// SPIR-V). A selector gives back the device it names.
func TestDescribeDevice(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		reg := usm.NewRegistry(r.b)
		devs := reg.Devices()
		require.Len(t, devs, len(r.b.Devices()))
		sel, err := reg.SelectorFor(r.b, r.local)
		require.NoError(t, err)
		var d usm.Device
		for _, x := range devs {
			if x.Selector.String() == sel.String() {
				d = x
			}
		}
		assert.Equal(t, syclobj.OpenCL, d.Backend)
		assert.Equal(t, syclobj.CPU, d.Type)
		assert.Equal(t, r.dev.info.name, d.Name)
		assert.Equal(t, r.platform, d.Platform)
		assert.NotEmpty(t, d.Vendor)
		assert.NotEmpty(t, d.Driver)
		assert.True(t, d.OpenCLC)
		assert.Contains(t, d.String(), r.platform)
		switch r.mem {
		case svmMemory:
			assert.True(t, d.SVM)
			assert.False(t, d.SPIRV, "PoCL 3.1 builds no SPIR-V")
			assert.Equal(t, []usm.Kind{usm.KindHost, usm.KindDevice, usm.KindShared}, d.USM)
		case usmMemory:
			assert.False(t, d.SVM)
			assert.True(t, d.SPIRV)
			assert.Equal(t, []usm.Kind{usm.KindHost, usm.KindDevice, usm.KindShared}, d.USM)
		}

		back, err := reg.Device(sel.String())
		require.NoError(t, err)
		assert.Equal(t, d, back)
		q, err := back.Queue()
		require.NoError(t, err)
		assert.Same(t, r.q, q)
	})
}
