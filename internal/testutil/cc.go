package testutil

import (
	"os"
	"os/exec"
	"strings"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// CC returns the C compiler `go env CC` names (else $CC, else cc), split
// into words, for tests that build C fixtures. The error matches
// errkind.NotAvailable when no such compiler is installed; pass it to
// Runtime with CCompiler.
func CC() ([]string, error) {
	cc := ""
	if b, err := exec.Command("go", "env", "CC").Output(); err == nil {
		cc = strings.TrimSpace(string(b))
	}
	if cc == "" {
		cc = os.Getenv("CC")
	}
	if cc == "" {
		cc = "cc"
	}
	words := strings.Fields(cc)
	if _, err := exec.LookPath(words[0]); err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "testutil.CC", "no C compiler ("+cc+") to build test fixtures", err)
	}
	return words, nil
}
