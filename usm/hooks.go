package usm

import (
	"github.com/usmbridge/usmbridge/internal/suaifields"
	"github.com/usmbridge/usmbridge/internal/usmhook"
)

// What the module's own packages need of usm beyond its API (see package
// usmhook for who uses each).
func init() {
	usmhook.NewAllocation = newAllocation
	usmhook.SyclobjFor = (*Registry).syclobjFor
	usmhook.ParseFields = func(f suaifields.Fields) (Interface, error) { return parseFields(f, nil) }
	usmhook.BindFields = (*Registry).parseFields
}
