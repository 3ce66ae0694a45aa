package programs

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Key is what a program is kept by: the device it is built for, its
// source (OpenCL C, or a SPIR-V module when IL) and its build options.
// Dev is the device's native handle, or 0 where the cache tells devices
// apart otherwise (dpctl compares SYCL devices with the runtime).
type Key struct {
	Dev   uintptr
	IL    bool
	Src   string
	Flags string
}

// LookupKey returns the key of a source for a lookup. A SPIR-V module's
// bytes are Src without a copy, so asking for a kept program allocates
// nothing; Keep copies them for a key that is kept.
func LookupKey(dev uintptr, openCLC string, spirv []byte, options string) Key {
	k := Key{Dev: dev, IL: len(spirv) > 0, Src: openCLC, Flags: options}
	if k.IL {
		k.Src = unsafe.String(&spirv[0], len(spirv))
	}
	return k
}

// Keep returns k holding copies of its strings: a kept key holds none of
// the caller's memory (LookupKey's view of its SPIR-V).
func (k Key) Keep() Key {
	k.Src, k.Flags = strings.Clone(k.Src), strings.Clone(k.Flags)
	return k
}

// CFlags returns the build options NUL-terminated, as the runtimes'
// compilers take them (usm.ProgramSource.Check refused a NUL inside).
func (k Key) CFlags() []byte { return append([]byte(k.Flags), 0) }

// Program is what a Cache keeps: a backend's *Program.
type Program interface {
	comparable
	Close() error
}

// Cache holds the programs built in one context by Key, each built once,
// until the program or the cache is closed. Its methods are safe for
// concurrent use; the zero Cache is empty and open.
type Cache[P Program] struct {
	mu     sync.Mutex
	progs  map[Key]P
	closed bool
}

// Get returns the program of key, or the one build makes of key's kept
// copy, which is then kept. build runs under the cache's lock: however
// many ask at once, a program is built once. A closed cache is an
// ErrValue error (op names the caller).
func (c *Cache[P]) Get(op string, key Key, build func(kept Key) (P, error)) (P, error) {
	var none P
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return none, errkind.New(errkind.Value, op, "the queue's context is closed")
	}
	if p, ok := c.progs[key]; ok {
		return p, nil
	}
	key = key.Keep()
	p, err := build(key)
	if err != nil {
		return none, err
	}
	if c.progs == nil {
		c.progs = map[Key]P{}
	}
	c.progs[key] = p
	return p, nil
}

// Drop forgets p if it is still key's program: a program's Close drops
// it, so the next Get of its key builds it again. A nil Cache keeps
// nothing.
func (c *Cache[P]) Drop(key Key, p P) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if q, ok := c.progs[key]; ok && q == p {
		delete(c.progs, key)
	}
	c.mu.Unlock()
}

// Close refuses later Gets and closes every program (outside the lock:
// each Close drops itself), all of them whatever fails; it returns the
// first error. A nil Cache has nothing to close.
func (c *Cache[P]) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	c.closed = true
	ps := make([]P, 0, len(c.progs))
	for _, p := range c.progs {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	var first error
	for _, p := range ps {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Kernels are a program's kernels by name, each made once (K is
// *usm.Kernel). Get and Close are serialised: no kernel is made while the
// program is released. The zero Kernels is empty.
type Kernels[K Program] struct {
	mu sync.Mutex
	m  map[string]K
}

// Get returns the kernel of that name, or the one create makes of the name
// NUL-terminated (as the runtimes take it), which is then kept. A name
// holding a NUL byte is an ErrValue error (op names the caller).
func (ks *Kernels[K]) Get(op, name string, create func(cname []byte) (K, error)) (K, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if k, ok := ks.m[name]; ok {
		return k, nil
	}
	var none K
	if strings.IndexByte(name, 0) >= 0 {
		return none, errkind.New(errkind.Value, op, "the kernel name holds a NUL byte")
	}
	k, err := create(append([]byte(name), 0))
	if err != nil {
		return none, err
	}
	if ks.m == nil {
		ks.m = map[string]K{}
	}
	ks.m[name] = k
	return k, nil
}

// Close closes the kernels, then runs release (the program's own native
// release), since a kernel goes before its program. It stops at the
// first failure: a kernel that fails stays with those not yet closed, and
// release does not run.
func (ks *Kernels[K]) Close(release func() error) error {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for name, k := range ks.m {
		if err := k.Close(); err != nil {
			return err
		}
		delete(ks.m, name)
	}
	return release()
}
