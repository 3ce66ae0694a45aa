package benchmod

import (
	"testing"

	"github.com/usmbridge/usmbridge/pyext"
)

// TestModule: the module defines without errors (a mistake fails here, not
// when scripts/bench.sh imports it).
func TestModule(t *testing.T) {
	if err := pyext.Check("benchmod", Module); err != nil {
		t.Fatal(err)
	}
}
