package usm

import (
	"github.com/usmbridge/usmbridge/internal/hooks"
	"github.com/usmbridge/usmbridge/internal/suaifields"
)

// What the module's own packages need of usm beyond its API (see package
// hooks for who uses each).
func init() {
	hooks.NewAllocation = newAllocation
	hooks.SyclobjFor = (*Registry).syclobjFor
	hooks.ParseFields = func(f suaifields.Fields) (Interface, error) { return parseFields(f, nil) }
	hooks.BindFields = (*Registry).parseFields
	hooks.SyclobjFromValue = syclobjFromValue
}
