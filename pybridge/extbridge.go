package pybridge

import (
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/pybridge/internal/extbridge"
	"github.com/usmbridge/usmbridge/usm"
)

// The extension module (pybridge/ext) reaches what only it needs through
// extbridge; pybridge's public API is what a Go program that embeds
// Python uses (RATIONALE.md, "The extension module reaches pybridge
// through an internal bridge").
func init() {
	extbridge.Set(extbridge.Ops[GIL, Object]{
		Attach: func() (func() *GIL, func(), error) {
			py, err := attach()
			if err != nil {
				return nil, nil, err
			}
			return py.enterHeld, exitHeld, nil
		},

		Object:       func(p uintptr) Object { return Object{p} },
		Ptr:          func(o Object) uintptr { return o.p },
		FromGo:       (*GIL).fromGo,
		Raise:        (*GIL).raise,
		ReleaseError: (*GIL).releaseError,

		AsArrayRead: func(g *GIL, obj Object, d, got uintptr, n int) (*usm.Array, extbridge.Ref[GIL, Object], error) {
			arr, so, err := g.asArrayRead(obj, d, got, n)
			if so == nil {
				return arr, nil, err // not a typed nil in the interface
			}
			return arr, so, err
		},
		SUAIGetters: func(g *GIL) []uintptr {
			t := g.suaiGetterTable()
			return t[:]
		},

		ParseDLPackArgs: (*GIL).parseDLPackArgs,
		NotAProducer:    (*GIL).notAProducer,
		FromDLPackAfterCall: func(g *GIL, x, meth, c Object) (*dlpack.Tensor, error) {
			return g.fromDLPackAfterCall(x, meth, c, FromDLPackOptions{})
		},
		ImportHostManaged: importHostManaged,

		Export:              (*GIL).export,
		AcceptsNoSyncStream: acceptsNoSyncStream,
		ExchangeNeedsWait:   (*GIL).exchangeNeedsWait,
		WaitPlan:            waitPlan,

		ImportManaged: func(g *GIL, m dlpack.Managed) (*dlpack.Tensor, error) {
			return g.importManaged(m, nil)
		},
		CurrentWorkStream: (*GIL).currentWorkStream,
		AllocTensor:       (*GIL).allocTensor,
		ExchangeImports:   exchangeImports.Load,
	})
}
