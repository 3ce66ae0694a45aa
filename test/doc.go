// Package test holds usmbridge's cross-package and conformance tests: the
// behaviour dpctl's and the array API's own test suites pin down, checked
// against the whole library, and the runnable examples.
package test
