package opencl

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

func TestSelectors(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		reg := usm.NewRegistry(cpu.Default(), r.b)
		devs := reg.Devices()
		require.Len(t, devs, len(r.b.Devices())+1)
		assert.Equal(t, syclobj.Host, devs[len(devs)-1].Backend, "host comes after opencl in the global order")

		sel, err := reg.SelectorFor(r.b, r.local)
		require.NoError(t, err)
		b, local, err := reg.Select(sel)
		require.NoError(t, err)
		assert.Equal(t, usm.Backend(r.b), b)
		assert.Equal(t, r.local, local)
		b, local, err = reg.FromDLPackDevice(dlpack.Device{Type: dlpack.OneAPI, ID: int32(r.local)})
		require.NoError(t, err)
		assert.Equal(t, usm.Backend(r.b), b, "OpenCL devices lead the global order here")
		assert.Equal(t, r.local, local)

		s0, err := syclobj.ParseSelector("opencl:cpu:0")
		require.NoError(t, err)
		b, local, err = reg.Select(s0)
		require.NoError(t, err)
		assert.Equal(t, usm.Backend(r.b), b)
		assert.Equal(t, 0, local)

		for _, s := range []string{"opencl:gpu", "opencl:cpu:99", "level_zero:gpu:0"} {
			sel, err := syclobj.ParseSelector(s)
			require.NoError(t, err)
			_, _, err = reg.Select(sel)
			assert.ErrorIs(t, err, usm.ErrValue, s)
			assert.ErrorContains(t, err, s)
			assert.ErrorContains(t, err, r.dev.info.name, "the error lists the devices seen")
		}
	})
}

// f32 fills n float32s 0, 1, 2, ... into b.
func f32(n int) []byte {
	out := make([]byte, 4*n)
	f := unsafe.Slice((*float32)(unsafe.Pointer(&out[0])), n)
	for i := range f {
		f[i] = float32(i)
	}
	return out
}

func TestDLPack(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		reg := usm.NewRegistry(r.b, cpu.Default())
		const n = 1024
		want := f32(n)
		kinds := []usm.Kind{usm.KindHost, usm.KindShared}
		if r.mem == usmMemory {
			kinds = append(kinds, usm.KindDevice)
		}
		for _, kind := range kinds {
			t.Run(kind.String(), func(t *testing.T) {
				alloc, err := r.b.Alloc(r.local, kind, n*4)
				require.NoError(t, err)
				defer alloc.Free()
				require.NoError(t, r.b.Copy(alloc.Pointer(), addr(want), n*4))
				arr, err := reg.NewArray(alloc, dtype.Float32, []int64{32, 32})
				require.NoError(t, err)
				assert.Equal(t, alloc.Kind(), arr.Memory.Kind)
				// OpenCL leads this registry: its global index is the local one.
				assert.Equal(t, dlpack.Device{Type: dlpack.OneAPI, ID: int32(r.local)}, arr.DLDevice)
				suai, err := arr.SUAI()
				require.NoError(t, err)
				parsed, err := reg.Parse(suai)
				require.NoError(t, err)
				assert.Equal(t, alloc.Pointer(), parsed.Data)
				assert.Equal(t, usm.Backend(r.b), parsed.Backend)

				// Own device: kDLOneAPI, zero copy, and back through Import.
				m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
				require.NoError(t, err)
				mv := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
				assert.Equal(t, arr.DLDevice, mv.DLTensor.Device)
				assert.Equal(t, alloc.Pointer(), mv.DLTensor.Data)
				assert.Zero(t, mv.Flags&dlabi.FlagIsCopied)
				tens, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
				require.NoError(t, err)
				assert.Equal(t, usm.Backend(r.b), tens.Backend)
				assert.Equal(t, r.local, tens.Device)
				assert.Equal(t, alloc.Kind(), tens.Memory.Kind)
				assert.Equal(t, alloc.Pointer(), tens.Memory.Base)
				assert.NotNil(t, tens.Queue)
				got := make([]byte, n*4)
				require.NoError(t, r.b.Copy(addr(got), tens.Data, n*4))
				assert.Equal(t, want, got)
				tens.Release()

				// dl_device=(kDLCPU, 0), for each copy mode.
				for _, mode := range []dlpack.CopyMode{dlpack.CopyIfNeeded, dlpack.CopyNever, dlpack.CopyAlways} {
					m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}, Device: &dlpack.Device{Type: dlpack.CPU}, Copy: mode})
					if kind == usm.KindDevice && mode == dlpack.CopyNever {
						assert.ErrorIs(t, err, usm.ErrBuffer, "device USM needs a copy")
						continue
					}
					require.NoError(t, err, "mode %d", mode)
					mv := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
					assert.Equal(t, dlpack.Device{Type: dlpack.CPU}, mv.DLTensor.Device)
					copied := kind == usm.KindDevice || mode == dlpack.CopyAlways
					assert.Equal(t, copied, mv.Flags&dlabi.FlagIsCopied != 0, "IS_COPIED, mode %d", mode)
					assert.Equal(t, !copied, mv.DLTensor.Data == alloc.Pointer(), "zero copy, mode %d", mode)
					assert.Equal(t, want, cmem.Bytes(mv.DLTensor.Data, n*4), "the host reads the data directly")
					tens, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
					require.NoError(t, err)
					raw, err := tens.Bytes()
					require.NoError(t, err)
					assert.Equal(t, want, raw)
					if !copied {
						assert.Equal(t, usm.Backend(r.b), tens.Backend, "a kDLCPU import of OpenCL memory finds its backend")
					}
					tens.Release()
				}
			})
		}
	})
}

// Export waits on the array's queue: a fill still in flight on the device
// queue is complete when the consumer sees the tensor.
func TestExportWaitsForQueue(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		reg := usm.NewRegistry(r.b)
		const size = 64 << 20
		alloc, err := r.b.Alloc(r.local, usm.KindShared, size)
		require.NoError(t, err)
		defer alloc.Free()
		pattern := []byte{0x5a, 0xa5, 0x11, 0x22}
		require.NoError(t, r.q.memFill(alloc.Pointer(), pattern, size, r.mem == svmMemory))
		arr, err := reg.NewArray(alloc, dtype.Uint8, []int64{size})
		require.NoError(t, err)
		m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}, Device: &dlpack.Device{Type: dlpack.CPU}})
		require.NoError(t, err)
		defer m.Delete()
		mv := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
		assert.True(t, bytes.Equal(bytes.Repeat(pattern, size/4), cmem.Bytes(mv.DLTensor.Data, size)))
	})
}

// A filter selector naming another device than the one that allocated
// the pointer is refused, naming both (RATIONALE.md, "A filter selector
// binds memory of its device's context"): here each platform has a
// context of its own, so memory of one runtime's device is not USM of
// the other's, whatever its kind, host USM included.
func TestSelectorOfAnotherDeviceIsRefused(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		reg := usm.NewRegistry(r.b, cpu.Default())
		if len(r.b.Devices()) < 2 {
			t.Fatalf("one OpenCL device (%v): the test needs PoCL and Intel's runtime (scripts/setup-20-opencl.sh)", r.b.Devices())
		}
		own, err := reg.SelectorFor(r.b, r.local)
		require.NoError(t, err)
		for _, kind := range []usm.Kind{usm.KindDevice, usm.KindShared, usm.KindHost} {
			t.Run(kind.String(), func(t *testing.T) {
				alloc, err := r.b.Alloc(r.local, kind, 64)
				if errors.Is(err, usm.ErrNotSupported) {
					t.Skipf("%s: %v", r.dev.info.name, err)
				}
				require.NoError(t, err)
				defer func() { require.NoError(t, alloc.Free()) }()
				in := usm.Interface{Shape: []int64{16}, DType: dtype.Float32, Data: alloc.Pointer(), Version: usm.Version1}

				in.Syclobj = own
				arr, err := reg.Bind(in)
				require.NoError(t, err)
				assert.Equal(t, r.local, arr.Device)

				for other := range r.b.Devices() {
					if other == r.local {
						continue
					}
					sel, err := reg.SelectorFor(r.b, other)
					require.NoError(t, err)
					m, err := arr.Map()
					require.NoError(t, err)
					m["syclobj"] = sel.String()
					arr, err := reg.Parse(m)
					require.ErrorIs(t, err, usm.ErrValue, "bound to %v on device %d", sel, arrDevice(arr))
					var be *usm.BindingError
					require.ErrorAs(t, err, &be)
					assert.ErrorContains(t, err, own.String()+" "+strconv.Quote(r.dev.info.name), "names the pointer's device")
					assert.ErrorContains(t, err, sel.String()+" "+strconv.Quote(r.b.devs[other].dev.info.name), "names the selector's device")
				}
			})
		}
	})
}

// arrDevice is the device of an array that should not exist.
func arrDevice(a *usm.Array) int {
	if a == nil {
		return -1
	}
	return a.Device
}
