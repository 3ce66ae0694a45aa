package refcount

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestCount(t *testing.T) {
	var c Count
	if c.Live() || c.Retain() || c.Release() {
		t.Fatal("the zero Count must be dead")
	}
	c.Init()
	if !c.Retain() || c.Release() || !c.Live() {
		t.Fatal("retain/release of a live count")
	}
	if !c.Release() {
		t.Fatal("the last release must report last")
	}
	if c.Live() || c.Retain() || c.Release() {
		t.Fatal("a dead count must stay dead")
	}
}

// Exactly one of many concurrent final releases reports last.
func TestCountConcurrent(t *testing.T) {
	for range 100 {
		var c Count
		c.Init()
		const g = 16
		for range g - 1 {
			c.Retain()
		}
		var lasts atomic.Int32
		var wg sync.WaitGroup
		for range g + 4 { // 4 extra releases must be ignored
			wg.Add(1)
			go func() {
				defer wg.Done()
				if c.Release() {
					lasts.Add(1)
				}
			}()
		}
		wg.Wait()
		if lasts.Load() != 1 {
			t.Fatalf("%d releases reported last", lasts.Load())
		}
	}
}
