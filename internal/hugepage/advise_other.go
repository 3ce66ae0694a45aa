//go:build !linux

package hugepage

import "errors"

// advise does nothing where there is no MADV_HUGEPAGE.
func advise(lo, n uintptr) error { return nil }

// Advised is not known here.
func Advised(addr uintptr) (bool, error) { return false, errors.ErrUnsupported }
