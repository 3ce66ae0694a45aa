package testutil

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/usmbridge/usmbridge/usm"
)

// ClosingBackend is a native backend with a Close.
type ClosingBackend interface {
	usm.Backend
	usm.Allocator
	Copy(dst, src, n uintptr) error
	Queue(device int) (usm.Queue, error)
	Close() error
}

// CloseWhileBusy closes b while goroutines allocate shared memory on
// device dev, copy into it and free it through b (run it with -race):
// Close must refuse with usm.ErrValue while memory is live and wait for
// calls in progress, and every call after it must fail with usm.ErrValue.
// The caller's leak check shows that nothing stayed behind.
func CloseWhileBusy(t *testing.T, b ClosingBackend, dev int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() {
			src := bytes.Repeat([]byte{byte(g)}, 256)
			for {
				a, err := b.Alloc(dev, usm.KindShared, 256)
				if err != nil {
					if !errors.Is(err, usm.ErrValue) {
						errs <- err
					}
					return
				}
				if err := b.Copy(a.Pointer(), uintptr(unsafe.Pointer(&src[0])), 256); err != nil {
					errs <- err
				}
				if err := a.Free(); err != nil {
					errs <- err
				}
			}
		})
	}
	time.Sleep(5 * time.Millisecond)
	for {
		err := b.Close()
		if err == nil {
			break
		}
		if !errors.Is(err, usm.ErrValue) {
			t.Fatalf("Close while busy: %v", err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := b.Alloc(dev, usm.KindShared, 8); !errors.Is(err, usm.ErrValue) {
		t.Errorf("Alloc after Close: %v", err)
	}
	if _, err := b.Queue(dev); !errors.Is(err, usm.ErrValue) {
		t.Errorf("Queue after Close: %v", err)
	}
	if k := b.QueryPointer(1).Kind; k != usm.KindUnknown {
		t.Errorf("QueryPointer after Close: %v", k)
	}
}
