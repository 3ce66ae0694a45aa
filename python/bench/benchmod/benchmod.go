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

import (
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// Module defines benchmod.
func Module(m *pyext.Module) error {
	m.Doc("The performance table's Go functions (python/bench/bench.py): each does nothing, or launches nothing.")
	pyext.Func1(m, "f", "Take a 1-D C-contiguous float32 array of any memory and do nothing.", ignore,
		pyext.P("x", pyext.NDim(1), pyext.CContiguous()))
	pyext.Func1(m, "f_usm", "Take a 1-D C-contiguous float32 array of SYCL USM and do nothing.", ignore,
		pyext.P("x", pyext.NDim(1), pyext.CContiguous(), pyext.Memory(pyext.AnyUSM)))
	pyext.Func0(m, "nothing", "Enter Go and do nothing (the cost of one call of a Go function).", nothing)
	pyext.Func1(m, "launch_empty", "Launch an empty kernel on x's queue and wait for it (the cost of a launch from Go).",
		launchEmpty, pyext.P("x", pyext.Memory(pyext.AnyUSM)))
	return nil
}

var empty = usm.ProgramSource{OpenCLC: "kernel void empty(void) {}"}

// launchEmpty launches the empty kernel over one work-item on the queue
// of x and waits for it: the program is built the first time and looked
// up after, as examples/saxpy does.
func launchEmpty(x pyext.AnyArray) error {
	q := x.USM().Queue
	p, err := usm.BuildProgram(q, empty)
	if err != nil {
		return err
	}
	k, err := p.Kernel("empty")
	if err != nil {
		return err
	}
	ev, err := k.Launch(q, usm.NDRange(1), nil)
	if err != nil {
		return err
	}
	err = ev.Wait()
	if cerr := ev.Close(); err == nil {
		err = cerr
	}
	return err
}

func ignore(pyext.Array[float32]) error { return nil }

func nothing() error { return nil }
