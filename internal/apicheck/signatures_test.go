package apicheck

import (
	"testing"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// No exported declaration of a public package mentions a type that users
// cannot name: what go doc shows, they can write. Internal types are
// exported through aliases in the public package that owns them.
func TestNoInternalTypesInPublicAPI(t *testing.T) {
	root := testutil.ModuleRoot()
	c, err := NewChecker(root)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := Public(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range pkgs {
		pkg, err := c.Check(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, s := range InternalTypes(pkg) {
			t.Errorf("%s: exported API names an internal type: %s", dir, s)
		}
	}
}
