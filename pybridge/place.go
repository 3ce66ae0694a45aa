package pybridge

import (
	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// Where the array must be: what a producer could not do (a pre-2023.12
// one, or a table, which takes no keywords), or was not asked to (host
// memory onto a device, a copy made from the array ordered on our queue),
// is done here, with dlpack.Export's rules for copies and moves.

// placeAsked makes of t, imported from what __dlpack__ returned for req
// (legacy: from the retry without keywords), the array req.opts and
// req.onto ask for.
func (g *GIL) placeAsked(t *dlpack.Tensor, req request, legacy bool) (*dlpack.Tensor, error) {
	if legacy || req.copyHere {
		var err error
		if t, err = g.placeLegacy(t, req.opts, legacy); err != nil {
			return nil, err
		}
	}
	if req.onto != nil && t.DLDevice != *req.onto {
		t, err := g.hostToDevice(t, *req.onto)
		if q := req.bindTo; err == nil && q != nil && t.Device == q.Device() && q.Queue() != nil && q.Queue().IsDefaultContext() {
			t.Queue = q.Queue() // its memory is in the default context, the queue's own
		}
		return t, err
	}
	return t, nil
}

// hostToDevice copies the host tensor t into device USM of the dpctl
// device onto, keeping its layout (the window the array touches is
// copied, strides and offset stay) and its read-only flag, and releases
// t. The copy is allocated and made with the device's queue in its
// platform's default context, so it exports as kDLOneAPI like any USM of
// that device; the copy has completed when this returns.
func (g *GIL) hostToDevice(t *dlpack.Tensor, onto dlabi.Device) (*dlpack.Tensor, error) {
	defer t.Release() // the copy needs nothing of t once made
	if t.DLDevice.Type != dlabi.CPU {
		return nil, errkind.New(errkind.Buffer, "pybridge.FromDLPack", "the producer returned a tensor on "+t.DLDevice.String()+" for "+onto.String())
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil, errkind.Wrap(errkind.Buffer, "pybridge.FromDLPack", "placing host memory on "+onto.String()+" needs dpctl", err)
	}
	dev, ok := d.LocalDevice(onto)
	if !ok {
		return nil, errkind.New(errkind.Buffer, "pybridge.FromDLPack", "unsupported device requested: no SYCL device "+onto.String())
	}
	in := t.Interface
	win, err := in.Window()
	if err != nil {
		return nil, errkind.Wrap(errkind.Buffer, "pybridge.FromDLPack", "invalid layout", err)
	}
	n := uintptr(win.Len())
	alloc, err := d.Alloc(dev, usm.KindDevice, max(n, uintptr(in.DType.Size())))
	if err != nil {
		return nil, err
	}
	// From here on the export below keeps the memory, so Free only drops
	// the allocation's own reference; on the error paths the memory really
	// goes, and a failure to free it is secondary to the error returned.
	defer func() { _ = alloc.Free() }()
	if n > 0 {
		if err := d.Copy(alloc.Pointer(), in.Data+uintptr(win.Lo), n); err != nil {
			return nil, err
		}
	}
	sel, err := d.Registry().SelectorFor(alloc.Backend(), dev)
	if err != nil {
		return nil, err
	}
	in.Data = alloc.Pointer() - uintptr(win.Lo) // win.Lo may be negative: wraps correctly
	in.Syclobj = sel
	arr, err := d.Registry().Bind(in)
	if err != nil {
		return nil, err
	}
	arr.Owner = alloc
	v := maxVersion
	m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &v})
	if err != nil {
		return nil, err
	}
	return dlpack.Import(m, dlpack.ImportOptions{Registry: d.Registry()})
}

// placeLegacy does for a tensor from a pre-2023.12 producer what
// dl_device and copy asked the producer for: it exports the tensor again
// under those options (a copy, or a host copy of device memory, made by
// dlpack.Export) and imports the result, releasing the producer's tensor.
// A tensor already where it was asked to be, with no copy asked for, is
// returned as it is.
func (g *GIL) placeLegacy(t *dlpack.Tensor, opts FromDLPackOptions, legacy bool) (*dlpack.Tensor, error) {
	moved := opts.Device != nil && *opts.Device != t.DLDevice
	if !moved && opts.Copy != dlpack.CopyAlways {
		return t, nil
	}
	defer t.Release() // the new tensor keeps what it still needs
	v := maxVersion
	m, err := dlpack.Export(&t.Array, dlpack.ExportOptions{MaxVersion: &v, Device: opts.Device, Copy: opts.Copy, HostAllocator: cpu.Default()})
	if err != nil {
		return nil, err
	}
	c, err := g.importManaged(m, opts.Registry)
	if err != nil {
		return nil, err
	}
	// A legacy tensor is read-only because it cannot say it is writable,
	// not because its producer said so: the copy made here is memory only
	// the caller sees, and is the caller's to write (it could not go back
	// to the producer anyway). A versioned producer's READ_ONLY is kept, as
	// dpnp keeps it on the copies it makes.
	if legacy {
		c.ReadOnly = false
	}
	return c, nil
}
