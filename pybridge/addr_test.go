package pybridge

import "unsafe"

func addr(s []float64) uintptr { return uintptr(unsafe.Pointer(&s[0])) }
