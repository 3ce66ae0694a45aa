package levelzero

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/levelzero/internal/zeapi"
	"github.com/usmbridge/usmbridge/usm"
)

// TestOrderBeforeOnDevice holds the producer list back behind a barrier
// that waits for an event only the host signals (the fake driver queues
// an asynchronous list's commands behind it), appends the producer's
// result behind that, and orders the consumer after the producer.
// OrderBefore must return while the producer is held back (a host wait
// would spin forever: each case runs in a child with a timeout), and the
// consumer's next copy must see the result. "no ordering" shows that the
// consumer's copy otherwise reads the memory early.
func TestOrderBeforeOnDevice(t *testing.T) {
	for _, mode := range []string{"two lists", "repeated", "same list", "no ordering"} {
		t.Run(mode, func(t *testing.T) {
			if testutil.InChild("order/" + mode) {
				orderCase(t, mode)
				return
			}
			needDriver(t)
			testutil.RunChild(t, "order/"+mode, 60*time.Second).Expect(t, 0, "PASS")
		})
	}
}

func orderCase(t *testing.T, mode string) {
	b := newBackend(t)
	ctx, err := b.Context(0)
	must(t, err)
	dev := b.devs[0].dev
	p, err := newImmediateList(ctx, dev, zeapi.QueueModeAsynchronous)
	must(t, err)
	defer func() { must(t, p.Close()) }()
	c := p
	if mode != "same list" {
		c, err = newImmediateList(ctx, dev, zeapi.QueueModeAsynchronous)
		must(t, err)
		defer func() { must(t, c.Close()) }()
	}
	gate := hostEvent(t, ctx)

	const n = 4096
	rounds := 1
	if mode == "repeated" {
		rounds = 3 * orderPairs // reuses every event pair
	}
	var bufs [3]uintptr
	for i := range bufs {
		a, err := b.Alloc(0, usm.KindShared, n)
		must(t, err)
		defer func() { must(t, a.Free()) }()
		bufs[i] = a.Pointer()
	}
	x, src, h := bufs[0], bufs[1], bufs[2]
	for r := range rounds {
		fill := byte(r + 1)
		for i := range cmem.Bytes(src, n) {
			cmem.Bytes(src, n)[i] = fill
		}
		clear(cmem.Bytes(x, n))
		clear(cmem.Bytes(h, n))
		must(t, gate.hostReset())
		must(t, p.appendBarrier(nil, gate))   // holds p back until the host signals
		must(t, p.appendCopy(x, src, n, nil)) // the producer's result, held back
		if mode != "no ordering" {
			must(t, p.OrderBefore(c)) // returns although p is held back
		}
		must(t, c.appendCopy(h, x, n, nil)) // the consumer's next command
		got := cmem.Bytes(h, n)
		if got[0] != 0 {
			t.Fatalf("round %d: the consumer's copy ran before the producer's work", r)
		}
		must(t, gate.hostSignal())
		must(t, c.Wait())
		must(t, p.Wait())
		if mode == "no ordering" {
			if bytes.Equal(got, cmem.Bytes(src, n)) {
				t.Fatal("the control: an unordered copy should have read before the producer wrote")
			}
			return
		}
		if !bytes.Equal(got, cmem.Bytes(src, n)) {
			t.Fatalf("round %d: the consumer's copy did not see the producer's result (got %d, want %d)", r, got[0], fill)
		}
	}
}

// OrderBefore refuses what Level Zero cannot order on the device, and
// usm.Order then waits on the host.
func TestOrderBeforeRefuses(t *testing.T) {
	b := newBackend(t)
	ctx, err := b.Context(0)
	must(t, err)
	l, err := newImmediateList(ctx, b.devs[0].dev, zeapi.QueueModeAsynchronous)
	must(t, err)
	defer l.Close()
	other, err := ctx.UnsafeBorrowQueue(ctx.Native()) // any non-zero handle: never used as a queue here
	must(t, err)
	defer other.Close()
	for name, c := range map[string]usm.Queue{"not Level Zero": hostQueue{}, "a command queue": other} {
		if err := l.OrderBefore(c); !errors.Is(err, usm.ErrNotSupported) {
			t.Errorf("%s: %v, want ErrNotSupported", name, err)
		}
	}
	must(t, usm.Order(l, hostQueue{}))
}

type hostQueue struct{}

func (hostQueue) Wait() error { return nil }
