//go:build cgo

package ffi

const cgoEnabled = true
