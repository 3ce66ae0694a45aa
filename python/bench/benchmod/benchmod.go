// Package benchmod is the extension module the performance table times
// (python/bench/bench.py, docs/performance.md): functions that take an
// argument and do nothing with it, so a call costs only what pyext spends
// between Python and Go. scripts/bench.sh builds it with
//
//	python -m usmbridge.build python/bench/benchmod -o .cache/bench
//
// beside its peers, a nanobind function and a plain C-API function of the
// same signature (python/bench/peers).
package benchmod

import "github.com/usmbridge/usmbridge/pyext"

// Module defines benchmod.
func Module(m *pyext.Module) error {
	m.Doc("The performance table's Go functions (python/bench/bench.py): each does nothing.")
	pyext.Func1(m, "f", "Take a 1-D C-contiguous float32 array of any memory and do nothing.", ignore,
		pyext.P("x", pyext.NDim(1), pyext.CContiguous()))
	pyext.Func1(m, "f_usm", "Take a 1-D C-contiguous float32 array of SYCL USM and do nothing.", ignore,
		pyext.P("x", pyext.NDim(1), pyext.CContiguous(), pyext.Memory(pyext.AnyUSM)))
	pyext.Func0(m, "nothing", "Enter Go and do nothing (the cost of one call of a Go function).", nothing)
	return nil
}

func ignore(pyext.Array[float32]) error { return nil }

func nothing() error { return nil }
