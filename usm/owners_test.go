package usm

import (
	"sync"
	"testing"

	"github.com/usmbridge/usmbridge/syclobj"
)

type stubBackend struct{ name string }

func (*stubBackend) Name() syclobj.Backend            { return syclobj.OpenCL }
func (*stubBackend) Devices() []syclobj.Device        { return nil }
func (*stubBackend) QueryPointer(uintptr) PointerInfo { return PointerInfo{Device: -1} }
func nop() error                                      { return nil }

type valueBackend struct{ _ []syclobj.Device } // not comparable

func (valueBackend) Name() syclobj.Backend            { return syclobj.OpenCL }
func (valueBackend) Devices() []syclobj.Device        { return nil }
func (valueBackend) QueryPointer(uintptr) PointerInfo { return PointerInfo{Device: -1} }

func TestOwnerTable(t *testing.T) {
	b1, b2 := &stubBackend{"1"}, &stubBackend{"2"}
	a := NewAllocation(b1, 0x10000, 64, KindDevice, 0, nop)
	if got := owners.find(b1, 0x10000+63); got != a {
		t.Fatalf("interior pointer: %v", got)
	}
	if owners.find(b1, 0x10000+64) != nil || owners.find(b2, 0x10000) != nil || owners.find(nil, 0x10000) != nil {
		t.Fatal("found outside the allocation or under another backend")
	}
	// The same memory under another backend (a wrapper) is its own entry.
	w := NewAllocation(b2, 0x10000, 64, KindShared, 0, nop)
	if owners.find(b2, 0x10020) != w {
		t.Fatal("wrapping backend's allocation not found")
	}
	// Memory that overlaps a listed allocation of the same backend is not
	// listed: the first answer stays.
	dup := NewAllocation(b1, 0x10020, 64, KindDevice, 0, nop)
	if dup.listed || owners.find(b1, 0x10030) != a {
		t.Fatal("an overlapping allocation replaced the first")
	}
	// Size 0 still owns its first byte.
	z := NewAllocation(b1, 0x20000, 0, KindDevice, 0, nop)
	if owners.find(b1, 0x20000) != z {
		t.Fatal("size-0 allocation not found")
	}
	// Unlisted before the memory goes back.
	for _, x := range []*Allocation{a, w, dup, z} {
		if err := x.Free(); err != nil {
			t.Fatal(err)
		}
	}
	if owners.find(b1, 0x10000) != nil || owners.find(b2, 0x10000) != nil || owners.find(b1, 0x20000) != nil {
		t.Fatal("a freed allocation is still found")
	}
	// Neither nil nor non-comparable backends are listed (a map key of a
	// non-comparable type would panic).
	if NewAllocation(nil, 0x30000, 8, KindHost, -1, nop).listed ||
		NewAllocation(valueBackend{}, 0x30000, 8, KindHost, -1, nop).listed {
		t.Fatal("listed an allocation no registry can bind")
	}
	if owners.find(valueBackend{}, 0x30000) != nil {
		t.Fatal("found under a non-comparable backend")
	}
}

func TestOwnerTableConcurrent(t *testing.T) {
	b := &stubBackend{"c"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := uintptr(0x100000 + (g*200+i)*64)
				a := NewAllocation(b, p, 64, KindDevice, 0, nop)
				if owners.find(b, p+8) != a {
					t.Error("own allocation not found")
					return
				}
				_ = a.Free()
			}
		}()
	}
	wg.Wait()
}
