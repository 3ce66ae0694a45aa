package dlpack_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/usm"
)

var f32 = dlabi.DataType{Code: 2, Bits: 32, Lanes: 1}

func cpuDev() dlpack.Device { return dlpack.Device{Type: dlpack.CPU} }

func TestRoundTrip(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 2, 3, 4)
	defer alloc.Free()
	for _, max := range []*dlpack.Version{nil, v(1, 0)} {
		m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: max})
		require.NoError(t, err)
		tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
		require.NoError(t, err)
		assert.Equal(t, a.Shape, tn.Shape)
		assert.Equal(t, []int64{12, 4, 1}, tn.Strides)
		assert.Equal(t, dtype.Float32, tn.DType)
		assert.Equal(t, a.Data, tn.Data)
		assert.Equal(t, host, tn.Backend, "the registry found the owning backend")
		assert.Equal(t, usm.KindHost, tn.Memory.Kind)
		assert.Equal(t, alloc.Pointer(), tn.Memory.Base)
		assert.Equal(t, "host:host:0", tn.Syclobj.(interface{ String() string }).String())
		// The imported tensor can be exported again; the producer's memory
		// then lives until both are released.
		m2, err := dlpack.Export(&tn.Array, dlpack.ExportOptions{MaxVersion: v(1, 0)})
		require.NoError(t, err)
		tn.Release()
		assert.Equal(t, 2, exportledger.Read().LiveExports, "the first export is held by the re-export")
		m2.Delete()
		assert.Zero(t, exportledger.Read().LiveExports)
		assert.Zero(t, exportledger.Read().LiveImports)
	}
}

func TestImportForeign(t *testing.T) {
	buf := cmem.Alloc(1024)
	defer cmem.Free(buf, 1024)
	for i := range 256 {
		*(*float32)(cmem.Ptr(buf + uintptr(4*i))) = float32(i)
	}
	good := foreign{versioned: true, major: 1, minor: 3, data: buf, device: cpuDev(), ndim: 2, dtype: f32,
		shape: []int64{4, 8}, strides: []int64{8, 1}}

	t.Run("well formed", func(t *testing.T) {
		m, id := good.build(t)
		tn, err := dlpack.Import(m, dlpack.ImportOptions{})
		require.NoError(t, err)
		assert.Equal(t, dlpack.Version{Major: 1, Minor: 3}, tn.Version)
		assert.Equal(t, []int64{4, 8}, tn.Shape)
		assert.Equal(t, usm.KindHost, tn.Memory.Kind)
		assert.False(t, tn.Memory.HasExtent())
		assert.Nil(t, tn.Backend)
		assert.Zero(t, deletesOf(id))
		tn.Release()
		tn.Release() // a second release does nothing
		assert.Equal(t, 1, deletesOf(id), "deleter exactly once")
	})
	t.Run("NULL strides are C-contiguous, byte_offset honoured, flags kept", func(t *testing.T) {
		f := good
		f.strides, f.byteOffset, f.flags = nil, 8, dlabi.FlagReadOnly|dlabi.FlagIsCopied
		m, id := f.build(t)
		tn, err := dlpack.Import(m, dlpack.ImportOptions{})
		require.NoError(t, err)
		assert.Nil(t, tn.Strides)
		assert.Equal(t, []int64{8, 1}, tn.EffectiveStrides())
		assert.Equal(t, buf+8, tn.ElementPointer())
		assert.Equal(t, float32(2), readF32(tn.ElementPointer(), 0))
		assert.True(t, tn.ReadOnly)
		assert.True(t, tn.IsCopied())
		tn.Release()
		assert.Equal(t, 1, deletesOf(id))
	})
	t.Run("legacy, 0-d, NULL shape", func(t *testing.T) {
		f := foreign{data: buf, device: cpuDev(), dtype: dlabi.DataType{Code: 6, Bits: 8, Lanes: 1}}
		m, id := f.build(t)
		tn, err := dlpack.Import(m, dlpack.ImportOptions{})
		require.NoError(t, err)
		assert.Equal(t, dtype.Bool, tn.DType)
		assert.Empty(t, tn.Shape)
		assert.Equal(t, dlpack.Version{}, tn.Version)
		tn.Release()
		assert.Equal(t, 1, deletesOf(id))
	})
	t.Run("size 0 with NULL data", func(t *testing.T) {
		f := good
		f.data, f.shape = 0, []int64{0, 8}
		m, id := f.build(t)
		tn, err := dlpack.Import(m, dlpack.ImportOptions{})
		require.NoError(t, err)
		tn.Release()
		assert.Equal(t, 1, deletesOf(id))
	})
	t.Run("NULL deleter", func(t *testing.T) {
		f := good
		f.noDeleter = true
		m, _ := f.build(t)
		tn, err := dlpack.Import(m, dlpack.ImportOptions{})
		require.NoError(t, err)
		tn.Release()
		freeUndeleted(m)
	})

	hostile := []struct {
		name   string
		mutate func(*foreign)
		kind   error
		msg    string
	}{
		{"major 2", func(f *foreign) { f.major = 2 }, usm.ErrBuffer, "major version 2"},
		{"major 0 in a versioned struct", func(f *foreign) { f.major = 0 }, usm.ErrBuffer, "major version 0"},
		{"negative ndim", func(f *foreign) { f.ndim = -1 }, usm.ErrBuffer, "ndim -1"},
		{"huge ndim", func(f *foreign) { f.ndim = math.MaxInt32 }, usm.ErrBuffer, "ndim 2147483647"},
		{"ndim 65", func(f *foreign) { f.ndim = 65 }, usm.ErrBuffer, "ndim 65"},
		{"NULL shape", func(f *foreign) { f.shape = nil }, usm.ErrBuffer, "shape is NULL"},
		{"negative extent", func(f *foreign) { f.shape = []int64{4, -8} }, usm.ErrBuffer, "shape[1] = -8"},
		{"overflowing extents", func(f *foreign) { f.shape = []int64{1 << 62, 1 << 62} }, usm.ErrOverflow, "overflow"},
		{"overflowing size in bytes", func(f *foreign) { f.shape, f.strides = []int64{1<<61 + 1, 1}, []int64{0, 1} }, usm.ErrOverflow, "size in bytes"},
		{"overflowing strides", func(f *foreign) { f.strides = []int64{math.MaxInt64 / 2, 1} }, usm.ErrOverflow, "overflow"},
		{"window wraps the address space", func(f *foreign) { f.data = ^uintptr(0) - 16 }, usm.ErrBuffer, "wrap"},
		{"negative stride below address 0", func(f *foreign) { f.data, f.strides = 64, []int64{-8, 1} }, usm.ErrBuffer, "wrap"},
		{"byte_offset overflow", func(f *foreign) { f.byteOffset = math.MaxUint64 - 4 }, usm.ErrBuffer, "overflow"},
		{"NULL data, non-empty", func(f *foreign) { f.data = 0 }, usm.ErrBuffer, "data is NULL"},
		{"bfloat16 of 32 bits", func(f *foreign) { f.dtype = dlabi.DataType{Code: 4, Bits: 32, Lanes: 1} }, usm.ErrBuffer, "DLPack dtype (code 4, bits 32, lanes 1) is not supported: kDLBfloat comes in 16 bits"},
		{"fp8 of 16 bits", func(f *foreign) { f.dtype = dlabi.DataType{Code: 10, Bits: 16, Lanes: 1} }, usm.ErrBuffer, "kDLFloat8_e4m3fn comes in 8 bits"},
		{"opaque handle", func(f *foreign) { f.dtype = dlabi.DataType{Code: 3, Bits: 64, Lanes: 1} }, usm.ErrBuffer, "kDLOpaqueHandle is not an element type"},
		{"unknown code", func(f *foreign) { f.dtype = dlabi.DataType{Code: 99, Bits: 32, Lanes: 1} }, usm.ErrBuffer, "DLPack dtype (code 99, bits 32, lanes 1) is not supported"},
		{"lanes 4", func(f *foreign) { f.dtype.Lanes = 4 }, usm.ErrBuffer, "DLPack dtype (code 2, bits 32, lanes 4) is not supported: lanes 4"},
		{"fp4 sub-byte", func(f *foreign) { f.dtype = dlabi.DataType{Code: 17, Bits: 4, Lanes: 1} }, usm.ErrBuffer, "kDLFloat4_e2m1fn is a sub-byte type"},
		{"fp4 two per byte", func(f *foreign) { f.dtype = dlabi.DataType{Code: 17, Bits: 4, Lanes: 2} }, usm.ErrBuffer, "kDLFloat4_e2m1fn is a sub-byte type"},
		{"fp6", func(f *foreign) { f.dtype = dlabi.DataType{Code: 15, Bits: 6, Lanes: 1} }, usm.ErrBuffer, "kDLFloat6_e2m3fn is a sub-byte type"},
		{"bool of 16 bits", func(f *foreign) { f.dtype = dlabi.DataType{Code: 6, Bits: 16, Lanes: 1} }, usm.ErrBuffer, "kDLBool comes in 8 bits"},
		{"kDLCPU id 3", func(f *foreign) { f.device.ID = 3 }, usm.ErrBuffer, "device id 3"},
		{"CUDA device", func(f *foreign) { f.device = dlpack.Device{Type: 2} }, usm.ErrBuffer, "unsupported device (kDLCUDA, 0)"},
		{"unknown device type", func(f *foreign) { f.device = dlpack.Device{Type: 77} }, usm.ErrBuffer, "DLDeviceType(77)"},
		{"kDLOneAPI without a registry", func(f *foreign) { f.device = dlpack.Device{Type: dlpack.OneAPI} }, usm.ErrBuffer, "no registry"},
	}
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			f := good
			tc.mutate(&f)
			// Default: Import owns the tensor and calls the deleter on failure.
			m, id := f.build(t)
			tn, err := dlpack.Import(m, dlpack.ImportOptions{})
			require.Error(t, err)
			assert.Nil(t, tn)
			assert.ErrorIs(t, err, tc.kind)
			assert.Equal(t, []error{tc.kind}, kindsOf(err), "exactly one kind")
			assert.Contains(t, err.Error(), tc.msg)
			var de *dlpack.Error
			require.True(t, errors.As(err, &de))
			want := "BufferError" // the array API's for a tensor it cannot take
			if errors.Is(tc.kind, usm.ErrOverflow) {
				want = "OverflowError" // a size beyond int64, as for any shape (docs/python.md)
			}
			assert.Equal(t, want, usm.PythonException(err))
			assert.Equal(t, 1, deletesOf(id), "the deleter runs exactly once on failure")

			// KeepOnError: the caller keeps it (capsule protocol).
			m, id = f.build(t)
			_, err = dlpack.Import(m, dlpack.ImportOptions{KeepOnError: true})
			require.ErrorIs(t, err, tc.kind)
			assert.Zero(t, deletesOf(id), "KeepOnError leaves the deleter to the caller")
			m.Delete()
			assert.Equal(t, 1, deletesOf(id))
		})
	}
	t.Run("NULL managed", func(t *testing.T) {
		_, err := dlpack.Import(dlpack.Managed{}, dlpack.ImportOptions{})
		assert.ErrorIs(t, err, usm.ErrValue)
	})
	assert.Zero(t, exportledger.Read().LiveImports)
}

func TestImportOneAPI(t *testing.T) {
	f := newFakeSYCL()
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host, f) // the fake sorts first: it is global device 0
	alloc, err := f.Alloc(0, usm.KindDevice, 64)
	require.NoError(t, err)
	defer alloc.Free()

	good := foreign{versioned: true, major: 1, data: alloc.Pointer(), device: dlpack.Device{Type: dlpack.OneAPI, ID: 0},
		ndim: 1, dtype: f32, shape: []int64{16}, strides: []int64{1}}
	m, id := good.build(t)
	tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
	require.NoError(t, err)
	assert.Equal(t, usm.Backend(f), tn.Backend)
	assert.Equal(t, usm.KindDevice, tn.Memory.Kind)
	assert.Equal(t, "opencl:gpu:0", tn.Syclobj.(interface{ String() string }).String())
	assert.NotNil(t, tn.Queue)
	tn.Release()
	assert.Equal(t, 1, deletesOf(id))

	for _, tc := range []struct {
		name   string
		mutate func(*foreign)
		msg    string
	}{
		{"pointer not USM of that device", func(f *foreign) { f.data = uintptr(cmem.Alloc(64)) }, "is not a USM allocation"},
		{"device id out of range", func(f *foreign) { f.device.ID = 7 }, "unknown"},
		{"id of the host backend", func(f *foreign) { f.device.ID = 1 }, "unknown"},
		{"window past the allocation", func(f *foreign) { f.shape = []int64{17} }, "outside its allocation"},
		{"window before the allocation", func(f *foreign) { f.byteOffset = 4; f.strides = []int64{-1} }, "outside its allocation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ff := good
			tc.mutate(&ff)
			m, id := ff.build(t)
			_, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
			require.ErrorIs(t, err, usm.ErrBuffer)
			assert.Equal(t, []error{usm.ErrBuffer}, kindsOf(err), "exactly one kind, whatever the cause's")
			assert.Contains(t, err.Error(), tc.msg)
			assert.Equal(t, 1, deletesOf(id))
			if ff.data != good.data {
				cmem.Free(ff.data, 64)
			}
		})
	}
}

// kindsOf lists every error kind err matches.
func kindsOf(err error) []error {
	var ks []error
	for _, k := range errkind.All {
		if errors.Is(err, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// A dlpack.Error whose cause has a kind of its own (an *usm.ExtentError is
// usm.ErrValue) still matches only its own kind; the cause is reachable.
func TestErrorKindIsExactlyOne(t *testing.T) {
	f := newFakeSYCL()
	reg := usm.NewRegistry(f)
	alloc, err := f.Alloc(0, usm.KindDevice, 64)
	require.NoError(t, err)
	defer alloc.Free()
	m, _ := foreign{versioned: true, major: 1, data: alloc.Pointer(), device: dlpack.Device{Type: dlpack.OneAPI},
		ndim: 1, dtype: f32, shape: []int64{17}, strides: []int64{1}}.build(t)
	_, err = dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
	assert.Equal(t, []error{usm.ErrBuffer}, kindsOf(err))
	assert.Equal(t, "BufferError", usm.PythonException(err))
	var ee *usm.ExtentError
	require.True(t, errors.As(err, &ee), "the cause stays reachable with errors.As")
	assert.Equal(t, alloc.Pointer(), ee.Allocation[0])
	var de *dlpack.Error
	require.True(t, errors.As(err, &de))
	assert.Same(t, ee, de.Err)

	// errors.Is still finds a cause that is not a kind.
	sentinel := errors.New("sentinel")
	e := &dlpack.Error{Op: "dlpack.Import", Reason: "x", Err: fmt.Errorf("wrapped: %w", sentinel)}
	assert.ErrorIs(t, e, sentinel)
	assert.Empty(t, kindsOf(e), "a zero Error states no kind, and its cause lends none")
}

func TestDeleterIsIdempotent(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 4)
	defer alloc.Free()
	m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0)})
	require.NoError(t, err)
	before := exportledger.Read().StrayDeletes
	m.Delete()
	m.Delete() // misuse: a second call is detected and ignored
	assert.Equal(t, before+1, exportledger.Read().StrayDeletes)
	assert.Zero(t, exportledger.Read().LiveExports)
}
