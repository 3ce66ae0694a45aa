package extbridge

import "testing"

type gil struct{}
type object struct{ p uintptr }

// Get hands the extension exactly what Set published, and nothing for
// other type arguments (a mismatch ext's ub_init reports) or before Set.
func TestSetGet(t *testing.T) {
	if o, ok := Get[gil, object](); ok || o != nil {
		t.Fatalf("before Set: %v, %v", o, ok)
	}
	Set(Ops[gil, object]{Ptr: func(o object) uintptr { return o.p }})
	for _, c := range []struct {
		name string
		get  func() bool
		want bool
	}{
		{"same types", func() bool { _, ok := Get[gil, object](); return ok }, true},
		{"other GIL type", func() bool { _, ok := Get[struct{}, object](); return ok }, false},
		{"other Object type", func() bool { _, ok := Get[gil, uintptr](); return ok }, false},
		{"pointer types", func() bool { _, ok := Get[*gil, *object](); return ok }, false},
	} {
		if got := c.get(); got != c.want {
			t.Errorf("%s: ok %v, want %v", c.name, got, c.want)
		}
	}
	o, _ := Get[gil, object]()
	if o.Ptr(object{p: 42}) != 42 {
		t.Error("Get returned other operations than Set published")
	}
}
