package usm

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/syclobj"
)

// FromValue keeps the selectors it parsed (selectorCache): a cached answer
// must be the parse's own, errors must be reported every time, and hostile
// strings must not grow the cache without bound.
func TestSyclobjFromValueCacheAgreesWithParse(t *testing.T) {
	for _, s := range []string{"host", "opencl:cpu:0", "level_zero:gpu", "2", "opencl:cpu,level_zero:gpu:1", "*"} {
		want, err := syclobj.ParseSelector(s)
		require.NoError(t, err)
		for range 3 { // parsed, then served from the cache
			got, err := syclobjFromValue(s)
			require.NoError(t, err)
			sel, ok := got.(syclobj.Selector)
			require.True(t, ok)
			require.Equal(t, want.String(), sel.String())
			require.Equal(t, want.Filters(), sel.Filters())
		}
	}
	for range 2 {
		_, err := syclobjFromValue("gpu:opencl")
		var se *syclobj.SelectorError
		require.ErrorAs(t, err, &se, "a bad selector is refused every time")
	}
	require.Nil(t, parsed.get("gpu:opencl"))
}

func TestSyclobjFromValueCacheIsBounded(t *testing.T) {
	long := "opencl:cpu" + strings.Repeat(",opencl:cpu", selectorCacheKeyMax)
	_, err := syclobjFromValue(long)
	require.NoError(t, err)
	require.Nil(t, parsed.get(long), "long keys are not kept")
	for i := range 2 * selectorCacheMax {
		_, err := syclobjFromValue(strconv.Itoa(i))
		require.NoError(t, err)
	}
	parsed.mu.RLock()
	n := len(parsed.m)
	parsed.mu.RUnlock()
	require.LessOrEqual(t, n, selectorCacheMax)
}
