// Package sample is a fixture of apicheck's tests: every kind of
// declaration, exported and not.
package sample

import "github.com/usmbridge/usmbridge/internal/dlabi"

const (
	A, B = 1, 2 // two exported names in one spec
	c    = 3
)

var V, w int

func F() {}
func g() {}

// T has exported and unexported members.
type T struct {
	X, Y int
	z    int
	Embedded
}

type Embedded struct{}

func (T) M()  {}
func (*T) N() {}
func (T) m()  {}

type I interface {
	Do()
	do()
}

type hidden struct{}

func (hidden) Exported() {} // not documented: its type is unexported

// Leaky names an internal type; Fine names it through an alias.
func Leaky() dlabi.Device { return dlabi.Device{} }

type Device = dlabi.Device

func Fine() Device { return Device{} }
