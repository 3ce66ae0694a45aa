//go:build !cgo

package ffi

const cgoEnabled = false
