// Package ffi is the only package of usmbridge that imports purego. It
// keeps the rules of calling native code in one place:
//
//   - one loader: OpenLib opens a library and Lib.Resolve binds a table of
//     entry points, each declared Required or Optional. Every required
//     symbol that is missing is listed in one *MissingSymbolsError; an
//     optional one is looked up, left zero and reported by Lib.Absent, and
//     its caller checks Fn.Present before use. Require only what the
//     library's own code calls: a required symbol that is absent disables
//     the whole runtime.
//   - one way to call: an entry point is an Fn, called through SyscallN
//     (about 3× cheaper than purego's reflection-based wrappers). Binding
//     packages wrap every Fn in a typed Go function, so no call site passes
//     untyped arguments; functions that take a struct by value or floats
//     are registered as Go func values with Fn.Register instead.
//   - one handle discipline: Handle owns a native handle for a Go object.
//     Uses take a shared or exclusive lock, Close is idempotent and waits
//     for uses in progress, so a closed handle never reaches C.
//   - callbacks are created once per C signature for the life of the
//     process (purego has 2000 slots and never frees them).
package ffi
