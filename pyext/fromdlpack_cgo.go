package pyext

// The converters' Go half (fromdlpack.c is C's): from_dlpack of what C
// did not import (a device, a copy, a stream, a SYCL or exchange-table
// producer: pybridge's FromDLPack, after its keywords are read here), a
// capsule C could not take, and asarray of the SUAI C read.

// #include "ubx.h"
import "C"
import (
	"unsafe"

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
