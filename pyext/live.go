package pyext

import (
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/pybridge"
)

// Python is the interpreter the module runs in (nil before Python imported
// it): a Go function calls back into Python, from any goroutine, with its
// Do.
func Python() *pybridge.Python { return ext.py }

// Live returns the module's Go counts, for leak tests: "arrays" (Arrays
// whose Go state is alive: Go's results and imports), "dlpack_calls"
// (__dlpack__ requests the C half left to Go), "go_calls" (every call the
// C half made into Go), "panics" (Go panics
// recovered where C calls Go, each logged and raised as RuntimeError,
// Go functions' own included), "gated_callbacks" (Go callbacks C calls
// through the fork gate) and "launch_holds" (calls of NoWait functions
// that still hold their arguments for work not done). A module that
// released everything shows zero arrays, and zero launch holds once its
// kernels are done.
func Live() map[string]int64 {
	return map[string]int64{
		"arrays":          handles.live.Load(),
		"dlpack_calls":    dlpackCalls.Load(),
		"go_calls":        goCalls.Load() + functionCalls, // functionCalls: read with the GIL, from a call
		"panics":          boundary.Panics() + userPanics.Load(),
		"gated_callbacks": int64(boundary.Gated()),
		"launch_holds":    holds.live.Load(),
	}
}
