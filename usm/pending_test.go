package usm_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/usm"
)

// gatedEvents is an event source whose events complete when the test
// says (done), with the reference counts a runtime keeps: CopyEvent adds
// one, ReleaseEvent drops one, and an event's native release is its
// last. It records which waits and releases reached it.
type gatedEvents struct {
	mu       sync.Mutex
	refs     map[uint64]int // id -> the native event it names
	native   map[uint64]int // native event -> references
	done     map[int]chan struct{}
	next     uint64
	waited   []int
	released []int // native events whose last reference went
	copyErr  error
}

func newGated() *gatedEvents {
	return &gatedEvents{refs: map[uint64]int{}, native: map[uint64]int{}, done: map[int]chan struct{}{}}
}

// launch is a launch's event, pending until done(n).
func (g *gatedEvents) launch(n int) usm.Event {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next++
	g.refs[g.next] = n
	g.native[uint64(n)]++
	if g.done[n] == nil {
		g.done[n] = make(chan struct{})
	}
	return usm.NewEvent(g, g.next)
}

func (g *gatedEvents) finish(n int) { close(g.done[n]) }

func (g *gatedEvents) CopyEvent(id uint64) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.copyErr != nil {
		return 0, g.copyErr
	}
	n, ok := g.refs[id]
	if !ok {
		return 0, errors.New("released")
	}
	g.next++
	g.refs[g.next] = n
	g.native[uint64(n)]++
	return g.next, nil
}

func (g *gatedEvents) WaitEvent(id uint64) error {
	g.mu.Lock()
	n, ok := g.refs[id]
	ch := g.done[n]
	g.mu.Unlock()
	if !ok {
		return errors.New("released")
	}
	<-ch
	g.mu.Lock()
	g.waited = append(g.waited, n)
	g.mu.Unlock()
	return nil
}

func (g *gatedEvents) ReleaseEvent(id uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	n, ok := g.refs[id]
	if !ok {
		return nil
	}
	delete(g.refs, id)
	if g.native[uint64(n)]--; g.native[uint64(n)] == 0 {
		g.released = append(g.released, n)
	}
	return nil
}

func (g *gatedEvents) live() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.refs)
}

// A launch's event recorded as an array's pending work holds every
// reader of the array and of its copies until the work is done, with a
// reference of its own: the launcher closes its event at once, and the
// native event goes when the wait is over.
func TestPendingReadersWait(t *testing.T) {
	g := newGated()
	a := &usm.Array{}
	ev := g.launch(1)
	require.NoError(t, a.WrittenBy(ev))
	require.NoError(t, ev.Close()) // the launcher's reference
	assert.Equal(t, 1, g.live(), "the Pending holds its own")
	cp := *a // a copy (what Keep and a view are) shares the work
	assert.False(t, cp.Pending.Empty())

	read := make(chan error, 2)
	for _, x := range []*usm.Array{a, &cp} {
		go func() { read <- x.Wait() }()
	}
	select {
	case err := <-read:
		t.Fatalf("a reader went on before the work was done (%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	assert.False(t, a.Pending.Empty(), "the work a waiter waits for is pending until it is done")
	g.finish(1)
	require.NoError(t, <-read)
	require.NoError(t, <-read)
	assert.Equal(t, []int{1}, g.waited, "one wait reached the runtime; the other reader found the work done")
	assert.Equal(t, []int{1}, g.released)
	assert.True(t, a.Pending.Empty())
	assert.NoError(t, cp.Wait(), "a later wait returns at once")
}

// An unreachable Pending releases its events itself.
func TestPendingCleanup(t *testing.T) {
	g := newGated()
	func() {
		q := new(usm.Pending)
		ev := g.launch(2)
		require.NoError(t, q.Add(ev))
		require.NoError(t, q.Add(ev))
		assert.Len(t, q.Events(), 2)
		require.NoError(t, ev.Close())
	}()
	for i := 0; i < 50 && g.live() > 0; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, 0, g.live(), "the cleanup released the unreachable Pending's events")
	assert.Empty(t, g.waited)
}

// An event whose source cannot copy it (Level Zero's) is waited for by
// Add; the zero Event adds nothing; a failed copy is Add's error.
func TestPendingAddWithoutCopy(t *testing.T) {
	w := &waits{}
	var p usm.Pending
	require.NoError(t, p.Add(usm.NewEvent(w, 7)))
	assert.Equal(t, 1, w.n, "waited for at once")
	assert.True(t, p.Empty())
	require.NoError(t, p.Add(usm.Event{}))
	assert.True(t, p.Empty())

	g := newGated()
	g.copyErr = errors.New("no copy")
	assert.ErrorIs(t, p.Add(g.launch(1)), g.copyErr)
	assert.True(t, p.Empty())
}

// An NDArray's accessors and Close wait for the events WrittenBy
// recorded, through any view; Close gives the memory back after them.
func TestNDArrayWaitsForWrittenBy(t *testing.T) {
	reg := usm.NewRegistry(cpu.Default())
	dev, err := reg.Device("host")
	require.NoError(t, err)
	x, err := usm.Empty[float32](dev, usm.KindShared, 4)
	require.NoError(t, err)
	v, err := x.Slice(0, 0, 4, 2)
	require.NoError(t, err)

	g := newGated()
	ev := g.launch(1)
	require.NoError(t, x.WrittenBy(ev))
	require.NoError(t, ev.Close())
	arr, err := v.Array()
	require.NoError(t, err)
	assert.False(t, arr.Pending.Empty(), "the Array a view gives carries the work")

	read := make(chan error, 1)
	go func() { _, err := v.At(1); read <- err }()
	select {
	case <-read:
		t.Fatal("At read before the work was done")
	case <-time.After(50 * time.Millisecond):
	}
	g.finish(1)
	require.NoError(t, <-read)

	ev = g.launch(2)
	require.NoError(t, v.WrittenBy(ev))
	require.NoError(t, ev.Close())
	closed := make(chan error, 1)
	go func() { closed <- x.Close() }()
	select {
	case <-closed:
		t.Fatal("Close gave the memory back before the work was done")
	case <-time.After(50 * time.Millisecond):
	}
	g.finish(2)
	require.NoError(t, <-closed)
	assert.Equal(t, 0, g.live())
	assert.ErrorIs(t, x.WrittenBy(usm.Event{}), usm.ErrClosed)
}

// Done asks a source that can tell, without a wait; a source that cannot
// is ErrNotSupported; the zero Event is done.
func TestEventDone(t *testing.T) {
	done, err := usm.Event{}.Done()
	require.NoError(t, err)
	assert.True(t, done)
	_, err = usm.NewEvent(&waits{}, 1).Done()
	assert.ErrorIs(t, err, usm.ErrNotSupported)
	s := &statusEvents{}
	done, err = usm.NewEvent(s, 4).Done()
	require.NoError(t, err)
	assert.False(t, done)
	s.done = true
	done, err = usm.NewEvent(s, 4).Done()
	require.NoError(t, err)
	assert.True(t, done)
	assert.Equal(t, []uint64{4, 4}, s.asked)
}

type statusEvents struct {
	waits
	done  bool
	asked []uint64
}

func (s *statusEvents) EventDone(id uint64) (bool, error) {
	s.asked = append(s.asked, id)
	return s.done, nil
}
