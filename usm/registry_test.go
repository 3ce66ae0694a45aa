package usm_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// hostArray allocates size bytes on a fresh cpu backend and returns a
// registry holding it.
func hostArray(t *testing.T, size uintptr) (*usm.Registry, *cpu.Backend, *usm.Allocation) {
	t.Helper()
	be := new(cpu.Backend)
	alloc, err := be.AllocHost(size)
	require.NoError(t, err)
	t.Cleanup(func() {
		if alloc.Live() {
			_ = alloc.Free()
		}
	})
	return usm.NewRegistry(be), be, alloc
}

func suai(ptr uintptr, so any, shape ...any) map[string]any {
	return map[string]any{
		"data": []any{uint64(ptr), false}, "shape": shape, "typestr": "|f4",
		"version": 1, "syclobj": so,
	}
}

func TestRegistryParseBindsHost(t *testing.T) {
	reg, be, alloc := hostArray(t, 4096)
	for _, so := range []any{"host", "host:host:0", "0", "host:host", "*:host:0", "opencl:cpu,host", syclobj.MustParseSelector("host")} {
		t.Run(fmt.Sprint(so), func(t *testing.T) {
			a, err := reg.Parse(suai(alloc.Pointer(), so, 4, 8))
			require.NoError(t, err)
			assert.Same(t, be, a.Backend.(*cpu.Backend))
			assert.Equal(t, usm.KindHost, a.Memory.Kind)
			assert.Equal(t, alloc.Pointer(), a.Memory.Base)
			assert.Equal(t, uintptr(4096), a.Memory.Size)
			assert.Equal(t, 0, a.Device)
			assert.NotNil(t, a.Queue)
			assert.Same(t, alloc, a.Owner, "the backend's allocation keeps the memory alive")
			assert.Equal(t, dlabi.Device{Type: dlabi.CPU, ID: 0}, a.DLDevice)
			assert.Equal(t, []int64{4, 8}, a.Shape)
			require.NoError(t, a.Wait())
		})
	}
}

func TestRegistryParseUnknownPointer(t *testing.T) {
	reg, be, alloc := hostArray(t, 64)
	var goVar [16]byte
	freed, err := be.AllocHost(64)
	require.NoError(t, err)
	freedPtr := freed.Pointer()
	require.NoError(t, freed.Free())

	for name, ptr := range map[string]uintptr{
		"go variable":      uintptr(unsafe.Pointer(&goVar[0])),
		"freed allocation": freedPtr,
		"past the end":     alloc.Pointer() + 64,
		"NULL":             0,
		"max":              ^uintptr(0),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := reg.Parse(suai(ptr, "host", 1))
			requireKind(t, err, usm.ErrValue)
			var be *usm.BindingError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, ptr, be.Pointer)
			assert.Contains(t, err.Error(), "'data' field is not consistent with 'syclobj' field, the pointer "+fmt.Sprintf("%#x", ptr)+" is not bound to SyclContext derived from dict('syclobj': host)")
		})
	}
	_, err = reg.Parse(suai(0, "host", 1))
	assert.Contains(t, err.Error(), "NULL")
}

func TestRegistryParseSelectorNoMatch(t *testing.T) {
	reg, _, alloc := hostArray(t, 64)
	for _, so := range []string{"opencl:cpu:0", "gpu", "1", "host:host:1"} {
		_, err := reg.Parse(suai(alloc.Pointer(), so, 1))
		requireKind(t, err, usm.ErrValue)
		var be *usm.BindingError
		require.ErrorAs(t, err, &be, so)
		var se *syclobj.SelectorError
		require.ErrorAs(t, err, &se, so)
		assert.Contains(t, err.Error(), "devices seen: 0=host:host", so)
		assert.Contains(t, err.Error(), hostDeviceName, so)
	}
	// No backends at all.
	_, err := usm.NewRegistry().Parse(suai(alloc.Pointer(), "host", 1))
	requireKind(t, err, usm.ErrValue)
	assert.Contains(t, err.Error(), "no devices available")
}

// The binding happens at dpctl's step 6: after data, before shape.
func TestRegistryParseBindingOrder(t *testing.T) {
	reg, _, alloc := hostArray(t, 64)
	m := suai(0, "host")
	delete(m, "shape")
	_, err := reg.Parse(m)
	var be *usm.BindingError
	require.ErrorAs(t, err, &be)

	m = suai(alloc.Pointer(), "host")
	m["data"] = []any{-1, false}
	_, err = reg.Parse(m)
	requireKind(t, err, usm.ErrOverflow)

	m = suai(alloc.Pointer(), "host")
	delete(m, "shape")
	_, err = reg.Parse(m)
	requireKind(t, err, usm.ErrValue)
	require.False(t, errors.As(err, &be))
}

func TestRegistryParseExtent(t *testing.T) {
	reg, _, alloc := hostArray(t, 256) // 64 float32
	p := alloc.Pointer()
	ok := []map[string]any{
		suai(p, "host", 64),
		suai(p, "host", 8, 8),
		suai(p+128, "host", 32),      // interior pointer, up to the end
		suai(p+252, "host"),          // 0-d, last element
		suai(p, "host", 0),           // size 0
		suai(p+255, "host", 0, 1000), // size 0, interior
		with2(suai(p, "host", 4), map[string]any{"offset": 60}),
		with2(suai(p, "host", 4), map[string]any{"strides": []any{-1}, "offset": 3}),
		with2(suai(p, "host", 8, 8), map[string]any{"strides": []any{1, 8}}),
		with2(suai(p, "host", 8, 8), map[string]any{"strides": []any{-8, -1}, "offset": 63}),
		with2(suai(p+128, "host", 32), map[string]any{"offset": -32}),
		with2(suai(p, "host", 1000), map[string]any{"strides": []any{0}}),
	}
	for i, m := range ok {
		a, err := reg.Parse(m)
		require.NoError(t, err, "case %d", i)
		require.NoError(t, a.CheckExtent())
	}

	bad := []struct {
		name   string
		m      map[string]any
		lo, hi uintptr
	}{
		{"one past the end", suai(p, "host", 65), p, p + 260},
		{"shape larger", suai(p, "host", 9, 8), p, p + 288},
		{"interior past the end", suai(p+128, "host", 33), p + 128, p + 260},
		{"offset -1", with2(suai(p, "host", 4), map[string]any{"offset": -1}), p - 4, p + 12},
		{"offset past the end", with2(suai(p, "host", 1), map[string]any{"offset": 64}), p + 256, p + 260},
		{"negative strides below base", with2(suai(p, "host", 4), map[string]any{"strides": []any{-1}}), p - 12, p + 4},
		{"negative strides below base 2-d", with2(suai(p+16, "host", 2, 2), map[string]any{"strides": []any{-4, 1}}), p, p + 24},
		{"strided past the end", with2(suai(p, "host", 33), map[string]any{"strides": []any{2}}), p, p + 260},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "negative strides below base 2-d" {
				// (p+16) - 4·4 = p exactly: allowed, so shift one more.
				tc.m["offset"] = -1
				tc.lo, tc.hi = p-4, p+20
			}
			_, err := reg.Parse(tc.m)
			requireKind(t, err, usm.ErrValue)
			var ee *usm.ExtentError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, [2]uintptr{tc.lo, tc.hi}, ee.Window)
			assert.Equal(t, [2]uintptr{p, p + 256}, ee.Allocation)
			assert.Contains(t, err.Error(), fmt.Sprintf("[%#x, %#x)", tc.lo, tc.hi))
			assert.Contains(t, err.Error(), fmt.Sprintf("[%#x, %#x)", p, p+256))
		})
	}
}

func with2(m map[string]any, changes map[string]any) map[string]any {
	for k, v := range changes {
		m[k] = v
	}
	return m
}

func TestRegistryParseZeroSizeAllocation(t *testing.T) {
	reg, _, alloc := hostArray(t, 0)
	require.NotZero(t, alloc.Pointer())
	a, err := reg.Parse(suai(alloc.Pointer(), "host", 0))
	require.NoError(t, err)
	assert.Equal(t, uintptr(0), a.Memory.Size)
	b, err := a.Bytes()
	require.NoError(t, err)
	assert.Empty(t, b)

	_, err = reg.Parse(suai(alloc.Pointer(), "host", 1))
	var ee *usm.ExtentError
	require.ErrorAs(t, err, &ee)
}

// hostDeviceName is the cpu backend's one device.
const hostDeviceName = "usmbridge host (mmap)"

func TestRegistryRefsWithoutBinder(t *testing.T) {
	reg, _, alloc := hostArray(t, 64)
	for _, so := range []syclobj.Obj{
		syclobj.UnsafeContextRef(0x1000),
		syclobj.UnsafeQueueRef(0x2000),
		syclobj.FromCapsule(func() (syclobj.Obj, error) { return syclobj.UnsafeQueueRef(0x3000), nil }),
	} {
		_, err := reg.Parse(suai(alloc.Pointer(), so, 4))
		requireKind(t, err, usm.ErrValue)
		var be *usm.BindingError
		require.ErrorAs(t, err, &be)
		assert.Contains(t, err.Error(), "dpctl")
	}
	// A capsule source that gives what it cannot read (a *ReadError) is a
	// BindingError too; its own failure (an exception _get_capsule
	// raised) is the parse's error as it is, as dpctl lets it through.
	refused := &usm.ReadError{Kind: usm.ErrValue, Found: "_get_capsule() returned int, not a capsule"}
	_, err := reg.Parse(suai(alloc.Pointer(), syclobj.FromCapsule(func() (syclobj.Obj, error) { return nil, refused }), 4))
	var be *usm.BindingError
	require.ErrorAs(t, err, &be)
	assert.Contains(t, err.Error(), "returned int, not a capsule")
	requireKind(t, err, usm.ErrValue)
	boom := errors.New("boom")
	_, err = reg.Parse(suai(alloc.Pointer(), syclobj.FromCapsule(func() (syclobj.Obj, error) { return nil, boom }), 4))
	assert.Same(t, boom, err)
}

// fakeBackend is a backend with named devices; every pointer in
// [lo, lo+size) belongs to device 0 with the given kind.
type fakeBackend struct {
	name     syclobj.Backend
	devs     []syclobj.Device
	lo, size uintptr
	kind     usm.Kind
	tag      string
}

func (f *fakeBackend) Name() syclobj.Backend     { return f.name }
func (f *fakeBackend) Devices() []syclobj.Device { return f.devs }
func (f *fakeBackend) QueryPointer(p uintptr) usm.PointerInfo {
	if f.size > 0 && p >= f.lo && p < f.lo+f.size {
		return usm.PointerInfo{Kind: f.kind, Device: 0, Base: f.lo, Size: f.size}
	}
	return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
}

func newFake(name syclobj.Backend, tag string, types ...syclobj.DeviceType) *fakeBackend {
	f := &fakeBackend{name: name, tag: tag}
	for i, ty := range types {
		f.devs = append(f.devs, syclobj.Device{Backend: name, Type: ty, Name: fmt.Sprintf("%s-%d", tag, i)})
	}
	return f
}

// refBackend understands context refs: ref 0x1 owns its fake memory, ref
// 0x2 is known but the pointer is not in it, other refs are not its own.
type refBackend struct {
	fakeBackend
	q atomic.Int32
}

type countQueue struct{ n *atomic.Int32 }

func (q countQueue) Wait() error { q.n.Add(1); return nil }

var errNotBound = errkind.New(errkind.Value, "fake.BindRef", "pointer not in context")

func (r *refBackend) BindRef(ref syclobj.Obj, ptr uintptr) (usm.PointerInfo, usm.Queue, bool, error) {
	var raw uintptr
	switch x := ref.(type) {
	case syclobj.ContextRef:
		raw = x.Pointer()
	case syclobj.QueueRef:
		raw = x.Pointer()
	}
	switch raw {
	case 0x1:
		info := r.QueryPointer(ptr)
		if info.Kind == usm.KindUnknown {
			return info, nil, true, errNotBound
		}
		return info, countQueue{&r.q}, true, nil
	case 0x2:
		return usm.PointerInfo{}, nil, true, errNotBound
	}
	return usm.PointerInfo{}, nil, false, nil
}

func TestRegistryRefBinder(t *testing.T) {
	rb := &refBackend{fakeBackend: *newFake(syclobj.LevelZero, "l0", syclobj.GPU)}
	rb.lo, rb.size, rb.kind = 0x7000_0000, 1024, usm.KindDevice
	reg := usm.NewRegistry(new(cpu.Backend), rb)

	for _, so := range []syclobj.Obj{
		syclobj.UnsafeContextRef(0x1),
		syclobj.UnsafeQueueRef(0x1),
		syclobj.FromCapsule(func() (syclobj.Obj, error) { return syclobj.UnsafeContextRef(0x1), nil }),
	} {
		a, err := reg.Parse(suai(0x7000_0010, so, 4))
		require.NoError(t, err)
		assert.Same(t, rb, a.Backend.(*refBackend))
		assert.Equal(t, usm.KindDevice, a.Memory.Kind)
		assert.Equal(t, 0, a.Device)
		assert.Equal(t, dlabi.Device{Type: dlabi.OneAPI, ID: 0}, a.DLDevice)
		before := rb.q.Load()
		m, err := a.SUAI()
		require.NoError(t, err)
		assert.Equal(t, before+1, rb.q.Load(), "SUAI waits on the queue")
		if _, isCap := so.(interface{ GetCapsule() (syclobj.Obj, error) }); !isCap {
			assert.Equal(t, so, m["syclobj"])
		}

		_, err = a.Bytes()
		require.ErrorIs(t, err, usm.ErrBuffer)
	}

	// The backend's error propagates, wrapped in a BindingError.
	for _, c := range []struct {
		ref syclobj.Obj
		ptr uintptr
	}{{syclobj.UnsafeContextRef(0x1), 0x9000_0000}, {syclobj.UnsafeContextRef(0x2), 0x7000_0010}} {
		_, err := reg.Parse(suai(c.ptr, c.ref, 4))
		var be *usm.BindingError
		require.ErrorAs(t, err, &be)
		require.ErrorIs(t, err, errNotBound)
		requireKind(t, err, usm.ErrValue)
	}
	// A ref no backend claims.
	_, err := reg.Parse(suai(0x7000_0010, syclobj.UnsafeContextRef(0x3), 4))
	var be *usm.BindingError
	require.ErrorAs(t, err, &be)
	assert.Contains(t, err.Error(), "dpctl")

	// Extent checks apply to ref-bound arrays as well.
	_, err = reg.Parse(suai(0x7000_0010, syclobj.UnsafeContextRef(0x1), 300))
	var ee *usm.ExtentError
	require.ErrorAs(t, err, &ee)
}

func TestRegistryDeviceOrder(t *testing.T) {
	host := new(cpu.Backend)
	ocl1 := newFake(syclobj.OpenCL, "ocl1", syclobj.CPU, syclobj.GPU)
	l0 := newFake(syclobj.LevelZero, "l0", syclobj.GPU, syclobj.GPU)
	ocl2 := newFake(syclobj.OpenCL, "ocl2", syclobj.GPU)
	reg := usm.NewRegistry(host, ocl1)
	reg.Add(l0)
	reg.Add(ocl2)

	bs := reg.Backends()
	require.Len(t, bs, 4)
	assert.Same(t, l0, bs[0])
	assert.Same(t, ocl1, bs[1])
	assert.Same(t, ocl2, bs[2])
	assert.Same(t, host, bs[3])

	var names []string
	for _, d := range reg.Devices() {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"l0-0", "l0-1", "ocl1-0", "ocl1-1", "ocl2-0", hostDeviceName}, names)

	// Device / GlobalIndex are inverse.
	want := []struct {
		b     usm.Backend
		local int
	}{{l0, 0}, {l0, 1}, {ocl1, 0}, {ocl1, 1}, {ocl2, 0}, {host, 0}}
	for g, w := range want {
		b, local, err := reg.DeviceAt(g)
		require.NoError(t, err)
		assert.Same(t, w.b, b, "global %d", g)
		assert.Equal(t, w.local, local)
		assert.Equal(t, g, reg.GlobalIndex(w.b, w.local))
	}
	for _, g := range []int{-1, 6} {
		_, _, err := reg.DeviceAt(g)
		requireKind(t, err, usm.ErrValue)
	}
	assert.Equal(t, -1, reg.GlobalIndex(l0, 2))
	assert.Equal(t, -1, reg.GlobalIndex(newFake(syclobj.OpenCL, "x", syclobj.CPU), 0))

	// Selectors resolve against the global order.
	for sel, w := range map[string]int{
		"0": 0, "3": 3, "5": 5, "gpu": 0, "gpu:2": 3, "opencl": 2, "opencl:gpu": 3,
		"opencl:gpu:1": 4, "cpu": 2, "host": 5, "level_zero:gpu:1": 1, "ext_oneapi_level_zero:1": 1,
	} {
		b, local, err := reg.Select(syclobj.MustParseSelector(sel))
		require.NoError(t, err, sel)
		assert.Same(t, want[w].b, b, sel)
		assert.Equal(t, want[w].local, local, sel)
	}

	// SelectorFor counts devices of the same backend and type in the global
	// order, so every selector resolves back to its device.
	for _, c := range []struct {
		b     usm.Backend
		local int
		want  string
	}{{l0, 1, "level_zero:gpu:1"}, {ocl1, 0, "opencl:cpu:0"}, {ocl1, 1, "opencl:gpu:0"}, {ocl2, 0, "opencl:gpu:1"}, {host, 0, "host:host:0"}} {
		sel, err := reg.SelectorFor(c.b, c.local)
		require.NoError(t, err)
		assert.Equal(t, c.want, sel.String())
	}
	for _, w := range want {
		sel, err := reg.SelectorFor(w.b, w.local)
		require.NoError(t, err)
		b, local, err := reg.Select(sel)
		require.NoError(t, err)
		assert.Same(t, w.b, b, sel.String())
		assert.Equal(t, w.local, local, sel.String())
	}
	_, err := reg.SelectorFor(ocl2, 1)
	requireKind(t, err, usm.ErrValue)
	_, err = reg.SelectorFor(ocl2, -1)
	requireKind(t, err, usm.ErrValue)

	// DLPack devices: (kDLOneAPI, global index), host is (kDLCPU, 0).
	for g, w := range want[:5] {
		d, err := reg.DLPackDevice(w.b, w.local)
		require.NoError(t, err)
		assert.Equal(t, dlabi.Device{Type: dlabi.OneAPI, ID: int32(g)}, d)
		b, local, err := reg.FromDLPackDevice(d)
		require.NoError(t, err)
		assert.Same(t, w.b, b)
		assert.Equal(t, w.local, local)
	}
	d, err := reg.DLPackDevice(host, 0)
	require.NoError(t, err)
	assert.Equal(t, dlabi.Device{Type: dlabi.CPU, ID: 0}, d)
	d, err = reg.DLPackDevice(nil, -1)
	require.NoError(t, err)
	assert.Equal(t, dlabi.Device{Type: dlabi.CPU, ID: 0}, d)
	_, err = reg.DLPackDevice(newFake(syclobj.OpenCL, "unregistered", syclobj.CPU), 0)
	require.ErrorIs(t, err, usm.ErrBuffer)

	_, _, err = reg.FromDLPackDevice(dlabi.Device{Type: dlabi.OneAPI, ID: 5}) // the host device
	require.ErrorIs(t, err, usm.ErrBuffer)
	_, _, err = reg.FromDLPackDevice(dlabi.Device{Type: dlabi.CPU, ID: 0})
	require.ErrorIs(t, err, usm.ErrBuffer)
	_, _, err = reg.FromDLPackDevice(dlabi.Device{Type: dlabi.OneAPI, ID: 6})
	require.Error(t, err)
	_, _, err = reg.FromDLPackDevice(dlabi.Device{Type: dlabi.OneAPI, ID: -1})
	require.Error(t, err)
}

func TestRegistryLookup(t *testing.T) {
	host := new(cpu.Backend)
	alloc, err := host.AllocHost(128)
	require.NoError(t, err)
	defer alloc.Free()
	l0 := newFake(syclobj.LevelZero, "l0", syclobj.GPU)
	l0.lo, l0.size, l0.kind = 0x5000_0000, 4096, usm.KindShared
	shadow := newFake(syclobj.OpenCL, "shadow", syclobj.CPU)
	shadow.lo, shadow.size, shadow.kind = 0x5000_0000, 16, usm.KindDevice
	reg := usm.NewRegistry(host, shadow, l0)

	b, info := reg.Lookup(alloc.Pointer() + 100)
	assert.Same(t, host, b)
	assert.Equal(t, usm.PointerInfo{Kind: usm.KindHost, Device: 0, Base: alloc.Pointer(), Size: 128}, info)

	// Level Zero ranks before OpenCL: it wins a pointer both claim.
	b, info = reg.Lookup(0x5000_0008)
	assert.Same(t, l0, b)
	assert.Equal(t, usm.KindShared, info.Kind)

	for _, p := range []uintptr{0, 0x10, alloc.Pointer() + 128} {
		b, info = reg.Lookup(p)
		assert.Nil(t, b)
		assert.Equal(t, usm.KindUnknown, info.Kind)
		assert.Equal(t, -1, info.Device)
	}
}

func TestRegistryNewArrayRoundTrip(t *testing.T) {
	reg, be, alloc := hostArray(t, 6*4)
	a, err := reg.NewArray(alloc, dtype.Float32, []int64{2, 3})
	require.NoError(t, err)
	assert.Same(t, alloc, a.Owner.(*usm.Allocation))
	assert.Equal(t, usm.KindHost, a.Memory.Kind)
	assert.Equal(t, dlabi.Device{Type: dlabi.CPU}, a.DLDevice)
	assert.Equal(t, "host:host:0", a.Syclobj.(syclobj.Selector).String())

	// Host memory is not USM: no SUAI for consumers (Python's
	// AttributeError), but Map still writes the Interface for Parse.
	_, err = a.SUAI()
	require.ErrorIs(t, err, usm.ErrAttribute)
	assert.Equal(t, "AttributeError", usm.PythonException(err))
	m, err := a.Map()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"data": []any{uint64(alloc.Pointer()), false}, "shape": []int64{2, 3}, "strides": nil,
		"typestr": "|f4", "offset": int64(0), "version": 1, "syclobj": "host:host:0",
	}, m)

	b, err := reg.Parse(m)
	require.NoError(t, err)
	assert.Equal(t, a.Interface, b.Interface)
	assert.Equal(t, a.Memory, b.Memory)
	assert.Same(t, be, b.Backend.(*cpu.Backend))
	assert.Same(t, alloc, b.Owner, "the parsed view is owned by the same allocation")

	// Writes through one view are seen through the other.
	ab, err := a.Bytes()
	require.NoError(t, err)
	require.Len(t, ab, 24)
	ab[5] = 0x42
	bb, err := b.Bytes()
	require.NoError(t, err)
	assert.Equal(t, byte(0x42), bb[5])

	// Too large for the allocation.
	_, err = reg.NewArray(alloc, dtype.Float32, []int64{7})
	var ee *usm.ExtentError
	require.ErrorAs(t, err, &ee)
	// Bad shape.
	_, err = reg.NewArray(alloc, dtype.Float32, []int64{-1})
	requireKind(t, err, usm.ErrValue)
}

// An array of an element type SUAI has no typestring for (what jax and
// PyTorch exchange through DLPack: bfloat16, float8) is bound, sized and
// read as bytes like any other; its SUAI dict is refused with the
// BufferError that names the DLPack dtype, before any wait.
func TestArrayWithoutTypestr(t *testing.T) {
	reg, _, alloc := hostArray(t, 24)
	for _, c := range []struct {
		dt  dtype.Type
		msg string
	}{
		{dtype.Bfloat16, "DLPack dtype bfloat16 (code 4, 16 bits) has no __sycl_usm_array_interface__ typestr"},
		{dtype.Complex32, "DLPack dtype complex32 (code 5, 32 bits) has no __sycl_usm_array_interface__ typestr"},
		{dtype.Float8E5M2, "DLPack dtype float8_e5m2 (code 12, 8 bits) has no __sycl_usm_array_interface__ typestr"},
	} {
		a, err := reg.NewArray(alloc, c.dt, []int64{2, 3})
		require.NoError(t, err)
		assert.Equal(t, c.dt, a.DType)
		w, err := a.Window()
		require.NoError(t, err)
		assert.Equal(t, int64(6*c.dt.Size()), w.Len())
		_, err = a.Map()
		requireKind(t, err, usm.ErrBuffer)
		assert.EqualError(t, err, c.msg)
		// As a kDLOneAPI array would be asked for its SUAI.
		q := &countingQueue{}
		usmView := *a
		usmView.DLDevice, usmView.Queue = usm.DLDevice{Type: 14}, q
		_, err = usmView.SUAI()
		requireKind(t, err, usm.ErrBuffer)
		assert.EqualError(t, err, c.msg)
		assert.Zero(t, q.waits, "refused before waiting on the queue")
	}
	_, err := reg.NewArray(alloc, dtype.Type{}, []int64{2})
	requireKind(t, err, usm.ErrValue)
}

type countingQueue struct{ waits int }

func (q *countingQueue) Wait() error { q.waits++; return nil }

func TestRegistryBind(t *testing.T) {
	reg, _, alloc := hostArray(t, 64)
	in := usm.Interface{Shape: []int64{4}, DType: dtype.Float64, Data: alloc.Pointer(), Syclobj: syclobj.MustParseSelector("host"), Version: 1}
	a, err := reg.Bind(in)
	require.NoError(t, err)
	assert.Equal(t, usm.KindHost, a.Memory.Kind)
	in.Version = 0
	_, err = reg.Bind(in)
	requireKind(t, err, usm.ErrValue)
	in.Version = 1
	in.Data = 0
	_, err = reg.Bind(in)
	var be *usm.BindingError
	require.ErrorAs(t, err, &be)
	in.Data = alloc.Pointer()
	in.Shape = []int64{9}
	_, err = reg.Bind(in)
	var ee *usm.ExtentError
	require.ErrorAs(t, err, &ee)
}

func TestArrayBytes(t *testing.T) {
	reg, _, alloc := hostArray(t, 64)
	mem := alloc.Bytes()
	require.Len(t, mem, 64)
	for i := range mem {
		mem[i] = byte(i)
	}
	// A strided view with a negative stride: the slice is the window,
	// element 0 at Offset·itemsize − Window.Lo.
	m := suai(alloc.Pointer()+8, "host", 3)
	m["typestr"] = "|u1"
	m["strides"] = []any{-2}
	m["offset"] = 10
	a, err := reg.Parse(m)
	require.NoError(t, err)
	b, err := a.Bytes()
	require.NoError(t, err)
	assert.Equal(t, []byte{14, 15, 16, 17, 18}, b)

	// Device memory is not host-accessible.
	dev := &usm.Array{Interface: a.Interface, Memory: usm.PointerInfo{Kind: usm.KindDevice}}
	_, err = dev.Bytes()
	require.ErrorIs(t, err, usm.ErrBuffer)
	assert.Equal(t, "BufferError", usm.PythonException(err))
	dev.Memory.Kind = usm.KindUnknown
	_, err = dev.Bytes()
	require.ErrorIs(t, err, usm.ErrBuffer)
}

func TestAllocationLifetime(t *testing.T) {
	be := new(cpu.Backend)
	before := cpu.Live() // the process's host allocations; usm's tests are not parallel
	alloc, err := be.AllocHost(100)
	require.NoError(t, err)
	p := alloc.Pointer()
	assert.Equal(t, uintptr(100), alloc.Size())
	assert.Equal(t, usm.KindHost, alloc.Kind())
	assert.Equal(t, 0, alloc.Device())
	assert.Same(t, be, alloc.Backend().(*cpu.Backend))
	assert.True(t, alloc.Live())

	// An export keeps the memory alive after Free.
	require.True(t, alloc.Retain())
	require.NoError(t, alloc.Free())
	assert.True(t, alloc.Live())
	assert.Equal(t, usm.KindHost, be.QueryPointer(p).Kind)
	mem := alloc.Bytes()
	mem[99] = 7 // still mapped
	assert.Equal(t, before["allocations"]+1, cpu.Live()["allocations"])

	err = alloc.Free()
	requireKind(t, err, usm.ErrValue)
	assert.Contains(t, err.Error(), "already freed")

	alloc.Release()
	assert.False(t, alloc.Live())
	assert.False(t, alloc.Retain())
	assert.Equal(t, usm.KindUnknown, be.QueryPointer(p).Kind)
	assert.Equal(t, before, cpu.Live())
	alloc.Release() // over-release is ignored
	assert.False(t, alloc.Live())
	requireKind(t, alloc.Free(), usm.ErrValue)
}

func TestAllocationFreeCalledOnce(t *testing.T) {
	var calls atomic.Int32
	freeErr := errors.New("free failed")
	a := usm.NewAllocation(nil, 0x1000, 8, usm.KindDevice, 2, func() error { calls.Add(1); return freeErr })
	assert.Nil(t, a.Bytes(), "device memory has no host view")
	assert.Equal(t, 2, a.Device())
	require.True(t, a.Retain())
	require.True(t, a.Retain())
	require.NoError(t, a.Free()) // memory still referenced: nothing freed yet
	a.Release()
	assert.Equal(t, int32(0), calls.Load())
	a.Release()
	assert.Equal(t, int32(1), calls.Load())
	a.Release()
	a.Release()
	assert.Equal(t, int32(1), calls.Load())
	assert.False(t, a.Retain())

	// The backend's error comes back from the Free that ran it.
	b := usm.NewAllocation(nil, 0x2000, 8, usm.KindHost, -1, func() error { calls.Add(1); return freeErr })
	require.ErrorIs(t, b.Free(), freeErr)
	assert.Equal(t, int32(2), calls.Load())
}

func TestAllocationConcurrentRelease(t *testing.T) {
	var calls atomic.Int32
	a := usm.NewAllocation(nil, 0x1000, 8, usm.KindHost, -1, func() error { calls.Add(1); return nil })
	const n = 64
	for range n {
		require.True(t, a.Retain())
	}
	done := make(chan struct{})
	for range n {
		go func() { a.Release(); done <- struct{}{} }()
	}
	for range n {
		<-done
	}
	assert.True(t, a.Live())
	require.NoError(t, a.Free())
	assert.Equal(t, int32(1), calls.Load())
	assert.False(t, a.Live())
}

func TestKind(t *testing.T) {
	assert.Equal(t, "unknown", usm.KindUnknown.String())
	assert.Equal(t, "host", usm.KindHost.String())
	assert.Equal(t, "device", usm.KindDevice.String())
	assert.Equal(t, "shared", usm.KindShared.String())
	assert.Equal(t, "Kind(9)", usm.Kind(9).String())
	assert.True(t, usm.KindHost.HostAccessible())
	assert.True(t, usm.KindShared.HostAccessible())
	assert.False(t, usm.KindDevice.HostAccessible())
	assert.False(t, usm.KindUnknown.HostAccessible())
}

func TestPythonException(t *testing.T) {
	for want, err := range map[string]error{
		"ValueError":          usm.ErrValue,
		"TypeError":           usm.ErrType,
		"BufferError":         usm.ErrBuffer,
		"AttributeError":      usm.ErrAttribute,
		"RuntimeError":        usm.ErrNotAvailable,
		"NotImplementedError": usm.ErrNotSupported,
		"OverflowError":       usm.ErrOverflow,
		"MemoryError":         usm.ErrMemory,
	} {
		assert.Equal(t, want, usm.PythonException(err), want)
		assert.Equal(t, want, usm.PythonException(fmt.Errorf("wrapped: %w", err)), want)
	}
	assert.Equal(t, "RuntimeError", usm.PythonException(errors.New("plain")))
	assert.Equal(t, "", usm.PythonException(nil))

	// Structured errors map by their kind.
	_, err := usm.Parse(with(map[string]any{"offset": nil}))
	assert.Equal(t, "TypeError", usm.PythonException(err))
	_, err = usm.Parse(with(map[string]any{"data": []any{-1, false}}))
	assert.Equal(t, "OverflowError", usm.PythonException(err))
	_, err = usm.Parse(with(map[string]any{"typestr": "O"}))
	assert.Equal(t, "ValueError", usm.PythonException(err))
	assert.Equal(t, "ValueError", usm.PythonException(&usm.BindingError{}))
	assert.Equal(t, "ValueError", usm.PythonException(&usm.ExtentError{}))
}

// A filter selector naming another device than the pointer's is refused,
// and the error names both: here two host backends, each its own
// context, so host memory of one is not memory of the other's device.
func TestRegistryParseSelectorOfAnotherDevice(t *testing.T) {
	reg, be, alloc := hostArray(t, 64)
	reg.Add(new(cpu.Backend)) // host:host:1
	a, err := reg.Parse(suai(alloc.Pointer(), "host:host:0", 1))
	require.NoError(t, err)
	assert.Same(t, be, a.Backend.(*cpu.Backend))
	for _, so := range []string{"host:host:1", "host:1", "1"} {
		_, err := reg.Parse(suai(alloc.Pointer(), so, 1))
		requireKind(t, err, usm.ErrValue)
		var bindErr *usm.BindingError
		require.ErrorAs(t, err, &bindErr, so)
		assert.Contains(t, err.Error(), "host USM of host:host:0 \""+hostDeviceName+"\"", so)
		assert.Contains(t, err.Error(), "host:host:1 \""+hostDeviceName+"\"", so)
	}
}

// The shape and strides of a parsed array are its own whatever the number
// of dimensions, those that fit in the Array's block and those that do
// not: they read back as given, neither overlaps the other, growing one
// leaves the other alone, and two parses of one dict share nothing.
func TestRegistryParseShapeAndStridesAreTheArrays(t *testing.T) {
	reg, _, alloc := hostArray(t, 1<<16)
	for _, ndim := range []int{0, 1, 3, 4, 5, 8} {
		for _, strided := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dd/strides=%v", ndim, strided), func(t *testing.T) {
				shape, strides := make([]any, ndim), make([]any, ndim)
				wantShape, wantStrides := make([]int64, ndim), make([]int64, ndim)
				for i := range ndim {
					shape[i], wantShape[i] = 2, 2
					s := int64(1) << (ndim - 1 - i)
					strides[i], wantStrides[i] = s, s
				}
				m := suai(alloc.Pointer(), "host", shape...)
				if strided {
					m["strides"] = strides
				}
				a, err := reg.Parse(m)
				require.NoError(t, err)
				b, err := reg.Parse(m)
				require.NoError(t, err)
				assert.Equal(t, wantShape, a.Shape)
				assert.Len(t, a.Shape, cap(a.Shape), "no room to grow into what follows")
				if !strided {
					assert.Nil(t, a.Strides)
					return
				}
				assert.Equal(t, wantStrides, a.Strides)
				for i := range ndim {
					a.Shape[i] = 7
				}
				assert.Equal(t, wantStrides, a.Strides, "writing the shape leaves the strides alone")
				assert.Equal(t, wantShape, b.Shape, "another parse's shape is its own")
				grown := append(a.Shape, 9)
				grown[0] = 11
				assert.Equal(t, wantStrides, a.Strides, "growing the shape leaves the strides alone")
				assert.Equal(t, wantShape, b.Shape)
			})
		}
	}
}
