package syclobj

import (
	"strconv"
	"strings"
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Backend names a SYCL backend. The zero value means "any".
type Backend uint8

const (
	AnyBackend Backend = iota
	LevelZero
	OpenCL
	CUDA
	HIP
	Host // usmbridge's own cpu backend (no SYCL runtime)
)

var backendNames = [...]string{"*", "level_zero", "opencl", "cuda", "hip", "host"}

func (b Backend) String() string {
	if int(b) < len(backendNames) {
		return backendNames[b]
	}
	return "Backend(" + strconv.Itoa(int(b)) + ")"
}

// DeviceType is a SYCL device type. The zero value means "any".
type DeviceType uint8

const (
	AnyType DeviceType = iota
	CPU
	GPU
	Accelerator
	HostDevice
)

var typeNames = [...]string{"*", "cpu", "gpu", "accelerator", "host"}

func (t DeviceType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "DeviceType(" + strconv.Itoa(int(t)) + ")"
}

func backendByName(s string) (Backend, bool) {
	switch s {
	case "level_zero", "ext_oneapi_level_zero":
		return LevelZero, true
	case "opencl":
		return OpenCL, true
	case "cuda":
		return CUDA, true
	case "hip":
		return HIP, true
	case "host":
		return Host, true
	}
	return AnyBackend, false
}

func typeByName(s string) (DeviceType, bool) {
	switch s {
	case "cpu":
		return CPU, true
	case "gpu":
		return GPU, true
	case "accelerator":
		return Accelerator, true
	case "host":
		return HostDevice, true
	}
	return AnyType, false
}

// Filter is one backend:device_type:device_num triple.
type Filter struct {
	Backend Backend    // AnyBackend if absent or '*'
	Type    DeviceType // AnyType if absent or '*'
	Number  int        // -1 if absent or '*'
}

func (f Filter) String() string {
	num := "*"
	if f.Number >= 0 {
		num = strconv.Itoa(f.Number)
	}
	return f.Backend.String() + ":" + f.Type.String() + ":" + num
}

// Device describes one device as a backend enumerates it; a list of them in
// the global order is what selectors resolve against.
type Device struct {
	Backend Backend
	Type    DeviceType
	Name    string
}

func (d Device) String() string {
	return d.Backend.String() + ":" + d.Type.String() + " " + strconv.Quote(d.Name)
}

func (f Filter) accepts(d Device) bool {
	return (f.Backend == AnyBackend || f.Backend == d.Backend) && (f.Type == AnyType || f.Type == d.Type)
}

// Selector is a parsed filter selector string. It is also a syclobj value
// (the "filter string" variant). It holds one pointer to the parse, which
// never changes, so copying it is cheap and storing it in an Obj
// allocates nothing (an import sets the Obj of every array it makes).
// Selectors compare with ==; the zero Selector, Selector{}, was never
// parsed (usm.Registry.SelectorFor returns it with its error).
type Selector struct{ p *parsed }

type parsed struct {
	text    string
	filters []Filter
}

// SelectorError reports a malformed selector or one that matches no device.
// It matches usm.ErrValue.
type SelectorError struct {
	Selector string
	Reason   string
	Seen     []Device // devices considered, for "no match" errors
}

func (e *SelectorError) Error() string {
	s := "filter selector " + errkind.Quote(e.Selector) + ": " + e.Reason
	if e.Reason == noMatch {
		if len(e.Seen) == 0 {
			s += " (no devices available)"
		} else {
			parts := make([]string, len(e.Seen))
			for i, d := range e.Seen {
				parts[i] = strconv.Itoa(i) + "=" + d.String()
			}
			s += " (devices seen: " + strings.Join(parts, ", ") + ")"
		}
	}
	return s
}

func (e *SelectorError) Is(target error) bool { return target == error(errkind.Value) }

const noMatch = "no device matches"

// maxDeviceNum bounds device numbers so they always fit an int32 device id.
const maxDeviceNum = 1<<31 - 1

// ParseSelector parses a filter selector string strictly. It never panics.
// A program hands over the same few strings ("host", "opencl:cpu:0") with
// every array, so each string is parsed once and its Selector kept (up to
// a bound); a malformed string is parsed, and refused, every time.
func ParseSelector(s string) (Selector, error) {
	if sel, ok := cache.get(s); ok {
		return sel, nil
	}
	sel, err := parseSelector(s)
	if err != nil {
		return Selector{}, err
	}
	cache.put(s, sel)
	return sel, nil
}

func parseSelector(s string) (Selector, error) {
	bad := func(reason string) (Selector, error) {
		return Selector{}, &SelectorError{Selector: s, Reason: reason}
	}
	if s == "" {
		return bad("empty selector")
	}
	var filters []Filter
	for i, fs := range strings.Split(s, ",") {
		f, reason := parseFilter(fs)
		if reason != "" {
			if strings.Contains(s, ",") {
				reason = "filter " + strconv.Itoa(i) + " " + errkind.Quote(fs) + ": " + reason
			}
			return bad(reason)
		}
		filters = append(filters, f)
	}
	return Selector{p: &parsed{text: s, filters: filters}}, nil
}

// cache holds the Selectors ParseSelector made, by string. It is bounded
// in entries and key length, so hostile input cannot grow it without
// limit.
var cache = selectorCache{m: map[string]Selector{}}

const (
	selectorCacheMax    = 256
	selectorCacheKeyMax = 128
)

type selectorCache struct {
	mu sync.RWMutex
	m  map[string]Selector
}

func (c *selectorCache) get(s string) (Selector, bool) {
	c.mu.RLock()
	sel, ok := c.m[s]
	c.mu.RUnlock()
	return sel, ok
}

func (c *selectorCache) put(s string, sel Selector) {
	if len(s) > selectorCacheKeyMax {
		return
	}
	c.mu.Lock()
	if len(c.m) < selectorCacheMax {
		c.m[s] = sel
	}
	c.mu.Unlock()
}

// parseFilter parses one triple; a non-empty reason means it is malformed.
func parseFilter(fs string) (Filter, string) {
	f := Filter{Number: -1}
	if fs == "" {
		return f, "empty filter"
	}
	parts := strings.Split(fs, ":")
	if len(parts) > 3 {
		return f, "more than three parts (want backend:device_type:device_num)"
	}
	// slot is the next position a part may fill: 0 backend, 1 type, 2 number.
	slot := 0
	for _, p := range parts {
		switch {
		case p == "":
			return f, "empty part (want backend:device_type:device_num, each optional)"
		case p == "*":
			if slot > 2 {
				return f, "'*' after device_num"
			}
			slot++
		case isDigits(p):
			if slot > 2 {
				return f, "device_num " + errkind.Quote(p) + " given twice"
			}
			n, err := strconv.Atoi(p)
			if err != nil || n > maxDeviceNum {
				return f, "device_num " + errkind.Quote(p) + " is out of range"
			}
			f.Number, slot = n, 3
		default:
			if b, ok := backendByName(p); ok && slot == 0 {
				f.Backend, slot = b, 1
				continue
			}
			if t, ok := typeByName(p); ok && slot <= 1 {
				f.Type, slot = t, 2
				continue
			}
			if _, ok := backendByName(p); ok {
				return f, "backend " + errkind.Quote(p) + " must come first and only once"
			}
			if _, ok := typeByName(p); ok {
				return f, "device type " + errkind.Quote(p) + " must come before device_num and only once"
			}
			if (p[0] == '-' || p[0] == '+') && isDigits(p[1:]) {
				return f, "device_num " + errkind.Quote(p) + " must be a non-negative decimal integer without sign"
			}
			return f, "unknown part " + errkind.Quote(p) + " (backends: opencl, level_zero, ext_oneapi_level_zero, cuda, hip, host; device types: cpu, gpu, accelerator, host)"
		}
	}
	return f, ""
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// MustParseSelector is ParseSelector for constant strings; it panics on error.
func MustParseSelector(s string) Selector {
	sel, err := ParseSelector(s)
	if err != nil {
		panic(err)
	}
	return sel
}

// String returns the selector as it was written ("" for the zero
// Selector).
func (s Selector) String() string {
	if s.p == nil {
		return ""
	}
	return s.p.text
}

// Filters returns the parsed filters.
func (s Selector) Filters() []Filter {
	if s.p == nil {
		return nil
	}
	return append([]Filter(nil), s.p.filters...)
}

// Resolve returns the index into devs (the global order) of the first device
// accepted by any filter of s. No match is a *SelectorError listing devs.
func (s Selector) Resolve(devs []Device) (int, error) {
	if s.p == nil { // the zero Selector, never parsed
		return -1, &SelectorError{Selector: "", Reason: "zero Selector (use ParseSelector)"}
	}
	// seen[i] counts, for filter i, the devices accepted so far, so that
	// device_num is relative to the filter's other parts.
	var seenBuf [4]int
	seen := seenBuf[:0]
	for range s.p.filters {
		seen = append(seen, 0)
	}
	for di, d := range devs {
		for fi, f := range s.p.filters {
			if !f.accepts(d) {
				continue
			}
			if f.Number < 0 || f.Number == seen[fi] {
				return di, nil
			}
			seen[fi]++
		}
	}
	return -1, &SelectorError{Selector: s.p.text, Reason: noMatch, Seen: append([]Device(nil), devs...)}
}

func (Selector) isSyclobj() {}
