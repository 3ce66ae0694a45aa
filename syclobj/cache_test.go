package syclobj

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ParseSelector keeps the selectors it parsed (selectorCache): a cached
// answer must be the parse's own, errors must be reported every time, and
// hostile strings must not grow the cache without bound.
func TestParseSelectorCacheAgreesWithParse(t *testing.T) {
	freshCache(t)
	for _, s := range []string{"host", "opencl:cpu:0", "level_zero:gpu", "2", "opencl:cpu,level_zero:gpu:1", "*"} {
		want, err := parseSelector(s)
		require.NoError(t, err)
		for i := range 3 { // parsed, then served from the cache
			got, err := ParseSelector(s)
			require.NoError(t, err)
			require.Equal(t, want.String(), got.String())
			require.Equal(t, want.Filters(), got.Filters())
			if i > 0 {
				cached, ok := cache.get(s)
				require.True(t, ok)
				require.Same(t, cached.p, got.p, "served from the cache")
			}
		}
	}
	for range 2 {
		_, err := ParseSelector("gpu:opencl")
		var se *SelectorError
		require.ErrorAs(t, err, &se, "a bad selector is refused every time")
	}
	_, ok := cache.get("gpu:opencl")
	require.False(t, ok)
}

func TestParseSelectorCacheIsBounded(t *testing.T) {
	freshCache(t)
	long := "opencl:cpu" + strings.Repeat(",opencl:cpu", selectorCacheKeyMax)
	_, err := ParseSelector(long)
	require.NoError(t, err)
	_, ok := cache.get(long)
	require.False(t, ok, "long keys are not kept")
	for i := range 2 * selectorCacheMax {
		_, err := ParseSelector(strconv.Itoa(i))
		require.NoError(t, err)
	}
	cache.mu.RLock()
	n := len(cache.m)
	cache.mu.RUnlock()
	require.LessOrEqual(t, n, selectorCacheMax)
}

// freshCache gives the test an empty selector cache, and the package its
// own back afterwards: a test that fills the cache must not decide what
// another finds in it.
func freshCache(t *testing.T) {
	saved := cache.m
	cache.m = map[string]Selector{}
	t.Cleanup(func() { cache.m = saved })
}

// A Selector is one pointer, so an Obj holding it is made without an
// allocation: dlpack's Import sets the Obj of every array it makes.
func TestSelectorAsObjAllocatesNothing(t *testing.T) {
	sel := MustParseSelector("opencl:cpu:0")
	if n := testing.AllocsPerRun(100, func() { objSink = sel }); n != 0 {
		t.Fatalf("Obj of a Selector: %v allocations", n)
	}
}

var objSink Obj // escapes: a conversion stored here is made on the heap if it must be
