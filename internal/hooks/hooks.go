// Package hooks gives the module's own packages the parts of its public
// packages that are not their API. The owning package sets each variable
// when it is initialised, and a package that needs one asserts it, once,
// to the function type documented here (the owner imports this package, so
// the types cannot be named in it). A mismatch panics when the asserting
// package is initialised, so any test of it fails at once.
//
// Each is called only by code inside the module (the backends, pybridge's
// reader of live Python objects, dlpack's import), and a Go user reaches
// the same behaviour through the public API; RATIONALE.md ("A public API
// sized to its users") says why they are not exported.
package hooks

// Set by package usm.
var (
	// NewAllocation is func(b usm.Backend, ptr, size uintptr, kind
	// usm.Kind, device int, free func() error) *usm.Allocation: memory a
	// backend allocated, listed under b so that Registry.Parse and Bind
	// make it the owner of arrays inside it; free is called exactly once,
	// when the last reference goes. The backends' Alloc methods call it.
	NewAllocation any

	// SyclobjFor is func(*usm.Registry, usm.Backend, int) syclobj.Obj:
	// Registry.SelectorFor as a syclobj.Obj, boxed once per device (nil if
	// the device is not registered), for dlpack's Import.
	SyclobjFor any

	// ParseFields is func(suaifields.Fields) (usm.Interface, error): usm's
	// parser (dpctl's checks) over a reader; BindFields is
	// func(*usm.Registry, suaifields.Fields) (*usm.Array, error), which
	// also binds the pointer and checks the extent, as Registry.Parse
	// does. pybridge's reader of live Python objects uses them.
	ParseFields, BindFields any

	// SyclobjFromValue is func(any) (syclobj.Obj, error): a "syclobj"
	// value as the parser reads it (a filter string, parsed once per
	// string; or a syclobj.Obj), for pybridge's reader of a str syclobj.
	SyclobjFromValue any
)

// Set by package syclobj.
var (
	// FromCapsuleFunc is func(get func() (syclobj.Obj, error))
	// syclobj.Obj: the syclobj of a Python object with a _get_capsule
	// method, which the usm registry resolves by calling get when it binds
	// a pointer (syclobj.Obj is a closed set, made only in syclobj).
	// pybridge's reader makes them.
	FromCapsuleFunc any
)
