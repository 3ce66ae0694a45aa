// Package ext is the Go half of the usmbridge Python package: the module
// usmbridge._ext, built by `python -m usmbridge.build` (setup.py does) like
// any other extension module made with pyext. Its from_dlpack and asarray
// are pyext's, its Array is pyext's Array named usmbridge.Array; what is
// left here are the counts the package's leak tests read.
package ext

import (
	"runtime/metrics"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/pyext"
)

// Module defines usmbridge._ext.
func Module(m *pyext.Module) error {
	m.Doc("The Go-backed core of usmbridge (python/ext).")
	m.TypeNames("usmbridge.Array", "usmbridge.ForkError")
	m.FromDLPack("from_dlpack")
	m.AsArray("asarray")
	pyext.Func0R(m, "_go_stats", "Go's live counts, for leak tests (usmbridge._stats adds C's).", goStats)
	pyext.Func1(m, "_inject_panic", "Make the next call of a Go boundary panic (tests).", injectPanic, pyext.P("boundary"))
	pyext.Func0(m, "_enter_go", "Enter Go once and do nothing (benchmarks: the cost of a call into Go).", enterGo)
	return nil
}

func goStats() (pybridge.Object, error) {
	s := map[string]any{}
	for k, v := range pyext.Live() {
		s[k] = v
	}
	for k, v := range dlpack.Live() {
		s["dlpack_"+k] = v
	}
	for k, v := range pybridge.Live() {
		s[k] = v
	}
	// Go heap objects allocated so far (without stopping the world, as
	// ReadMemStats would): tests bound what a path allocates by its growth.
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(sample)
	s["go_heap_allocs"] = int64(sample[0].Value.Uint64())
	var o pybridge.Object
	err := pyext.Python().Do(func(g *pybridge.GIL) error {
		var err error
		o, err = g.FromGo(s)
		return err
	})
	return o, err
}

func injectPanic(where string) error {
	boundary.InjectPanic(where)
	return nil
}

func enterGo() error { return nil }
