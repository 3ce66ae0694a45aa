// Package usmhook gives the module's own packages the parts of package
// usm that are not its API: usm sets these variables when it is
// initialised, and the packages that need one assert it, once, to the
// function type given here (usm imports this package, so the types cannot
// be named in it). A mismatch panics when the asserting package is
// initialised, so any test of it fails at once.
//
// What is here, and why it is not exported by usm, is in RATIONALE.md ("A
// public API sized to its users"): each is called only by code inside the
// module — backends, pybridge's reader of live Python objects, dlpack's
// import — and a Go user reaches the same behaviour through usm's API.
package usmhook

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
)
