package dlpack_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/usm"
)

// TestImportWindowInProducersAllocation: every byte an imported tensor
// touches, [data+byte_offset+Lo, data+byte_offset+Hi), must lie in the
// allocation that holds the producer's data pointer, for registry-known
// host memory (kDLCPU) and USM (kDLOneAPI) alike; addresses no process
// memory can have are refused even for memory no backend knows.
func TestImportWindowInProducersAllocation(t *testing.T) {
	host := new(cpu.Backend)
	sycl := newFakeSYCL()
	reg := usm.NewRegistry(host, sycl) // the fake is global device 0
	hostAlloc, err := host.AllocHost(64)
	require.NoError(t, err)
	defer hostAlloc.Free()
	devAlloc, err := sycl.Alloc(0, usm.KindDevice, 64)
	require.NoError(t, err)
	defer devAlloc.Free()

	cases := []struct {
		name       string
		delta      uintptr // data = base + delta
		byteOffset uint64
		shape      []int64
		strides    []int64
		inside     bool
		msg        string
	}{
		{"whole allocation", 0, 0, []int64{16}, []int64{1}, true, ""},
		{"sub-window through byte_offset", 0, 48, []int64{4}, []int64{1}, true, ""},
		{"negative strides inside", 0, 60, []int64{16}, []int64{-1}, true, ""},
		{"interior data, window to the end", 8, 0, []int64{14}, []int64{1}, true, ""},
		{"byte_offset one element past the end", 0, 64, []int64{1}, []int64{1}, false, "outside its allocation"},
		{"interior data, byte_offset past the end", 8, 56, []int64{1}, []int64{1}, false, "outside its allocation"},
		{"one element too many", 0, 0, []int64{17}, []int64{1}, false, "outside its allocation"},
		{"negative strides below the base", 0, 56, []int64{16}, []int64{-1}, false, "outside its allocation"},
		{"byte_offset 2^40", 0, 1 << 40, []int64{1}, []int64{1}, false, ""},
		{"byte_offset 2^63", 0, 1 << 63, []int64{1}, []int64{1}, false, ""},
	}
	for _, dev := range []struct {
		name  string
		base  uintptr
		dldev dlpack.Device
	}{
		{"kDLCPU", hostAlloc.Pointer(), cpuDev()},
		{"kDLOneAPI", devAlloc.Pointer(), dlpack.Device{Type: dlpack.OneAPI, ID: 0}},
	} {
		for _, c := range cases {
			t.Run(dev.name+"/"+c.name, func(t *testing.T) {
				f := foreign{versioned: true, major: 1, data: dev.base + c.delta, device: dev.dldev, ndim: int32(len(c.shape)),
					dtype: f32, shape: c.shape, strides: c.strides, byteOffset: c.byteOffset}
				m, id := f.build(t)
				tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
				if c.inside {
					require.NoError(t, err)
					assert.Equal(t, dev.base, tn.Memory.Base)
					assert.EqualValues(t, 64, tn.Memory.Size)
					tn.Release()
				} else {
					require.ErrorIs(t, err, usm.ErrBuffer)
					assert.Equal(t, "BufferError", usm.PythonException(err))
					assert.Contains(t, err.Error(), c.msg)
				}
				assert.Equal(t, 1, deletesOf(id))
			})
		}
	}

	t.Run("foreign host memory", func(t *testing.T) {
		buf := cmem.Alloc(64)
		defer cmem.Free(buf, 64)
		// A page no allocator hands out: Import never reads through data.
		const lowPage = 4096
		for _, c := range []struct {
			name       string
			data       uintptr
			byteOffset uint64
			inside     bool
			msg        string
		}{
			{"plain", buf, 0, true, ""},
			// Nothing can check foreign memory's extent, but no process
			// memory lies at these addresses.
			{"byte_offset 2^63", buf, 1 << 63, false, "beyond any process memory"},
			{"byte_offset 2^60", buf, 1 << 60, false, "beyond any process memory"},
			// A byte_offset leading into a registered allocation is held
			// to it.
			{"byte_offset into a registered allocation's end", lowPage, uint64(hostAlloc.Pointer() + 60 - lowPage), false, "outside its allocation"},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := foreign{versioned: true, major: 1, data: c.data, device: cpuDev(), ndim: 1, dtype: f32,
					shape: []int64{2}, strides: []int64{1}, byteOffset: c.byteOffset}
				m, id := f.build(t)
				tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
				if c.inside {
					require.NoError(t, err)
					assert.False(t, tn.Memory.HasExtent())
					tn.Release()
				} else {
					require.ErrorIs(t, err, usm.ErrBuffer)
					assert.Contains(t, err.Error(), c.msg)
				}
				assert.Equal(t, 1, deletesOf(id))
			})
		}
	})

	t.Run("kDLCPU tensor in device USM", func(t *testing.T) {
		f := foreign{versioned: true, major: 1, data: devAlloc.Pointer(), device: cpuDev(), ndim: 1, dtype: f32,
			shape: []int64{16}, strides: []int64{1}}
		m, id := f.build(t)
		_, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
		require.ErrorIs(t, err, usm.ErrBuffer)
		assert.Contains(t, err.Error(), "the host cannot read")
		assert.Equal(t, 1, deletesOf(id))
	})
}
