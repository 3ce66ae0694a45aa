package extmod

import (
	"sync"
	"sync/atomic"

	"github.com/usmbridge/usmbridge/pyext"
)

// Box is a value that another class's value holds (a Holder's), and whose
// Close is counted per box: a value closed twice (issue 41: a Box returned
// after its object went was wrapped again, and closed again) shows as a
// count of 2.
type Box struct{ id int }

var boxCloses struct {
	mu sync.Mutex
	n  map[int]int
}

func (b *Box) Close() error {
	boxCloses.mu.Lock()
	defer boxCloses.mu.Unlock()
	if boxCloses.n == nil {
		boxCloses.n = map[int]int{}
	}
	boxCloses.n[b.id]++
	return nil
}

// Holder holds a Box's value (Go's *Box, not its Python object).
type Holder struct{ box *Box }

// zero is a type of size zero: Go gives every allocation of it one
// address, so its objects cannot be told apart by their *zero.
type zero struct{}

var zeroCloses atomic.Int64

func (*zero) Close() error {
	zeroCloses.Add(1)
	return nil
}

// keptToken is a Token value Go keeps past its object (a type without
// Close: wrapped again when Go returns it).
var keptToken *token

// defineComposition adds classes whose values hold each other's
// (test_class_lifecycle.py's model, test_soundness.py's cases of issue
// 41), a class of a zero-size type, and overloaded methods.
func defineComposition(m *pyext.Module) {
	box := pyext.NewClass[Box](m, "Box", "A value a Holder's value may hold; box_closes(id) counts its Close.")
	pyext.Init1(box, func(id int) (*Box, error) { return &Box{id: id}, nil }, pyext.P("id"))
	pyext.Property(box, "id", "The box's number.", func(b *Box) (int, error) { return b.id, nil })
	// Overloads: one name over two element types, of a typed method and
	// of Method's any arity.
	pyext.Method1R(box, "kind", "The element type of x.", func(b *Box, x pyext.Array[float32]) (string, error) {
		return "float32", nil
	}, pyext.P("x"))
	pyext.Method1R(box, "kind", "", func(b *Box, x pyext.Array[float64]) (string, error) { return "float64", nil }, pyext.P("x"))
	pyext.Method(box, "first", "x[0] + k, and the box's number.", func(b *Box, x pyext.Array[float32], k int) (float64, error) {
		return float64(x.Slice()[0]) + float64(k) + float64(b.id)/1000, nil
	}, []pyext.Param{pyext.P("x", pyext.NDim(1)), pyext.P("k", pyext.Default(0))})
	pyext.Method(box, "first", "", func(b *Box, x pyext.Array[int32], k int) (float64, error) {
		return float64(x.Slice()[0]) + float64(k) + float64(b.id)/1000, nil
	}, []pyext.Param{pyext.P("x", pyext.NDim(1)), pyext.P("k", pyext.Default(0))})
	pyext.Func1R(m, "box_closes", "How many times the Box numbered id was closed.", func(id int) (int, error) {
		boxCloses.mu.Lock()
		defer boxCloses.mu.Unlock()
		return boxCloses.n[id], nil
	}, pyext.P("id"))

	holder := pyext.NewClass[Holder](m, "Holder", "Holds a Box's Go value, not its object.")
	pyext.Init1(holder, func(b *Box) (*Holder, error) { return &Holder{box: b}, nil }, pyext.P("box"))
	pyext.Method0R(holder, "box", "The Box held.", func(h *Holder) (*Box, error) { return h.box, nil })
	pyext.Func1R(m, "holder_of_new", "A Holder of a new Box numbered id, which no object holds yet.", func(id int) (*Holder, error) {
		return &Holder{box: &Box{id: id}}, nil
	}, pyext.P("id"))

	z := pyext.NewClass[zero](m, "Zero", "A class of a zero-size Go type.")
	pyext.Init0(z, func() (*zero, error) { return &zero{}, nil })
	pyext.Method0R(z, "itself", "The *zero, returned.", func(p *zero) (*zero, error) { return p, nil })
	pyext.Func0R(m, "zero_closes", "How many times a Zero was closed.", func() (int64, error) { return zeroCloses.Load(), nil })

	pyext.Func1(m, "keep_token", "Keep t's Go value.", func(t *token) error { keptToken = t; return nil }, pyext.P("t"))
	pyext.Func0R(m, "kept_token", "The Token value kept.", func() (*token, error) { return keptToken, nil })
}
