// Command python-interop embeds CPython from Go (no cgo), makes a dpnp
// array on dpctl's opencl:cpu queue, reads its __sycl_usm_array_interface__
// into usmbridge, exports it to DLPack, and hands numpy a host copy.
//
//	OCL_ICD_VENDORS=$PWD/.cache/opencl-vendors \
//	USMBRIDGE_PYTHON=$PWD/.venv/bin/python go run ./examples/python-interop
package main

import (
	"fmt"
	"os"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/pybridge"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "python-interop:", err)
		os.Exit(1)
	}
}

func run() error {
	py, err := pybridge.Embed("")
	if err != nil {
		return err
	}
	fmt.Printf("1. embedded Python %s from %s\n", py.Version(), py.Library())
	d, err := py.Dpctl() // imports dpctl and opens its C library as a usm.Backend
	if err != nil {
		return err
	}
	return py.Do(func(g *pybridge.GIL) error {
		if err := g.Exec("import dpctl, numpy as np, dpnp.tensor as dpt\nq = dpctl.SyclQueue('opencl:cpu')\nx = dpt.reshape(dpt.arange(6, dtype='f4', sycl_queue=q), (2, 3))"); err != nil {
			return err
		}
		v, err := g.Eval("dpctl.__version__")
		if err != nil {
			return err
		}
		version, err := g.String(v)
		g.DecRef(v)
		if err != nil {
			return err
		}
		fmt.Printf("2. dpctl %s, devices %v\n", version, d.Devices())
		x, err := g.Eval("x")
		if err != nil {
			return err
		}
		defer g.DecRef(x)
		fmt.Println("3. made x = dpt.arange(6).reshape(2, 3) on opencl:cpu")
		arr, err := g.AsArray(x, nil)
		if err != nil {
			return err
		}
		defer arr.Owner.Release()
		fmt.Printf("4. SUAI: pointer %#x, shape %v, dtype %s, %s USM, DLPack device %v\n",
			arr.Data, arr.Shape, arr.DType, arr.Memory.Kind, arr.DLDevice)
		cpuDev := dlpack.Device{Type: dlpack.CPU}
		c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}, Device: &cpuDev})
		if err != nil {
			return err
		}
		defer g.DecRef(c)
		fmt.Println("5. exported to a \"dltensor_versioned\" capsule on (kDLCPU, 0) (a host copy of device USM)")
		if err := g.SetMain("cap", c); err != nil {
			return err
		}
		if err := g.Exec("class H:\n    def __dlpack__(self, **kw): return cap\n    def __dlpack_device__(self): return (1, 0)\nh = np.from_dlpack(H())"); err != nil {
			return err
		}
		s, err := g.Eval("repr(h)")
		if err != nil {
			return err
		}
		defer g.DecRef(s)
		str, _ := g.String(s)
		fmt.Printf("6. numpy.from_dlpack: %s\n", str)
		return nil
	})
}
