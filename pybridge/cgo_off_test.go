//go:build !cgo

package pybridge

const cgoEnabled = false
