package testutil

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// SkipExamples is Runtime for the examples of a package, which cannot
// skip themselves: called from TestMain before m.Run, it adds pattern to
// the run's -test.skip when err says the runtime is not available and
// USMBRIDGE_REQUIRE names none of runtimes, and says so on standard
// output. Required, or failing for another reason, the examples run, and
// fail with the error they print. A nil err does nothing.
//
// The examples docs/go.md shows that need a runtime (OpenCL, Python,
// dpctl) are gated this way: their `// Output:` is asserted wherever the
// runtime is, and CI requires every runtime it installs.
func SkipExamples(pattern string, err error, runtimes ...string) {
	if err == nil || !errors.Is(err, errkind.NotAvailable) || slices.ContainsFunc(runtimes, Required) {
		return
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	skip := flag.Lookup("test.skip")
	if skip == nil {
		return // not a test binary
	}
	all := pattern
	if old := skip.Value.String(); old != "" {
		all = old + "|" + pattern
	}
	if err := skip.Value.Set(all); err != nil {
		panic(err) // the pattern is a constant of the caller's: a bug
	}
	fmt.Fprintf(os.Stdout, "examples matching %s skipped: %s not available (set %s to make this a failure): %v\n",
		pattern, strings.Join(runtimes, "/"), RequireEnv, err)
}
