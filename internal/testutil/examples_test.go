package testutil

import (
	"errors"
	"flag"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// SkipExamples adds its pattern to -test.skip only for a runtime that is
// not available and not required; the run's own -skip is kept.
func TestSkipExamples(t *testing.T) {
	skip := flag.Lookup("test.skip")
	old := skip.Value.String()
	t.Cleanup(func() { _ = skip.Value.Set(old) })
	missing := errkind.New(errkind.NotAvailable, "test", "no such runtime")

	cases := []struct {
		name    string
		require string
		err     error
		want    string
	}{
		{"missing", "", missing, "^TestNone$|^Example_x"},
		{"required", "rt", missing, "^TestNone$"},
		{"all required", "all", missing, "^TestNone$"},
		{"another error", "", errors.New("broken"), "^TestNone$"},
		{"available", "", nil, "^TestNone$"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(RequireEnv, c.require)
			if err := skip.Value.Set("^TestNone$"); err != nil {
				t.Fatal(err)
			}
			SkipExamples("^Example_x", c.err, "other", "rt")
			if got := skip.Value.String(); got != c.want {
				t.Errorf("-test.skip is %q, want %q", got, c.want)
			}
		})
	}
}
