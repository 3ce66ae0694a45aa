package pyext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The names a module gives Python (its own, its functions', classes',
// methods', properties' and parameters') are held to one rule,
// nameProblem, which is Python's:
//
//	s.isidentifier() and not keyword.iskeyword(s) and unicodedata.normalize("NFKC", s) == s
//
// The first two are what the language accepts; the third is what a user's
// code can reach: Python NFKC-normalizes every identifier it reads in
// source, so a function named "ﬁt" (the ligature) would be looked up as
// "fit" by mod.ﬁt and never be found. usmbridge.build's name_problem
// (python/usmbridge/build.py) is the same rule for the module name, in
// Python; names_test.go holds the two equal over every code point.

// nameProblem says why s cannot be a name Python code writes (mod.s, a
// keyword argument s=...), or "" when it can.
func nameProblem(s string) string {
	switch {
	case !isIdentifier(s):
		return "is not a Python identifier"
	case keywords[s]:
		return "is a Python keyword"
	case !norm.NFKC.IsNormalString(s):
		return fmt.Sprintf("is not in the NFKC form to which Python normalizes the identifiers it reads (code that writes it names %q)",
			norm.NFKC.String(s))
	}
	return ""
}

// nameError is the definition error of a name that breaks the rule:
// `function name "class" is a Python keyword`.
func nameError(what, s string) error {
	if p := nameProblem(s); p != "" {
		return fmt.Errorf("%s name %q %s", what, s, p)
	}
	return nil
}

// moduleNameProblem says why a module's full name ("saxpy",
// "pkg.saxpy") cannot be imported by it, or "": each dotted part is held
// to nameProblem.
func moduleNameProblem(name string) string {
	for _, part := range strings.Split(name, ".") {
		if p := nameProblem(part); p != "" {
			if part == name {
				return p
			}
			return fmt.Sprintf("has a part %q that %s", part, p)
		}
	}
	return ""
}

// isIdentifier is Python's str.isidentifier: a first character of
// XID_Start or '_', the others of XID_Continue (Unicode's UAX #31).
func isIdentifier(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		if i == 0 && r != '_' && !xidStart(r) || i > 0 && !xidContinue(r) {
			return false
		}
	}
	return true
}

// idStart and idContinue are UAX #31's ID_Start and ID_Continue, from the
// general categories and properties Go's unicode package has.
func idStart(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo, unicode.Nl, unicode.Other_ID_Start) &&
		!unicode.In(r, unicode.Pattern_Syntax, unicode.Pattern_White_Space)
}

func idContinue(r rune) bool {
	return idStart(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue) &&
		!unicode.In(r, unicode.Pattern_Syntax, unicode.Pattern_White_Space)
}

// xidStart and xidContinue are XID_Start and XID_Continue: ID_Start and
// ID_Continue without the few characters whose NFKC form is not one
// (U+037A's is a space and a combining mark; U+0E33's starts with a
// combining mark), so that an identifier stays one once normalized.
func xidStart(r rune) bool {
	if !idStart(r) {
		return false
	}
	for i, n := range norm.NFKC.String(string(r)) {
		if i == 0 && !idStart(n) || i > 0 && !idContinue(n) {
			return false
		}
	}
	return true
}

func xidContinue(r rune) bool {
	if !idContinue(r) {
		return false
	}
	for _, n := range norm.NFKC.String(string(r)) {
		if !idContinue(n) {
			return false
		}
	}
	return true
}

// keywords are Python's keywords (3.10 to 3.15), which are not
// identifiers; soft keywords (match, case, type, _) are.
var keywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

// asciiProblem is the definition error of a parameter name that is not
// ASCII, or "": CPython's text signatures, from which inspect.signature and
// help() read a function's parameters, must be ASCII (inspect encodes them
// so, from 3.10 to 3.15), so a parameter named "ñ" would make every
// inspect.signature of its function fail.
func asciiProblem(param string) string {
	for i := 0; i < len(param); i++ {
		if param[i] >= utf8.RuneSelf {
			return fmt.Sprintf("parameter name %q is not ASCII, which CPython's text signatures "+
				"(what inspect.signature and help() read) must be", param)
		}
	}
	return ""
}

// docProblem says why doc cannot be a docstring, or "": CPython keeps the
// docs of C functions and types as C strings (PyMethodDef.ml_doc,
// Py_tp_doc) and decodes them as UTF-8, so a NUL would end the doc there
// (and the stub would say more than __doc__), and bytes that are not UTF-8
// would fail the import or every read of __doc__.
func docProblem(doc string) string {
	switch {
	case strings.IndexByte(doc, 0) >= 0:
		return "has a NUL character, which ends a docstring CPython keeps as a C string"
	case !utf8.ValidString(doc):
		return "is not valid UTF-8"
	}
	return ""
}

// docError is the definition error of a doc that docProblem refuses.
func docError(what string, doc string) error {
	if p := docProblem(doc); p != "" {
		return fmt.Errorf("the doc of %s %s", what, p)
	}
	return nil
}
