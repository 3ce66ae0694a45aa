package dtype

import (
	"slices"
	"testing"

	"github.com/usmbridge/usmbridge/internal/dlabi"
)

// Valid's table says what widths says, for every code, width and byte
// order a Type can hold.
func TestValidIsWidths(t *testing.T) {
	for c := range 256 {
		for b := range 256 {
			for _, swapped := range []bool{false, true} {
				ty := Type{code: dlabi.TypeCode(c), bits: uint8(b), swapped: swapped}
				want := slices.Contains(widths(ty.code), ty.bits) && (!swapped || b > 8)
				if ty.Valid() != want {
					t.Fatalf("Type{code %d, bits %d, swapped %v}.Valid() = %v, want %v", c, b, swapped, ty.Valid(), want)
				}
			}
		}
	}
}
