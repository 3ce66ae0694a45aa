package pyext

// The converters' Go half (fromdlpack.c is C's): from_dlpack of what C
// did not import (a device, a copy, a stream, a SYCL or exchange-table
// producer: pybridge's FromDLPack, after its keywords are read here), a
// capsule C could not take, and asarray of the SUAI C read.

// #include "ubx.h"
import "C"

import (
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
)

//export ubx_go_from_dlpack
func ubx_go_from_dlpack(x, device, copyArg unsafe.Pointer, res *C.ubx_result) C.int {
	return status(guard("from_dlpack", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			obj := func(p unsafe.Pointer) pybridge.Object { return pybridge.UnsafeObject(uintptr(p)) }
			opts, err := fromDLPackOptions(g, obj(device), obj(copyArg))
			if err != nil {
				return err
			}
			t, err := g.FromDLPack(obj(x), opts)
			if err != nil {
				return err
			}
			return newArrayResult(&t.Array, true, (*result)(unsafe.Pointer(res)))
		})
	}))
}

//export ubx_go_import_capsule
func ubx_go_import_capsule(x, capsule unsafe.Pointer, res *C.ubx_result) C.int {
	return status(guard("from_dlpack capsule", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			t, err := g.ImportCapsule(pybridge.UnsafeObject(uintptr(capsule)), nil)
			if err != nil {
				return err
			}
			return newArrayResult(&t.Array, true, (*result)(unsafe.Pointer(res)))
		})
	}))
}

// suaiDicts are the SUAIDicts no asarray call is reading into (each
// holds the room an exact dict's values are read in); calls nest (a
// SUAI's values may run Python code that calls asarray), so each takes
// its own. Taken and given back with the GIL, which guards the list, as
// frames.
var suaiDicts []*pybridge.SUAIDict

func getSUAIDict() *pybridge.SUAIDict {
	if n := len(suaiDicts); n > 0 {
		d := suaiDicts[n-1]
		suaiDicts = suaiDicts[:n-1]
		return d
	}
	return new(pybridge.SUAIDict)
}

func putSUAIDict(d *pybridge.SUAIDict) {
	*d = pybridge.SUAIDict{} // no pointer into Python outlives the call
	suaiDicts = append(suaiDicts, d)
}

//export ubx_go_asarray
func ubx_go_asarray(obj, suai unsafe.Pointer, res *C.ubx_result) C.int {
	return status(guard("asarray", func() error {
		return ext.py.DoHeld(func(g *pybridge.GIL) error {
			o := pybridge.UnsafeObject(uintptr(obj))
			d := getSUAIDict()
			defer putSUAIDict(d)
			(*suaiRead)(suai).to(d)
			arr, so, err := g.ArrayFromSUAI(o, d, nil)
			if err != nil {
				return err
			}
			r := (*result)(unsafe.Pointer(res))
			if err := newArrayResult(arr, true, r); err != nil {
				if so.Ptr() != 0 {
					g.DecRef(so)
				}
				return err
			}
			base, _ := g.FromGo(o) // an Object: a new reference to it, the Array's
			r.base = base.Ptr()
			r.syclobj = so.Ptr()
			return nil
		})
	}))
}

// fromDLPackOptions reads from_dlpack's device and copy keywords: a
// DLPack (device_type, device_id) pair goes to the producer as its
// dl_device, as the array API says (the producer refuses a device it
// cannot serve); "cpu", a SYCL filter string, a dpctl.SyclDevice or
// SyclQueue name a device usmbridge resolves to its pair first. A device it
// cannot resolve is an error naming the keyword.
func fromDLPackOptions(g *pybridge.GIL, device, copyArg pybridge.Object) (pybridge.FromDLPackOptions, error) {
	var opts pybridge.FromDLPackOptions
	named := false
	if device.Ptr() != 0 && !g.IsNone(device) {
		var err error
		if named, err = namesDevice(g, device); err != nil {
			return opts, err
		}
	}
	if named {
		d, err := deviceOf(g, device)
		if err != nil {
			return opts, deviceArgError("from_dlpack", "device", err)
		}
		if d.Queue != nil {
			// A dpctl.SyclQueue: passed as the stream, the producer orders
			// it after its work, and the array is bound to it.
			opts.Stream = device
		}
		device = pybridge.Object{}
		opts.Device = &d.DL
	}
	if device.Ptr() != 0 { // a DLPack pair, or nothing a device is
		o, err := g.DLPackOptions(dlabi.Device{}, pybridge.Object{}, pybridge.Object{}, device, pybridge.Object{})
		if err != nil {
			if exc, own := errkind.Origin[*pybridge.Exception](err); own && exc != nil {
				return opts, err // raised by the pair's own code (an __index__)
			}
			// Said of from_dlpack's device, not of the __dlpack__ keyword
			// the pair goes on to; a pair's own fault (an id beyond 32
			// bits) stays its cause.
			const want = "must be \"cpu\", a SYCL filter string, a DLPack (device_type, device_id) pair, a dpctl.SyclDevice or a dpctl.SyclQueue"
			if k := errkind.Of(err); k != nil && k != errkind.Type {
				return opts, &ArgumentError{Func: "from_dlpack", Param: "device", Reason: "is not a device usmbridge can use", kind: k, Err: err}
			}
			return opts, argErr(errkind.Type, "from_dlpack", "device", want)
		}
		opts.Device = o.Device
	}
	o, err := g.DLPackOptions(dlabi.Device{}, pybridge.Object{}, pybridge.Object{}, pybridge.Object{}, copyArg)
	if err != nil {
		return opts, err
	}
	opts.Copy = o.Copy
	return opts, nil
}

// namesDevice reports whether o names a device by name or object (a str, a
// dpctl.SyclDevice or SyclQueue) rather than as a DLPack pair. An
// exception the object's own code raised (a property) is the error.
func namesDevice(g *pybridge.GIL, o pybridge.Object) (bool, error) {
	if _, ok := g.AsString(o); ok {
		return true, nil
	}
	for _, attr := range []string{"filter_string", "sycl_device"} {
		v, err := attrIfAny(g, o, attr)
		if err != nil {
			return false, err
		}
		if v.Ptr() != 0 {
			g.DecRef(v)
			return true, nil
		}
	}
	return false, nil
}
