//go:build !cgo

package levelzero

const cgoEnabled = false
