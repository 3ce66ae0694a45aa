package dpctl_test

import (
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// A filter selector naming another dpctl device than the one whose
// context holds the pointer is refused, as dpctl refuses it (its queue for
// the selector is in that device's cached context, which does not know the
// pointer), and the error names both devices. Host USM of a context the
// two devices share would be bound to the named one; device and shared USM
// never are (RATIONALE.md, "A filter selector binds memory of its
// device's context").
func TestSelectorOfAnotherDevice(t *testing.T) {
	py, b := loaded(t)
	devs := b.Devices()
	if len(devs) < 2 {
		t.Skipf("dpctl sees one device (%v): no other device to name", devs)
	}
	reg := b.Registry()
	tried := 0
	for i := range devs {
		if !b.HasUSM(i) {
			continue // no USM: nothing to allocate
		}
		own, err := reg.SelectorFor(b, i)
		require.NoError(t, err)
		for _, kind := range []usm.Kind{usm.KindDevice, usm.KindShared, usm.KindHost} {
			alloc, err := b.Alloc(i, kind, 64)
			if isNotSupported(err) {
				continue
			}
			require.NoError(t, err)
			in := usm.Interface{Shape: []int64{16}, DType: dtype.Float32, Data: alloc.Pointer(), Version: usm.Version1, Syclobj: own}
			arr, err := reg.Bind(in)
			require.NoError(t, err)
			assert.Equal(t, i, arr.Device)
			for j := range devs {
				if j == i {
					continue
				}
				tried++
				in.Syclobj, err = reg.SelectorFor(b, j)
				require.NoError(t, err)
				arr, err := reg.Bind(in)
				if kind == usm.KindHost && b.SharesContext(i, j) {
					if assert.NoError(t, err, "host USM of the context %v shares", in.Syclobj) {
						assert.Equal(t, j, arr.Device)
					}
					continue
				}
				var be *usm.BindingError
				if !assert.ErrorAs(t, err, &be, "%s USM of %v named by %v", kind, own, in.Syclobj) {
					continue
				}
				assert.ErrorIs(t, err, usm.ErrValue)
				assert.ErrorContains(t, err, own.String()+" "+strconv.Quote(devs[i].Name))
				assert.ErrorContains(t, err, in.Syclobj.(syclobj.Selector).String()+" "+strconv.Quote(devs[j].Name))
			}
			require.NoError(t, alloc.Free())
		}
	}
	require.NotZero(t, tried, "no USM device to allocate on")

	// The same from Python: the dict of a dpnp array (device USM) with
	// another device's filter string.
	i := -1
	for k := range devs {
		if b.HasUSM(k) {
			i = k
			break
		}
	}
	require.GreaterOrEqual(t, i, 0)
	j := (i + 1) % len(devs)
	own, err := reg.SelectorFor(b, i)
	require.NoError(t, err)
	other, err := reg.SelectorFor(b, j)
	require.NoError(t, err)
	run(t, py, "x_other = dpt.arange(16, dtype='f4', sycl_queue=dpctl.SyclQueue("+strconv.Quote(own.String())+"))\n"+
		"class OtherDevice:\n    __sycl_usm_array_interface__ = dict(x_other.__sycl_usm_array_interface__, syclobj="+strconv.Quote(other.String())+")\n")
	arr, err := asArray(t, py, "OtherDevice()")
	var be *usm.BindingError
	require.ErrorAs(t, err, &be, "bound: %+v", arr)
	assert.ErrorContains(t, err, own.String()+" "+strconv.Quote(devs[i].Name))
	assert.ErrorContains(t, err, other.String()+" "+strconv.Quote(devs[j].Name))
}

// A pinned queue binds as an unpinned one does, for every USM kind: the
// same kind, extent and device, and a queue copy on the same device and
// context; a pointer of no USM of the queue's context is refused either
// way. Arrays bound through the pin share its copy, which outlives Unpin.
func TestPinnedQueueBindsAsUnpinned(t *testing.T) {
	py, b := loaded(t)
	run(t, py, "pin_xs = {k: dpt.arange(16, dtype='f4', sycl_queue=q, usm_type=k) for k in ('device', 'shared', 'host')}")
	ref := syclobj.UnsafeQueueRef(uintptr(evalInt(t, py, "q.addressof_ref()"))) // q keeps the queue alive
	queueDevice := func(q usm.Queue) int {
		dq, ok := q.(*dpctl.Queue)
		require.True(t, ok, "queue %T", q)
		dev := b.API().QueueGetDevice(dq.Ref())
		require.NotZero(t, dev)
		defer b.API().DeviceDelete(dev)
		return b.Position(dev)
	}
	for _, kind := range []string{"device", "shared", "host"} {
		ptr := uintptr(evalInt(t, py, "pin_xs['"+kind+"'].__sycl_usm_array_interface__['data'][0]"))
		require.False(t, b.Pinned(ref.Pointer()))
		missInfo, missQ, ok, err := b.BindRef(ref, ptr)
		require.True(t, ok)
		require.NoError(t, err, kind)
		assert.False(t, b.Pinned(ref.Pointer()), "BindRef alone never pins")

		pin := b.PinQueue(ref)
		require.NotNil(t, pin)
		require.True(t, b.Pinned(ref.Pointer()))
		hitInfo, hitQ, ok, err := b.BindRef(ref, ptr)
		require.True(t, ok)
		require.NoError(t, err, kind)
		assert.Equal(t, missInfo, hitInfo, kind)
		assert.Equal(t, map[string]usm.Kind{"device": usm.KindDevice, "shared": usm.KindShared, "host": usm.KindHost}[kind], hitInfo.Kind)
		assert.True(t, hitInfo.HasExtent(), kind)
		assert.Equal(t, queueDevice(missQ), queueDevice(hitQ), kind)
		assert.Equal(t, missQ.(*dpctl.Queue).IsDefaultContext(), hitQ.(*dpctl.Queue).IsDefaultContext(), kind)
		_, hitQ2, _, err := b.BindRef(ref, ptr)
		require.NoError(t, err)
		assert.Same(t, hitQ, hitQ2, "binds through a pin share its queue copy")

		var goMem [4]float64
		for name, pinned := range map[string]bool{"pinned": true, "unpinned": false} {
			if !pinned {
				pin.Unpin()
			}
			_, _, _, err = b.BindRef(ref, uintptr(unsafePointer(&goMem)))
			assert.ErrorIs(t, err, usm.ErrValue, "%s %s: a Go pointer", kind, name)
			assert.ErrorContains(t, err, "not a USM pointer")
		}
		assert.False(t, b.Pinned(ref.Pointer()))
		require.NoError(t, hitQ.Wait(), "the pin's queue copy lives on with its arrays")
	}
}

// QueryPointer asks a one-device default context's native runtime alone
// (kind, extent, and that device) where it classifies every pointer; what
// it reports is what SYCL's route reports, for every kind of allocation,
// interior pointers, one past the end and memory no context knows.
func TestQueryPointerNativeRouteIsSYCLs(t *testing.T) {
	_, b := loaded(t)
	if b.NativeRoutes() == 0 {
		// Intel's CPU runtime classifies pointers natively: CI has it.
		testutil.Runtime(t, testutil.IntelOpenCL, errkind.New(errkind.NotAvailable, "test", "no default context here is asked natively"))
	}
	tried := 0
	for i := range b.Devices() {
		if !b.HasUSM(i) {
			continue
		}
		for _, kind := range []usm.Kind{usm.KindDevice, usm.KindShared, usm.KindHost} {
			alloc, err := b.Alloc(i, kind, 96)
			if isNotSupported(err) {
				continue
			}
			require.NoError(t, err)
			p := alloc.Pointer()
			for _, off := range []uintptr{0, 1, 40, 95, 96} {
				want := b.QueryPointerSYCL(p + off)
				assert.Equal(t, want, b.QueryPointer(p+off), "%s USM on device %d, +%d", kind, i, off)
				tried++
			}
			require.NoError(t, alloc.Free())
		}
	}
	require.NotZero(t, tried, "no USM allocation made")
	var host [16]byte
	assert.Equal(t, usm.KindUnknown, b.QueryPointer(uintptr(unsafe.Pointer(&host[0]))).Kind)
}

// dpctl's opencl:cpu device says its vendor, SYCL platform and driver, the
// kinds of USM its aspects allow, and that it builds OpenCL C and SPIR-V.
func TestDescribeDevice(t *testing.T) {
	_, b := loaded(t)
	d, err := b.Registry().Device("opencl:cpu")
	require.NoError(t, err)
	assert.Equal(t, syclobj.OpenCL, d.Backend)
	assert.NotEmpty(t, d.Vendor)
	assert.NotEmpty(t, d.Platform)
	assert.NotEmpty(t, d.Driver)
	assert.Equal(t, []usm.Kind{usm.KindHost, usm.KindDevice, usm.KindShared}, d.USM)
	assert.True(t, d.OpenCLC && d.SPIRV)
	q, err := d.Queue()
	require.NoError(t, err)
	assert.IsType(t, (*dpctl.Queue)(nil), q)
	t.Log(d, d.Vendor, d.Driver)
}
