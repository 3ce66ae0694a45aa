//go:build !usmbridge_errcheck

package pyapi

// noPending is where a C API function that must not be called with a
// Python exception pending is checked for that, in builds with the
// usmbridge_errcheck tag (errcheck.go); here it is nothing.
func (a *API) noPending(string) {}

// PendingCalls lists the calls made with an exception pending; only
// builds with the usmbridge_errcheck tag record them.
func PendingCalls() []string { return nil }

// ErrCheck reports whether this build records calls made with an
// exception pending.
const ErrCheck = false
