// Package test holds usmbridge's cross-package and conformance tests: the
// behaviour dpctl's and the array API's own test suites pin down, checked
// against the whole library. The example programs are run by tests next to
// them, in examples/.
package test
