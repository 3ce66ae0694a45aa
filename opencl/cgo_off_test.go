//go:build !cgo

package opencl

const cgoEnabled = false
