package levelzero

import (
	"errors"
	"testing"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/usm"
)

// The route a SYCL runtime's Level Zero context takes to an extent: its
// platform's native driver handle finds the Driver, its native context
// handle is wrapped without taking ownership, and zeMemGetAddressRange on
// the wrapper measures allocations made through the owner.
func TestForeignContextAddressRange(t *testing.T) {
	needDriver(t)
	owner, err := drivers[0].NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Destroy()
	dev := drivers[0].devices[0]

	d, err := DriverOf(drivers[0].h)
	if err != nil || d != drivers[0] {
		t.Fatalf("DriverOf(driver 0) = %v, %v", d, err)
	}
	for _, raw := range []uintptr{0, 1, owner.h} {
		if _, err := DriverOf(raw); !errors.Is(err, usm.ErrValue) {
			t.Errorf("DriverOf(%#x) = %v, want ErrValue", raw, err)
		}
	}
	before := mustFake(t)
	foreign, err := d.UnsafeContext(owner.h)
	if err != nil {
		t.Fatal(err)
	}
	const size = 100
	for _, alloc := range []func() (uintptr, error){
		func() (uintptr, error) { return owner.AllocHost(size, 0) },
		func() (uintptr, error) { return owner.AllocDevice(dev, size, 0) },
		func() (uintptr, error) { return owner.AllocShared(dev, size, 0) },
	} {
		p, err := alloc()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []uintptr{p, p + 1, p + size - 1} {
			if base, n, err := foreign.AddressRange(q); err != nil || base != p || n != size {
				t.Errorf("AddressRange(base+%d) = %#x, %d, %v; want %#x, %d", q-p, base, n, err, p, size)
			}
		}
		must(t, owner.Free(p))
		if _, _, err := foreign.AddressRange(p); err == nil {
			t.Errorf("a freed allocation has an address range")
		}
	}
	c := cmem.Alloc(64)
	defer cmem.Free(c, 64)
	_, _, err = foreign.AddressRange(c)
	wantCallError(t, err, "zeMemGetAddressRange", ResultErrorUnknown)

	// Destroying the wrapper leaves the runtime's context alone.
	must(t, foreign.Destroy())
	if after := mustFake(t); after.Contexts != before.Contexts {
		t.Errorf("contexts %d → %d: the wrapper destroyed the owner's context", before.Contexts, after.Contexts)
	}
	if _, _, err := foreign.AddressRange(c); !errors.Is(err, usm.ErrValue) {
		t.Errorf("query through a destroyed wrapper: %v", err)
	}
	if p, err := owner.AllocHost(8, 0); err != nil {
		t.Errorf("the owner's context died with the wrapper: %v", err)
	} else {
		must(t, owner.Free(p))
	}
}
