package ffi

import (
	"errors"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Dlopen flags (glibc values; purego does not export NOLOAD).
const (
	RTLDLazy   = purego.RTLD_LAZY
	RTLDNow    = purego.RTLD_NOW
	RTLDGlobal = purego.RTLD_GLOBAL
	RTLDLocal  = purego.RTLD_LOCAL
	RTLDNoLoad = 0x4
)

// Lib is an opened shared library. Libraries are never closed: their
// entry points are kept in package-level tables for the life of the
// process.
type Lib struct {
	handle uintptr
	name   string
	absent []string
}

// OpenLib opens the first of names that loads. The error is a
// *LibraryError naming every candidate; it matches errkind.NotAvailable.
func OpenLib(mode int, names ...string) (*Lib, error) {
	le := &LibraryError{}
	for _, n := range names {
		h, err := purego.Dlopen(n, mode)
		if err == nil {
			return &Lib{handle: h, name: n}, nil
		}
		msg := err.Error()
		if msg == "" {
			msg = "not loaded"
		}
		le.Tried, le.Errors = append(le.Tried, n), append(le.Errors, msg)
	}
	return nil, le
}

// Name is the name the library was opened by.
func (l *Lib) Name() string { return l.name }

// Symbol is one entry point (or variable) of a table for Lib.Resolve.
type Symbol struct {
	dst      *uintptr
	name     string
	optional bool
}

// Required declares an entry point the library's own code calls: without
// it the table is unusable.
func Required(fn *Fn, name string) Symbol {
	return Symbol{dst: (*uintptr)(unsafe.Pointer(fn)), name: name}
}

// Optional declares an entry point that newer versions have or only some
// paths use: it is left zero when absent.
func Optional(fn *Fn, name string) Symbol {
	return Symbol{dst: (*uintptr)(unsafe.Pointer(fn)), name: name, optional: true}
}

// RequiredVar declares a variable of the library (a static object such as
// CPython's _Py_NoneStruct) whose address *addr receives; like Required,
// its absence makes the table unusable.
func RequiredVar(addr *uintptr, name string) Symbol { return Symbol{dst: addr, name: name} }

// Resolve looks every symbol up with dlsym (never purego.RegisterLibFunc,
// which panics on an absent one). It sets what it finds even when it
// fails, and reports every missing required symbol at once. Absent
// optional symbols are recorded for Absent.
func (l *Lib) Resolve(syms ...Symbol) error {
	var missing []string
	for _, s := range syms {
		p, err := l.sym(s.name)
		if err == nil {
			*s.dst = p
			continue
		}
		*s.dst = 0
		if s.optional {
			l.absent = append(l.absent, s.name)
		} else {
			missing = append(missing, s.name)
		}
	}
	if len(missing) > 0 {
		return &MissingSymbolsError{Library: l.name, Symbols: missing}
	}
	return nil
}

// Absent lists the optional symbols Resolve did not find, in the order
// they were declared.
func (l *Lib) Absent() []string { return append([]string(nil), l.absent...) }

// Lookup returns the address of one symbol, or an error if it is absent.
func (l *Lib) Lookup(name string) (Fn, error) {
	p, err := l.sym(name)
	return Fn(p), err
}

func (l *Lib) sym(name string) (uintptr, error) {
	p, err := purego.Dlsym(l.handle, name)
	if err != nil {
		return 0, err
	}
	if p == 0 {
		return 0, errors.New("symbol " + name + " is NULL")
	}
	return p, nil
}

// LibraryError reports that none of the candidate names of a library could
// be opened. It carries every name tried and the loader's messages, and
// matches errkind.NotAvailable: the runtime is not installed.
type LibraryError struct {
	Tried  []string
	Errors []string
}

func (e *LibraryError) Error() string {
	parts := make([]string, len(e.Tried))
	for i, n := range e.Tried {
		parts[i] = n + ": " + e.Errors[i]
	}
	return "cannot load any of " + strings.Join(e.Tried, ", ") + " (" + strings.Join(parts, "; ") + ")"
}

// Is makes a missing library "runtime not available".
func (e *LibraryError) Is(target error) bool { return target == error(errkind.NotAvailable) }

// MissingSymbolsError reports a library that lacks required entry points,
// all of them. A library too old to be used is as good as none, so it
// matches errkind.NotAvailable.
type MissingSymbolsError struct {
	Library string
	Symbols []string
}

func (e *MissingSymbolsError) Error() string {
	return e.Library + " lacks " + strings.Join(e.Symbols, ", ")
}

// Is makes an unusable library "runtime not available".
func (e *MissingSymbolsError) Is(target error) bool {
	return target == error(errkind.NotAvailable)
}
