package dlpack_test

import (
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/typestr"
	"github.com/usmbridge/usmbridge/usm"
)

func v(major, minor uint32) *dlpack.Version { return &dlpack.Version{Major: major, Minor: minor} }

func TestExportVersionNegotiation(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 2, 3)
	defer alloc.Free()

	for _, tc := range []struct {
		name      string
		max       *dlpack.Version
		versioned bool
		want      dlpack.Version
	}{
		{"None", nil, false, dlpack.Version{}},
		{"0.8", v(0, 8), false, dlpack.Version{}},
		{"1.0", v(1, 0), true, dlpack.Version{Major: 1, Minor: 0}},
		{"1.1", v(1, 1), true, dlpack.Version{Major: 1, Minor: 1}},
		{"1.9", v(1, 9), true, dlpack.Version{Major: 1, Minor: 2}},
		{"2.0", v(2, 0), true, dlpack.Version{Major: 1, Minor: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: tc.max})
			require.NoError(t, err)
			defer m.Delete()
			assert.Equal(t, tc.versioned, m.Versioned())
			var tn dlabi.Tensor
			if m.Versioned() {
				mv := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
				assert.Equal(t, tc.want, mv.Version)
				assert.Zero(t, mv.Flags)
				assert.NotZero(t, mv.Deleter)
				tn = mv.DLTensor
			} else {
				tn = (*dlabi.ManagedTensor)(cmem.Ptr(m.Pointer())).DLTensor
			}
			assert.Equal(t, a.Data, tn.Data)
			assert.Zero(t, tn.ByteOffset)
			assert.Equal(t, dlpack.Device{Type: dlpack.CPU, ID: 0}, tn.Device)
			assert.EqualValues(t, 2, tn.Ndim)
			assert.Equal(t, dlabi.DataType{Code: 2, Bits: 32, Lanes: 1}, tn.DType)
			require.NotZero(t, tn.Shape)
			require.NotZero(t, tn.Strides, "strides are set for ndim > 0 (DLPack 1.2)")
			assert.Equal(t, []int64{2, 3}, unsafe.Slice((*int64)(cmem.Ptr(tn.Shape)), 2))
			assert.Equal(t, []int64{3, 1}, unsafe.Slice((*int64)(cmem.Ptr(tn.Strides)), 2))
		})
	}
}

func TestExportLayouts(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, err := host.AllocHost(4 * 24)
	require.NoError(t, err)
	defer alloc.Free()
	f := unsafe.Slice((*float32)(unsafe.Pointer(&alloc.Bytes()[0])), 24)
	for i := range f {
		f[i] = float32(i)
	}
	bind := func(shape, strides []int64, offset int64) *usm.Array {
		a, err := reg.Bind(usm.Interface{Shape: shape, Strides: strides, Offset: offset, DType: dtype.Float32,
			Data: alloc.Pointer(), Syclobj: syclobj.MustParseSelector("host"), Version: 1})
		require.NoError(t, err)
		a.Owner = alloc
		return a
	}
	for _, tc := range []struct {
		name          string
		shape, stride []int64
		offset        int64
		wantStrides   []int64 // nil: NULL
		first, last   float32 // element 0 and the last element in index order
		below         int64   // elements below element 0 reached by negative strides
	}{
		{"0-d", []int64{}, nil, 5, nil, 5, 5, 0},
		{"C", []int64{4, 6}, nil, 0, []int64{6, 1}, 0, 23, 0},
		{"F view", []int64{4, 6}, []int64{1, 4}, 0, []int64{1, 4}, 0, 23, 0},
		{"reversed", []int64{24}, []int64{-1}, 23, []int64{-1}, 23, 0, 23},
		{"2-D negative", []int64{2, 3}, []int64{12, -2}, 5, []int64{12, -2}, 5, 13, 4},
		{"broadcast", []int64{3, 4}, []int64{0, 1}, 8, []int64{0, 1}, 8, 11, 0},
		{"size 0", []int64{0, 3}, nil, 0, []int64{3, 1}, 0, 0, 0},
		{"size 0 negative", []int64{0, 3}, []int64{3, -1}, 2, []int64{3, -1}, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := bind(tc.shape, tc.stride, tc.offset)
			m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0)})
			require.NoError(t, err)
			defer m.Delete()
			tn := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer())).DLTensor
			require.EqualValues(t, len(tc.shape), tn.Ndim)
			if len(tc.shape) == 0 {
				assert.Zero(t, tn.Shape, "0-d: shape is NULL")
				assert.Zero(t, tn.Strides, "0-d: strides is NULL")
			} else {
				assert.Equal(t, tc.wantStrides, unsafe.Slice((*int64)(cmem.Ptr(tn.Strides)), tn.Ndim))
			}
			assert.Equal(t, a.ElementPointer(), tn.Data+uintptr(tn.ByteOffset), "data + byte_offset is element 0")
			if tc.below > 0 {
				assert.EqualValues(t, tc.below*4, tn.ByteOffset, "data is the lowest byte touched")
			} else {
				assert.Zero(t, tn.ByteOffset, "without negative strides data is element 0")
			}
			e0 := tn.Data + uintptr(tn.ByteOffset)
			n, _ := elementCount(tc.shape)
			if n > 0 {
				assert.Equal(t, tc.first, readF32(e0, 0))
				var lastOff int64
				st := a.EffectiveStrides()
				for i, s := range tc.shape {
					lastOff += (s - 1) * st[i]
				}
				assert.Equal(t, tc.last, readF32(e0, lastOff))
			} else {
				assert.NotZero(t, tn.Data, "a size-0 export keeps a valid pointer")
			}
		})
	}
}

func TestExportFlagsAndRefusals(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 4)
	defer alloc.Free()

	ro := *a
	ro.ReadOnly = true
	m, err := dlpack.Export(&ro, dlpack.ExportOptions{MaxVersion: v(1, 0)})
	require.NoError(t, err)
	assert.Equal(t, dlabi.FlagReadOnly, (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer())).Flags)
	m.Delete()

	refusals := []struct {
		name string
		arr  func() *usm.Array
		opts dlpack.ExportOptions
		kind error
	}{
		{"legacy read-only", func() *usm.Array { return &ro }, dlpack.ExportOptions{}, usm.ErrBuffer},
		{"big endian", func() *usm.Array { b := *a; b.DType, _ = dtype.FromTypestr(typestr.MustParse(">f4")); return &b }, dlpack.ExportOptions{}, usm.ErrBuffer},
		{"ndim 65", func() *usm.Array {
			b := *a
			b.Shape = make([]int64, 65)
			for i := range b.Shape {
				b.Shape[i] = 1
			}
			b.Shape[0] = 4
			b.Strides = nil
			return &b
		}, dlpack.ExportOptions{}, usm.ErrBuffer},
		{"dl_device oneAPI for a host array", func() *usm.Array { return a }, dlpack.ExportOptions{MaxVersion: v(1, 0), Device: &dlpack.Device{Type: dlpack.OneAPI, ID: 0}}, usm.ErrBuffer},
		{"dl_device CUDA", func() *usm.Array { return a }, dlpack.ExportOptions{MaxVersion: v(1, 0), Device: &dlpack.Device{Type: 2, ID: 0}}, usm.ErrBuffer},
		{"nil array", func() *usm.Array { return nil }, dlpack.ExportOptions{}, usm.ErrValue},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			m, err := dlpack.Export(tc.arr(), tc.opts)
			require.Error(t, err)
			assert.Zero(t, m.Pointer())
			assert.ErrorIs(t, err, tc.kind)
			var de *dlpack.Error
			assert.True(t, errors.As(err, &de))
			assert.Equal(t, "dlpack.Export", de.Op)
		})
	}
	// Own device asked for explicitly is fine.
	m, err = dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0), Device: &dlpack.Device{Type: dlpack.CPU}})
	require.NoError(t, err)
	m.Delete()
	assert.Zero(t, exportledger.Read().LiveExports)
}

func TestExportKeepsMemoryAlive(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 8)
	m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0)})
	require.NoError(t, err)
	n := liveHostAllocations()
	require.NoError(t, alloc.Free(), "the owner may free while an export is alive")
	assert.Equal(t, n, liveHostAllocations(), "memory stays mapped until the deleter runs")
	assert.Equal(t, float32(7), readF32(a.Data, 7))
	m.Delete()
	assert.Equal(t, n-1, liveHostAllocations(), "the deleter released the last reference")
	assert.ErrorIs(t, alloc.Free(), usm.ErrValue, "double free is an error")

	_, err = dlpack.Export(a, dlpack.ExportOptions{})
	assert.ErrorIs(t, err, usm.ErrValue, "exporting freed memory fails")
}

func TestExportCopy(t *testing.T) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 3, 4)
	defer alloc.Free()
	// A reversed, strided view: rows reversed, every other column.
	view, err := reg.Bind(usm.Interface{Shape: []int64{3, 2}, Strides: []int64{-4, 2}, Offset: 8, DType: dtype.Float32,
		Data: a.Data, Syclobj: a.Syclobj, Version: 1})
	require.NoError(t, err)
	view.Owner = alloc

	m, err := dlpack.Export(view, dlpack.ExportOptions{MaxVersion: v(1, 0), Copy: dlpack.CopyAlways})
	require.NoError(t, err)
	mv := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
	assert.Equal(t, dlabi.FlagIsCopied, mv.Flags)
	e0 := mv.DLTensor.Data + uintptr(mv.DLTensor.ByteOffset)
	assert.NotEqual(t, view.ElementPointer(), e0)
	assert.EqualValues(t, 8*4, mv.DLTensor.ByteOffset, "data is the lowest byte of the copy")
	assert.Equal(t, []int64{-4, 2}, unsafe.Slice((*int64)(cmem.Ptr(mv.DLTensor.Strides)), 2))
	for i := int64(0); i < 3; i++ {
		for j := int64(0); j < 2; j++ {
			want := readF32(view.ElementPointer(), -4*i+2*j)
			assert.Equal(t, want, readF32(e0, -4*i+2*j), "[%d,%d]", i, j)
		}
	}
	// The copy is independent of the original.
	*(*float32)(cmem.Ptr(view.ElementPointer())) = -1
	assert.Equal(t, float32(8), readF32(e0, 0))
	n := liveHostAllocations()
	m.Delete()
	assert.Equal(t, n-1, liveHostAllocations(), "the copy is freed by the deleter")
}

// The dl_device=(kDLCPU, 0) paths of a kDLOneAPI array.
func TestExportToHost(t *testing.T) {
	for _, tc := range []struct {
		kind      usm.Kind
		copy      dlpack.CopyMode
		wantErr   bool
		wantCopy  bool
		zeroCopy  bool
		waitsOnce bool
	}{
		{usm.KindShared, dlpack.CopyIfNeeded, false, false, true, true},
		{usm.KindHost, dlpack.CopyNever, false, false, true, true},
		{usm.KindShared, dlpack.CopyAlways, false, true, false, true},
		{usm.KindDevice, dlpack.CopyIfNeeded, false, true, false, true},
		{usm.KindDevice, dlpack.CopyAlways, false, true, false, true},
		{usm.KindDevice, dlpack.CopyNever, true, false, false, false},
	} {
		t.Run(tc.kind.String()+"/"+[]string{"None", "True", "False"}[tc.copy], func(t *testing.T) {
			f := newFakeSYCL()
			reg := usm.NewRegistry(f)
			alloc, err := f.Alloc(0, tc.kind, 16)
			require.NoError(t, err)
			defer alloc.Free()
			copy(cmem.Bytes(alloc.Pointer(), 16), []byte("0123456789abcdef"))
			a, err := reg.NewArray(alloc, dtype.Uint8, []int64{16})
			require.NoError(t, err)
			assert.Equal(t, dlpack.Device{Type: dlpack.OneAPI, ID: 0}, a.DLDevice)
			assert.Equal(t, tc.kind, a.Memory.Kind)

			m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0), Device: &dlpack.Device{Type: dlpack.CPU}, Copy: tc.copy})
			if tc.wantErr {
				require.ErrorIs(t, err, usm.ErrBuffer)
				assert.Contains(t, err.Error(), "without a copy")
				return
			}
			require.NoError(t, err)
			defer m.Delete()
			mv := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
			assert.Equal(t, dlpack.Device{Type: dlpack.CPU, ID: 0}, mv.DLTensor.Device)
			assert.Equal(t, tc.wantCopy, mv.Flags&dlabi.FlagIsCopied != 0)
			assert.Equal(t, tc.zeroCopy, mv.DLTensor.Data == alloc.Pointer())
			assert.Equal(t, "0123456789abcdef", string(cmem.Bytes(mv.DLTensor.Data, 16)))
			assert.EqualValues(t, 1, f.waits.Load(), "the producer's queue is waited on before export")
		})
	}
}

// A copy of host memory that no backend knows (a NumPy array imported
// through DLPack) is made in memory of ExportOptions.HostAllocator; without
// one, or with one whose memory the host cannot write, it is refused and
// nothing is left behind.
func TestExportCopyForeignHost(t *testing.T) {
	buf := cmem.Alloc(64)
	defer cmem.Free(buf, 64)
	for i := range 16 {
		*(*float32)(cmem.Ptr(buf + uintptr(4*i))) = float32(i)
	}
	m, id := foreign{versioned: true, major: 1, data: buf, device: cpuDev(), ndim: 1, dtype: f32,
		shape: []int64{4}, strides: []int64{-3}, byteOffset: 36}.build(t)
	tn, err := dlpack.Import(m, dlpack.ImportOptions{})
	require.NoError(t, err)
	defer func() {
		tn.Release()
		assert.Equal(t, 1, deletesOf(id))
	}()
	require.Nil(t, tn.Backend)
	host := new(cpu.Backend)
	exports, n0 := exportledger.Read().LiveExports, liveHostAllocations()

	for name, al := range map[string]usm.Allocator{"no host allocator": nil, "device memory": deviceOnly{newFakeSYCL()}} {
		_, err := dlpack.Export(&tn.Array, dlpack.ExportOptions{MaxVersion: v(1, 0), Copy: dlpack.CopyAlways, HostAllocator: al})
		require.ErrorIs(t, err, usm.ErrBuffer, name)
		assert.Equal(t, exports, exportledger.Read().LiveExports, name)
		assert.Equal(t, n0, liveHostAllocations(), name)
	}

	c, err := dlpack.Export(&tn.Array, dlpack.ExportOptions{MaxVersion: v(1, 0), Copy: dlpack.CopyAlways, HostAllocator: host})
	require.NoError(t, err)
	mv := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(c.Pointer()))
	assert.Equal(t, dlabi.FlagIsCopied, mv.Flags)
	e0 := mv.DLTensor.Data + uintptr(mv.DLTensor.ByteOffset)
	assert.NotEqual(t, tn.ElementPointer(), e0)
	for i := range int64(4) {
		assert.Equal(t, float32(9-3*i), readF32(e0, -3*i), "[%d]", i)
	}
	assert.Equal(t, usm.KindHost, host.QueryPointer(e0).Kind, "the copy lives in the host allocator's memory")
	c.Delete()
	assert.Equal(t, usm.KindUnknown, host.QueryPointer(e0).Kind, "and is freed with the tensor")
}

// deviceOnly allocates device memory whatever kind it is asked for.
type deviceOnly struct{ f *fakeSYCL }

func (d deviceOnly) Alloc(dev int, _ usm.Kind, size uintptr) (*usm.Allocation, error) {
	return d.f.Alloc(dev, usm.KindDevice, size)
}

// A panic inside our deleter, called by a C consumer, is recovered,
// counted and logged; the tensor is leaked rather than freed from an
// unknown state, and the next call frees it. Without the recovery the
// panic would unwind through C and abort, so the case runs in a child.
func TestDeleterPanicIsCounted(t *testing.T) {
	if testutil.InChild("deleter-panic") {
		host := new(cpu.Backend)
		reg := usm.NewRegistry(host)
		a, alloc := hostArray(t, reg, host, 4)
		defer alloc.Free()
		for _, max := range []*dlpack.Version{nil, v(1, 0)} {
			m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: max})
			require.NoError(t, err)
			deleter := *(*uintptr)(cmem.Ptr(m.Pointer() + deleterOffset(m)))
			before := exportledger.Read()
			boundary.InjectPanic("dlpack deleter")
			ffi.Fn(deleter).Call(m.Pointer()) // a C consumer calls it
			after := exportledger.Read()
			require.Equal(t, before.Panics+1, after.Panics)
			require.Equal(t, before.LiveExports, after.LiveExports, "the panicking call freed nothing")
			ffi.Fn(deleter).Call(m.Pointer())
			require.Equal(t, before.LiveExports-1, exportledger.Read().LiveExports)
		}
		t.Log("deleter panics counted")
		return
	}
	testutil.RunChild(t, "deleter-panic", time.Minute).Expect(t, 0, "deleter panics counted",
		"Go panic in dlpack deleter: injected panic at dlpack deleter")
}

func deleterOffset(m dlpack.Managed) uintptr {
	if m.Versioned() {
		return unsafe.Offsetof(dlabi.ManagedTensorVersioned{}.Deleter)
	}
	return unsafe.Offsetof(dlabi.ManagedTensor{}.Deleter)
}

// An array that Registry.Parse (or Bind) found in memory usmbridge
// allocated is owned by that allocation: its export keeps the memory alive
// after Free, and the memory goes when the export is released. Before,
// the read after Free faulted, so the case runs in a child.
func TestParsedArrayExportOutlivesFree(t *testing.T) {
	if !testutil.InChild("parsed-owner") {
		testutil.RunChild(t, "parsed-owner", time.Minute).Expect(t, 0, "--- PASS: TestParsedArrayExportOutlivesFree")
		return
	}
	for _, tc := range []struct {
		name  string
		alloc func(t *testing.T) (usm.Backend, *usm.Allocation)
	}{
		{"cpu", func(t *testing.T) (usm.Backend, *usm.Allocation) {
			h := new(cpu.Backend)
			al, err := h.AllocHost(64)
			require.NoError(t, err)
			return h, al
		}},
		{"a SYCL backend", func(t *testing.T) (usm.Backend, *usm.Allocation) {
			f := newFakeSYCL()
			al, err := f.Alloc(0, usm.KindShared, 64)
			require.NoError(t, err)
			return f, al
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, alloc := tc.alloc(t)
			reg := usm.NewRegistry(b)
			for i := range 16 {
				*(*float32)(cmem.Ptr(alloc.Pointer() + uintptr(4*i))) = float32(i)
			}
			sel, err := reg.SelectorFor(b, 0)
			require.NoError(t, err)
			m := map[string]any{"data": []any{uint64(alloc.Pointer()), false}, "shape": []any{int64(4)},
				"typestr": "<f4", "version": int64(1), "syclobj": sel.String(), "offset": int64(8)}
			a, err := reg.Parse(m)
			require.NoError(t, err)
			require.Same(t, alloc, a.Owner)

			exp, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0)})
			require.NoError(t, err)
			require.NoError(t, alloc.Free())
			assert.True(t, alloc.Live(), "the export holds the memory")
			tn, err := dlpack.Import(exp, dlpack.ImportOptions{Registry: reg})
			require.NoError(t, err)
			assert.Equal(t, float32(9), readF32(tn.ElementPointer(), 1), "read through the export after Free")
			tn.Release()
			assert.False(t, alloc.Live(), "the memory went with the export")

			// An export asked for after the memory went is refused, not
			// handed out.
			_, err = dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0)})
			assert.ErrorIs(t, err, usm.ErrValue)
			assert.Zero(t, exportledger.Read().LiveExports)
		})
	}
}

// NoSync (stream=-1) skips the wait on the array's queue for a zero-copy
// export and keeps it when Export makes a copy: the copy it hands out must
// be complete, and the consumer cannot order anything against it.
func TestExportNoSync(t *testing.T) {
	for _, tc := range []struct {
		name      string
		noSync    bool
		copy      dlpack.CopyMode
		wantWaits int64
		wantCopy  bool
	}{
		{"None/zero-copy", false, dlpack.CopyIfNeeded, 1, false},
		{"-1/zero-copy", true, dlpack.CopyIfNeeded, 0, false},
		{"-1/copy=False", true, dlpack.CopyNever, 0, false},
		{"-1/copy=True", true, dlpack.CopyAlways, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSYCL()
			reg := usm.NewRegistry(f)
			alloc, err := f.Alloc(0, usm.KindShared, 16)
			require.NoError(t, err)
			defer alloc.Free()
			a, err := reg.NewArray(alloc, dtype.Uint8, []int64{16})
			require.NoError(t, err)
			m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0), Copy: tc.copy, NoSync: tc.noSync})
			require.NoError(t, err)
			defer m.Delete()
			mv := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
			assert.Equal(t, tc.wantCopy, mv.DLTensor.Data != alloc.Pointer())
			assert.Equal(t, tc.wantWaits, f.waits.Load())
		})
	}
}

// liveHostAllocations counts the process's live host-backend allocations
// (cpu.Live); dlpack's tests do not run in parallel, so differences are
// exact.
func liveHostAllocations() int64 { return cpu.Live()["allocations"] }

// orderingQueue is a producer queue that orders consumers on the device.
type orderingQueue struct {
	waits   int
	ordered []usm.Queue
}

func (q *orderingQueue) Wait() error                   { q.waits++; return nil }
func (q *orderingQueue) OrderBefore(c usm.Queue) error { q.ordered = append(q.ordered, c); return nil }

// With the consumer's queue as Stream, a zero-copy export orders that
// queue after the array's on the device instead of waiting on the host; a
// copy still waits, and a queue that cannot order falls back to the wait.
func TestExportStreamOrdersOnDevice(t *testing.T) {
	for _, tc := range []struct {
		name        string
		copy        dlpack.CopyMode
		orderer     bool
		wantWaits   int
		wantOrdered int
	}{
		{"zero-copy", dlpack.CopyIfNeeded, true, 0, 1},
		{"copy=True waits", dlpack.CopyAlways, true, 1, 0},
		{"producer cannot order: host wait", dlpack.CopyIfNeeded, false, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSYCL()
			reg := usm.NewRegistry(f)
			alloc, err := f.Alloc(0, usm.KindShared, 16)
			require.NoError(t, err)
			defer alloc.Free()
			a, err := reg.NewArray(alloc, dtype.Uint8, []int64{16})
			require.NoError(t, err)
			p := &orderingQueue{}
			waits := func() int { return p.waits }
			if tc.orderer {
				a.Queue = p
			} else {
				a.Queue = (*countingQueue)(&f.waits)
				waits = func() int { return int(f.waits.Load()) }
			}
			consumer := &orderingQueue{}
			m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0), Copy: tc.copy, Stream: consumer})
			require.NoError(t, err)
			defer m.Delete()
			assert.Equal(t, tc.wantWaits, waits())
			assert.Len(t, p.ordered, tc.wantOrdered)
			if tc.wantOrdered > 0 {
				assert.Same(t, consumer, p.ordered[0])
			}
		})
	}
}

// Live gives users the ledger's counters under fixed keys, and follows an
// export and an import as they come and go.
func TestLive(t *testing.T) {
	asMap := func(s exportledger.Stats) map[string]int64 {
		return map[string]int64{
			"exports": int64(s.LiveExports), "imports": s.LiveImports,
			"c_blocks": s.LiveCBlocks, "c_bytes": s.LiveCBytes,
			"stray_deletes": s.StrayDeletes, "panics": s.Panics,
		}
	}
	before := dlpack.Live()
	assert.Equal(t, asMap(exportledger.Read()), before)

	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 8)
	defer alloc.Free()
	m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: v(1, 0)})
	require.NoError(t, err)
	exported := dlpack.Live()
	assert.Equal(t, before["exports"]+1, exported["exports"])
	assert.Equal(t, before["c_blocks"]+1, exported["c_blocks"])
	assert.Greater(t, exported["c_bytes"], before["c_bytes"])
	assert.Equal(t, asMap(exportledger.Read()), exported)

	tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
	require.NoError(t, err)
	assert.Equal(t, before["imports"]+1, dlpack.Live()["imports"])
	tn.Release()
	assert.Equal(t, before, dlpack.Live(), "the import released the export; nothing else changed")
}

// An Array's layout is its caller's to change after NewArray; one changed
// to leave its allocation is refused by Export (BufferError, with the
// *usm.ExtentError), by the typed accessors and by the copies, where the
// backend knows the extent: no byte past the allocation reaches a consumer
// or a slice. (Export handed out a tensor over 4000 bytes of a 64-byte
// allocation; CopyToSlice and Values read them.)
func TestLayoutLeavingItsAllocationIsRefused(t *testing.T) {
	host := cpu.Default()
	reg := usm.NewRegistry(host)
	alloc, err := host.AllocHost(64)
	require.NoError(t, err)
	defer alloc.Free()
	whole, err := reg.NewArray(alloc, dtype.Float32, []int64{16})
	require.NoError(t, err)
	for _, c := range []struct {
		name    string
		shape   []int64
		strides []int64
		offset  int64
	}{
		{"longer", []int64{1000}, nil, 0},
		{"backwards past the start", []int64{4}, []int64{-1}, 0},
		{"offset past the end", []int64{1}, nil, 16},
	} {
		a := *whole
		a.Shape, a.Strides, a.Offset = c.shape, c.strides, c.offset
		var ee *usm.ExtentError
		_, err := dlpack.Export(&a, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
		require.ErrorIs(t, err, usm.ErrBuffer, c.name)
		require.ErrorAs(t, err, &ee, c.name)
		require.ErrorAs(t, usm.CopyToSlice(make([]float32, 1000), &a), &ee, c.name)
		require.ErrorAs(t, usm.CopyFromSlice(&a, make([]float32, 1000)), &ee, c.name)
		_, err = usm.Values[float32](&a)
		require.ErrorAs(t, err, &ee, c.name)
		_, err = usm.At[float32](&a, make([]int64, len(c.shape))...)
		require.ErrorAs(t, err, &ee, c.name)
	}
	m, err := dlpack.Export(whole, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
	require.NoError(t, err, "the array as NewArray made it")
	m.Delete()
}
