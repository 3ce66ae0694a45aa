// Package pyext writes CPython extension modules in Go: a Go package's
// Module function defines the module's functions, classes, exceptions and
// attributes, and `python -m usmbridge.build` links it with pyext's C half
// into a module Python imports. Functions take arrays from NumPy, dpnp,
// dpctl, jax, tvm-ffi or any DLPack producer without a copy, and return
// arrays Go allocated.
//
// What nanobind (nb::class_, def_static, nb::exception, std::optional,
// std::tuple, nb::ndarray) and PyO3 (#[pyclass], #[staticmethod],
// #[classmethod], create_exception!, Option<T>, tuples) give is here as Go
// types say it:
//
//   - functions: Func0 … Func4R, and Func of any arity; a parameter's Go
//     type says what it takes (Param), options what more (Default,
//     Optional, KeywordOnly, OneOf, the array constraints); a *T of a
//     scalar T tells None from zero; several results are a tuple; an
//     iter.Seq result is an iterator; functions of one name over other
//     element types are overloads;
//   - classes: NewClass, with constructors (Init0 … Init4), methods
//     (Method0 … Method3R, Method; Static and ClassMethod), properties and
//     the special methods Python calls; Python may subclass them, and a
//     class with __getstate__ and __setstate__ pickles;
//   - errors: a Go error's kind is the exception raised (ValueError,
//     TypeError, IndexError, ArgValueError naming the parameter, ...), and
//     NewException makes a Go error type an exception class of the
//     module's own; Module.Const adds attributes;
//   - results on a device: Empty, EmptyLike, Device; results an argument
//     as given: Result.
//
// Check reports a definition's mistakes from a Go test, as the import
// would; Stub returns the type stub Python's type checkers read. The
// examples print what Python sees of each; docs/extensions.md walks
// through a module and a class from start to end, and RATIONALE.md says
// why pyext is the way it is.
package pyext
