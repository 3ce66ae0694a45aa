package testutil

import "testing"

// fatalRecorder is a testing.TB whose Fatal only records that it was
// called.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (r *fatalRecorder) Helper()      {}
func (r *fatalRecorder) Fatal(...any) { r.failed = true }

// AllRan fails on every summary pytest -q writes with a skip in it (with
// -rs or not, some tests skipped or all), and on no other.
func TestAllRan(t *testing.T) {
	for out, fail := range map[string]bool{
		"....  [100%]\n4 passed in 0.10s\n":                                    false,
		"..s.  [100%]\n3 passed, 1 skipped in 0.10s\n":                         true,
		"s     [100%]\n1 skipped in 0.10s\n":                                   true,
		"s     [100%]\nSKIPPED [1] test_x.py:2: no dpnp\n1 skipped in 0.10s\n": true,
	} {
		r := &fatalRecorder{}
		AllRan(r, out)
		if r.failed != fail {
			t.Errorf("AllRan failed: %v, want %v, on\n%s", r.failed, fail, out)
		}
	}
}

// Without USMBRIDGE_PYTHON, ProjectPython skips unless Python is
// required.
func TestProjectPythonUnset(t *testing.T) {
	t.Setenv(PythonEnv, "")
	t.Setenv(RequireEnv, "")
	var sub *testing.T
	t.Run("unset", func(t *testing.T) {
		sub = t
		ProjectPython(t)
		t.Error("ProjectPython returned without USMBRIDGE_PYTHON")
	})
	if !sub.Skipped() {
		t.Error("ProjectPython did not skip")
	}
}
