//go:build cgo

package pybridge

const cgoEnabled = true
