package pybridge

import (
	"errors"
	"slices"
	"testing"
	"unsafe"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/usm"
)

// legacyPy defines producers that know only __dlpack__(stream=None), the
// signature before the 2023.12 array API, and one that records the
// keywords each call passes.
const legacyPy = `
import numpy as np
class Legacy:
    def __init__(self, a): self.a, self.calls = a, 0
    def __dlpack__(self, stream=None):
        self.calls += 1
        return self.a.__dlpack__()
    def __dlpack_device__(self): return self.a.__dlpack_device__()
class Recorder:
    def __init__(self): self.seen = []
    def __dlpack__(self, **kw):
        self.seen.append(list(kw))
        raise TypeError("unexpected keyword argument %r" % next(iter(kw), None))
    def __dlpack_device__(self): return (1, 0)
`

// float64s reads a tensor's elements (contiguous, host-readable).
func float64s(t *testing.T, tns *dlpack.Tensor) []float64 {
	t.Helper()
	n := int64(1)
	for _, s := range tns.Shape {
		n *= s
	}
	return slices.Clone(unsafe.Slice((*float64)(cmem.Ptr(tns.ElementPointer())), n))
}

// A pre-2023.12 producer gets a retry without the newer keywords, and the
// consumer does the copy it could not (array API from_dlpack).
func TestFromDLPackLegacyProducerHost(t *testing.T) {
	py := embedded(t)
	run(t, py, legacyPy+"h = np.arange(4.0)\nold = Legacy(h)")
	host := dlabi.Device{Type: dlabi.CPU, ID: 0}
	cases := []struct {
		name   string
		opts   FromDLPackOptions
		copied bool
	}{
		{"copy=True", FromDLPackOptions{Copy: dlpack.CopyAlways}, true},
		{"copy=True dl_device=host", FromDLPackOptions{Copy: dlpack.CopyAlways, Device: &host}, true},
		{"copy=False", FromDLPackOptions{Copy: dlpack.CopyNever}, false},
		{"dl_device=host", FromDLPackOptions{Device: &host}, false},
		{"defaults", FromDLPackOptions{}, false},
	}
	want := uintptr(evalGo(t, py, "h.ctypes.data").(int64))
	before := exportledger.Read()
	defer func() {
		if s := exportledger.Read(); s.LiveImports != before.LiveImports || s.LiveExports != before.LiveExports {
			t.Errorf("leak: %+v, before %+v", s, before)
		}
	}()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := py.Do(func(g *GIL) error {
				x, err := g.Eval("old")
				if err != nil {
					return err
				}
				defer g.DecRef(x)
				tns, err := g.FromDLPack(x, c.opts)
				if err != nil {
					return err
				}
				defer tns.Release()
				if got := tns.ElementPointer() != want; got != c.copied {
					t.Errorf("copied = %v, want %v", got, c.copied)
				}
				if tns.IsCopied() != c.copied {
					t.Errorf("IS_COPIED = %v, want %v", tns.IsCopied(), c.copied)
				}
				if v := float64s(t, tns); !slices.Equal(v, []float64{0, 1, 2, 3}) {
					t.Errorf("values %v", v)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("from_dlpack(Legacy, %s): %v", c.name, err)
			}
		})
	}
}

// The keywords reach the producer in one order on every call, so its
// TypeError names the same keyword every time; the retry passes none but
// stream.
func TestFromDLPackKeywordOrder(t *testing.T) {
	py := embedded(t)
	run(t, py, legacyPy+"rec = Recorder()")
	host := dlabi.Device{Type: dlabi.CPU, ID: 0}
	for range 20 {
		err := py.Do(func(g *GIL) error {
			x, _ := g.Eval("rec")
			defer g.DecRef(x)
			_, err := g.FromDLPack(x, FromDLPackOptions{Device: &host, Copy: dlpack.CopyAlways})
			if !errors.Is(err, usm.ErrType) {
				t.Fatalf("got %v, want the retry's TypeError", err)
			}
			g.ReleaseError(err)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := evalGo(t, py, "[','.join(k) for k in rec.seen]").([]any)
	for i := 0; i < len(seen); i += 2 {
		if seen[i] != "copy,dl_device,max_version" || seen[i+1] != "" {
			t.Fatalf("call %d passed %q then %q", i/2, seen[i], seen[i+1])
		}
	}
}

// Device USM from a legacy producer: dl_device=(kDLCPU, 0) lands on the
// host through a copy made here; with copy=False that copy is refused.
func TestFromDLPackLegacyProducerDevice(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, legacyPy+"xd = dpt.arange(4, dtype='f8', sycl_queue=q, usm_type='device')\nq.wait()  # Legacy has no sycl_queue to wait on\noldd = Legacy(xd)")
	host := dlabi.Device{Type: dlabi.CPU, ID: 0}
	err := py.Do(func(g *GIL) error {
		x, _ := g.Eval("oldd")
		defer g.DecRef(x)
		tns, err := g.FromDLPack(x, FromDLPackOptions{Device: &host})
		if err != nil {
			return err
		}
		if tns.DLDevice != host || !tns.IsCopied() {
			t.Errorf("device %v copied %v, want a host copy", tns.DLDevice, tns.IsCopied())
		}
		if v := float64s(t, tns); !slices.Equal(v, []float64{0, 1, 2, 3}) {
			t.Errorf("values %v", v)
		}
		tns.Release()
		_, err = g.FromDLPack(x, FromDLPackOptions{Device: &host, Copy: dlpack.CopyNever})
		if !errors.Is(err, usm.ErrBuffer) {
			t.Errorf("copy=False to host of device USM: %v, want BufferError", err)
		}
		tns, err = g.FromDLPack(x, FromDLPackOptions{Copy: dlpack.CopyAlways})
		if err != nil {
			return err
		}
		defer tns.Release()
		if tns.DLDevice.Type != dlabi.OneAPI || !tns.IsCopied() || tns.Memory.Kind != usm.KindDevice {
			t.Errorf("copy=True: device %v copied %v kind %v", tns.DLDevice, tns.IsCopied(), tns.Memory.Kind)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Memory of a sub-device's own context is not exported as kDLOneAPI (no
// consumer could find its context), but dl_device=(kDLCPU, 0) gets a host
// copy made by the array's own queue, for every USM kind.
func TestSubDeviceContextHostCopy(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, "sub_q = dpctl.SyclQueue(dpctl.SyclDevice('opencl:cpu').create_sub_devices(partition=1)[0])\nassert sub_q.sycl_context != q.sycl_context")
	host := dlpack.Device{Type: dlpack.CPU, ID: 0}
	v1 := dlpack.Version{Major: 1}
	for _, kind := range []string{"device", "shared", "host"} {
		t.Run(kind, func(t *testing.T) {
			run(t, py, "xs = dpt.arange(5, dtype='f8', sycl_queue=sub_q, usm_type='"+kind+"')[::-1]")
			err := py.Do(func(g *GIL) error {
				x, _ := g.Eval("xs")
				defer g.DecRef(x)
				arr, err := g.AsArray(x, nil)
				if err != nil {
					return err
				}
				if _, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: &v1}); !errors.Is(err, usm.ErrBuffer) {
					t.Errorf("as kDLOneAPI: %v, want BufferError", err)
				}
				c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: &v1, Device: &host})
				if err != nil {
					return err
				}
				defer g.DecRef(c)
				tns, err := g.importCapsule(c, nil)
				if err != nil {
					return err
				}
				defer tns.Release()
				if tns.DLDevice != host {
					t.Errorf("device %v", tns.DLDevice)
				}
				var got []float64
				for i := range tns.Shape[0] {
					got = append(got, *(*float64)(cmem.Ptr(tns.ElementPointer() + uintptr(i*tns.EffectiveStrides()[0]*8))))
				}
				if !slices.Equal(got, []float64{4, 3, 2, 1, 0}) {
					t.Errorf("values %v", got)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Host memory asked onto a SYCL device: the producer (NumPy, which refuses
// that dl_device) is asked for the data where it is, and the consumer
// copies the window into device USM with the layout and read-only flag
// kept (dpnp's from_dlpack does the same move).
func TestFromDLPackHostOntoDevice(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, legacyPy+`
hs = np.arange(24.0).reshape(4, 6)[::-1, 1::2]
ro = np.arange(3.0); ro.flags.writeable = False
class Boom(Exception): pass
class BadDevice(Legacy):
    def __dlpack_device__(self): raise Boom("no device")
bad = BadDevice(np.arange(3.0))
dev = dpt.empty(0, sycl_queue=q).__dlpack_device__()
`)
	onto := dlabi.Device{Type: dlabi.OneAPI, ID: int32(evalGo(t, py, "dev[1]").(int64))}
	host := dlabi.Device{Type: dlabi.CPU, ID: 0}
	v1 := dlpack.Version{Major: 1}
	before := exportledger.Read()
	cases := []struct {
		name     string
		expr     string
		opts     FromDLPackOptions
		want     [][]float64 // nil: an error is wanted
		readOnly bool
		err      func(error) bool
	}{
		{"strided", "hs", FromDLPackOptions{Device: &onto}, [][]float64{{19, 21, 23}, {13, 15, 17}, {7, 9, 11}, {1, 3, 5}}, false, nil},
		{"copy=True", "hs", FromDLPackOptions{Device: &onto, Copy: dlpack.CopyAlways}, [][]float64{{19, 21, 23}, {13, 15, 17}, {7, 9, 11}, {1, 3, 5}}, false, nil},
		// A legacy tensor cannot say it is writable: read-only, and the copy keeps it.
		{"legacy producer", "Legacy(np.arange(3.0).reshape(1, 3))", FromDLPackOptions{Device: &onto}, [][]float64{{0, 1, 2}}, true, nil},
		{"read-only", "ro.reshape(1, 3)", FromDLPackOptions{Device: &onto}, [][]float64{{0, 1, 2}}, true, nil},
		{"copy=False", "hs", FromDLPackOptions{Device: &onto, Copy: dlpack.CopyNever}, nil, false, func(err error) bool { return errors.Is(err, usm.ErrBuffer) }},
		{"no such device", "hs", FromDLPackOptions{Device: &dlabi.Device{Type: dlabi.OneAPI, ID: 1 << 20}}, nil, false, func(err error) bool { return errors.Is(err, usm.ErrBuffer) }},
		{"__dlpack_device__ raises", "bad", FromDLPackOptions{Device: &onto}, nil, false, func(err error) bool {
			var e *Exception
			return errors.As(err, &e) && e.Type == "__main__.Boom"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := py.Do(func(g *GIL) error {
				x, err := g.Eval(c.expr)
				if err != nil {
					return err
				}
				defer g.DecRef(x)
				tns, err := g.FromDLPack(x, c.opts)
				if c.want == nil {
					if err == nil {
						tns.Release()
						t.Fatalf("got a tensor, want an error")
					}
					if !c.err(err) {
						t.Errorf("error %v (%T)", err, err)
					}
					g.ReleaseError(err)
					return nil
				}
				if err != nil {
					return err
				}
				defer tns.Release()
				if tns.DLDevice != onto || tns.Memory.Kind != usm.KindDevice || tns.ReadOnly != c.readOnly {
					t.Errorf("device %v kind %v read-only %v", tns.DLDevice, tns.Memory.Kind, tns.ReadOnly)
				}
				// Read it back through the host copy the producer side makes.
				cp, err := g.ToDLPack(&tns.Array, dlpack.ExportOptions{MaxVersion: &v1, Device: &host})
				if err != nil {
					return err
				}
				defer g.DecRef(cp)
				h, err := g.importCapsule(cp, nil)
				if err != nil {
					return err
				}
				defer h.Release()
				st := h.EffectiveStrides()
				for i, row := range c.want {
					for j, w := range row {
						p := h.ElementPointer() + uintptr((int64(i)*st[0]+int64(j)*st[1])*8)
						if got := *(*float64)(cmem.Ptr(p)); got != w {
							t.Errorf("[%d][%d] = %v, want %v", i, j, got, w)
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	if s := exportledger.Read(); s.LiveImports != before.LiveImports || s.LiveExports != before.LiveExports {
		t.Errorf("leak: %+v, before %+v", s, before)
	}
}

// What a producer's __dlpack_device__ raises when FromDLPack asks it (to
// choose the stream) is the error, as itself: KeyboardInterrupt too. A
// value that is not two integers is not an error there: __dlpack__ is
// asked as usual.
func TestFromDLPackDeviceExceptionIsItself(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, `
class DeviceRaises:
    def __init__(self, exc): self.exc, self.x = exc, dpt.arange(3, dtype='f8', sycl_queue=q)
    def __dlpack__(self, **kw): return self.x.__dlpack__(**kw)
    def __dlpack_device__(self): raise self.exc
class DeviceOdd(DeviceRaises):
    def __dlpack_device__(self): return (14, 'zero')
class Boom(Exception): pass
boom_raised, kbd_raised = Boom('device boom'), KeyboardInterrupt('stop')
`)
	for _, name := range []string{"boom_raised", "kbd_raised"} {
		t.Run(name, func(t *testing.T) {
			err := py.Do(func(g *GIL) error {
				x, err := g.Eval("DeviceRaises(" + name + ")")
				if err != nil {
					return err
				}
				defer g.DecRef(x)
				want, err := g.Eval(name)
				if err != nil {
					return err
				}
				defer g.DecRef(want)
				tns, err := g.FromDLPack(x, FromDLPackOptions{})
				if err == nil {
					tns.Release()
					t.Fatal("FromDLPack succeeded")
				}
				defer g.ReleaseError(err)
				pe, same := raisedAsItself(err)
				if !same {
					t.Fatalf("error %v is not a Python exception as itself", err)
				}
				got := pe.object(g)
				defer g.DecRef(got)
				if got != want {
					t.Errorf("error %v is not the exception __dlpack_device__ raised", err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	err := py.Do(func(g *GIL) error {
		x, err := g.Eval("DeviceOdd(None)")
		if err != nil {
			return err
		}
		defer g.DecRef(x)
		tns, err := g.FromDLPack(x, FromDLPackOptions{})
		if err != nil {
			return err
		}
		tns.Release()
		return nil
	})
	if err != nil {
		t.Errorf("a __dlpack_device__ that is not two integers: %v", err)
	}
}
