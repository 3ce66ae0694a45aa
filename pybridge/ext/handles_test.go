//go:build cgo

package main

import (
	"testing"

	"github.com/usmbridge/usmbridge/usm"
)

// The handle table replaces cgo.Handle: 0 and handles not in use are
// nobody's, a removed handle is reused, every live handle keeps its own
// entry, and a parked (spare) entry is nobody's until it is live again.
func TestHandleTable(t *testing.T) {
	var tab handleTable
	live := func() *entry { return &entry{arr: new(usm.Array)} }
	a, b, c := live(), live(), live()
	ha, hb := tab.put(a), tab.put(b)
	if ha == 0 || hb == 0 || ha == hb {
		t.Fatalf("handles %d, %d", ha, hb)
	}
	for _, tc := range []struct {
		name string
		h    int64
		want *entry
	}{{"a", ha, a}, {"b", hb, b}, {"zero", 0, nil}, {"negative", -1, nil}, {"past the end", hb + 1, nil}} {
		if got := tab.get(tc.h); got != tc.want {
			t.Errorf("%s: get(%d) = %p, want %p", tc.name, tc.h, got, tc.want)
		}
	}
	tab.remove(ha)
	tab.remove(ha) // a second remove does nothing
	if tab.get(ha) != nil {
		t.Error("a removed handle still resolves")
	}
	if hc := tab.put(c); hc != ha || tab.get(hc) != c || tab.get(hb) != b {
		t.Errorf("reuse: put(c) = %d (freed %d)", hc, ha)
	}
	if hd := tab.put(a); hd == ha || hd == hb {
		t.Errorf("a live handle was handed out again: %d", hd)
	}
	b.arr = nil // parked, as finishCRelease leaves a spare entry
	if tab.get(hb) != nil {
		t.Error("a parked entry resolves")
	}
	if he := tab.put(live()); he == hb {
		t.Error("a parked entry's slot was handed out again")
	}
	b.arr = new(usm.Array) // reused by the next fast import
	if tab.get(hb) != b {
		t.Error("a parked entry made live again does not resolve")
	}
}
