package apicheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// InternalTypes finds a signature that names an internal type and accepts
// one that names it through an alias.
func TestInternalTypesFixture(t *testing.T) {
	c, err := NewChecker(testutil.ModuleRoot())
	require.NoError(t, err)
	pkg, err := c.Check("internal/apicheck/testdata/sample")
	require.NoError(t, err)
	assert.Equal(t, []string{"sample.Leaky: github.com/usmbridge/usmbridge/internal/dlabi.Device"}, InternalTypes(pkg))
}
