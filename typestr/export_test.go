package typestr

// Canonical is canonical, for the tests of package typestr_test.
func Canonical(t Type) Type { return t.canonical() }
