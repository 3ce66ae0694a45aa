// Package extmod is an extension module for the tests of pyext's contract
// (test/extension_test.go): arguments of every kind, results of every
// kind, errors and Python exceptions crossing Go, panics, the GIL released
// around Go work, goroutines calling back into Python, and arrays kept
// past the call.
package extmod

import (
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// Module defines extmod.
func Module(m *pyext.Module) error {
	m.Doc("pyext's test module")
	pyext.Func4R(m, "scalars", "Echo the scalars as a tuple.", scalars,
		pyext.P("i"), pyext.P("f"), pyext.P("b"), pyext.P("s", pyext.Default("default")))
	pyext.Func2R(m, "narrow", "i as int8 plus u as uint16.", narrow, pyext.P("i"), pyext.P("u"))
	pyext.Func1R(m, "total", "Sum of a float64 array of any layout.", total, pyext.P("x"))
	pyext.Func1R(m, "first", "x[0] of a C-contiguous 1-D int32 array, or -1 for None.", first,
		pyext.P("x", pyext.NDim(1), pyext.CContiguous(), pyext.Optional()))
	pyext.Func1R(m, "kind", "The memory kind of any array.", kind, pyext.P("x", pyext.Memory(pyext.HostAccessible)))
	pyext.Func2R(m, "same", "Return x itself (its memory, as an Array).", same, pyext.P("x"), pyext.P("shape", pyext.Shape(2, -1), pyext.Default(pyext.AnyArray{})))
	pyext.Func1R(m, "halves", "A Go slice of n halves, handed to Python.", halves, pyext.P("n"))
	pyext.Func1(m, "call", "Call fn() and return what it raised.", call, pyext.P("fn"))
	pyext.Func1R(m, "call_and_drop", "Call fn(), drop what it raised at once (ReleaseError), and say whether it raised.",
		callAndDrop, pyext.P("fn"))
	pyext.Func1(m, "fail", "Fail with a Go error of the kind named.", fail, pyext.P("kind"))
	pyext.Func0(m, "panic", "Panic.", func() error { panic("boom") })
	pyext.Func1(m, "sleep", "Sleep ms milliseconds with the GIL released.", sleep, pyext.P("ms"), pyext.ReleaseGIL())
	pyext.Func1(m, "sleep_held", "Sleep ms milliseconds holding the GIL.", sleep, pyext.P("ms"))
	pyext.Func2(m, "from_goroutines", "Call fn(i) from n goroutines at once (the GIL released meanwhile); raise what the first that failed raised.",
		fromGoroutines, pyext.P("fn"), pyext.P("n"), pyext.ReleaseGIL())
	pyext.Func1(m, "keep", "Keep x past the call.", keep, pyext.P("x"))
	pyext.Func1(m, "stash", "Store the view of x past the call (a mistake: Keep is the way).", func(x pyext.AnyArray) error {
		stashed = x
		return nil
	}, pyext.P("x"))
	pyext.Func0R(m, "empty_like_stashed", "Empty of the stashed view's Device(), after its call.", func() (*usm.Array, error) {
		return pyext.Empty[float64](stashed.Device(), 2)
	})
	pyext.Func0R(m, "kept_sum", "Sum of the kept array (float64), read after the call that gave it.", keptSum)
	pyext.Func0(m, "drop", "Release the kept array.", drop)
	pyext.Func1R(m, "host_ramp", "0, 1, ..., n-1 as float64 in usmbridge's cpu backend.", hostRamp, pyext.P("n"))
	pyext.Func2R(m, "hold", "Keep x past the call as how says (plain, twice, goroutine); the ids of the kept views.", hold,
		pyext.P("x"), pyext.P("how", pyext.Default("plain")))
	pyext.Func2R(m, "hold_nogil", "hold, in a function that releases the GIL.", hold,
		pyext.P("x"), pyext.P("how", pyext.Default("plain")), pyext.ReleaseGIL())
	pyext.Func1R(m, "hold_return", "Keep x, then return x itself.", holdReturn, pyext.P("x"))
	pyext.Func2(m, "unhold", "Release the view kept under id (how: plain, or goroutine).", unhold,
		pyext.P("id"), pyext.P("how", pyext.Default("plain")))
	pyext.Func2(m, "unhold_nogil", "unhold, in a function that releases the GIL.", unhold,
		pyext.P("id"), pyext.P("how", pyext.Default("plain")), pyext.ReleaseGIL())
	pyext.Func1R(m, "held_sum", "Sum of the float64 view kept under id, read now.", heldSum, pyext.P("id"))
	pyext.Func0R(m, "held_count", "How many views are kept.", heldCount)
	pyext.Func0R(m, "last_kept", "The id of the view kept last.", lastKept)
	pyext.Func1R(m, "echo", "Return s.", func(s string) (string, error) { return s, nil },
		pyext.P("s", pyext.Default("a\\b'c\"\n\x00\u00e9\u2028")))
	pyext.Func1R(m, "where", "The device d names.", func(d pyext.Device) (string, error) { return d.String(), nil },
		pyext.P("d", pyext.Default(pyext.Host)))
	pyext.Func2R(m, "wide", "u + v as uint64 (wrapping).", func(u, v uint64) (uint64, error) { return u + v, nil },
		pyext.P("u"), pyext.P("v", pyext.Default(uint64(1<<63))))
	pyext.Func1(m, "fail_with", "Fail with a Go error whose message is msg.", func(msg string) error { return errors.New(msg) },
		pyext.P("msg"))
	pyext.Func0R(m, "go_calls", "How many calls the C half made into Go.", func() (int64, error) { return pyext.Live()["go_calls"], nil })
	pyext.Func1R(m, "ascending", "x[0] of a 1-D float64 array whose elements ascend.", ascending, pyext.P("x", pyext.NDim(1)))
	definePlan(m)
	defineWide(m)
	defineComposition(m)
	defineModel(m)
	defineLaunch(m)
	defineLayout(m)
	return nil
}

// ascending checks what no parameter option says, with the module's own
// argument error.
func ascending(x pyext.Array[float64]) (float64, error) {
	vals, err := usm.Values[float64](x.USM())
	if err != nil {
		return 0, err
	}
	first, prev, n := 0.0, 0.0, 0
	for v := range vals {
		if n > 0 && v < prev {
			return 0, pyext.ArgValueError("x", "must ascend, got %g after %g", v, prev)
		}
		if n == 0 {
			first = v
		}
		prev = v
		n++
	}
	if n == 0 {
		return 0, pyext.ArgTypeError("x", "must not be empty")
	}
	return first, nil
}

// Plan is a Go value Python holds as an object of class extmod.Plan.
type Plan struct {
	a    float64
	name string
	runs int
}

// closedPlans counts the plans Close closed: each object's value is
// closed once, when the object goes.
var closedPlans atomic.Int64

func (p *Plan) Close() error {
	closedPlans.Add(1)
	switch p.name {
	case "fail-close":
		return errors.New("this plan fails to close")
	case "panic-close":
		panic("this plan panics in Close")
	}
	return nil
}

func definePlan(m *pyext.Module) {
	plan := pyext.NewClass[Plan](m, "Plan", "y = a*x as a Go value: a class of the module.")
	pyext.Init2(plan, func(a float64, name string) (*Plan, error) {
		if name == "" {
			return nil, pyext.ArgValueError("name", "must not be empty")
		}
		return &Plan{a: a, name: name}, nil
	}, pyext.P("a"), pyext.P("name", pyext.Default("plan"), pyext.KeywordOnly()))
	pyext.Method1R(plan, "run", "a*x as a new float64 array.", func(p *Plan, x pyext.Array[float64]) ([]float64, error) {
		p.runs++
		out := make([]float64, 0, x.Len())
		vals, err := usm.Values[float64](x.USM())
		if err != nil {
			return nil, err
		}
		for v := range vals {
			out = append(out, p.a*v)
		}
		return out, nil
	}, pyext.P("x", pyext.NDim(1)))
	pyext.Method1(plan, "scale", "Multiply a by k, in place (k > 0).", func(p *Plan, k float64) error {
		if k <= 0 {
			return pyext.ArgValueError("k", "must be positive, got %g", k)
		}
		p.a *= k
		return nil
	}, pyext.P("k"))
	pyext.Method0R(plan, "itself", "The plan itself: the same object.", func(p *Plan) (*Plan, error) { return p, nil })
	pyext.Method1R(plan, "scaled", "A new plan of a*k.", func(p *Plan, k float64) (*Plan, error) {
		return &Plan{a: p.a * k, name: p.name + "*"}, nil
	}, pyext.P("k"))
	pyext.Method0R(plan, "__repr__", "", func(p *Plan) (string, error) {
		return "Plan(" + strconv.FormatFloat(p.a, 'g', -1, 64) + ", name=" + strconv.Quote(p.name) + ")", nil
	})
	pyext.Method0(plan, "boom", "Panic.", func(p *Plan) error { panic("plan boom") })
	pyext.Method(plan, "poly", "a*(x0 + x1*t + x2*t**2 + x3*t**3) at t: a method of five parameters.",
		func(p *Plan, t, x0, x1, x2, x3 float64) (float64, error) { return p.a * (x0 + t*(x1+t*(x2+t*x3))), nil },
		[]pyext.Param{pyext.P("t"), pyext.P("x0"), pyext.P("x1"), pyext.P("x2"), pyext.P("x3", pyext.Default(0.0))})
	pyext.Property(plan, "runs", "How many times run ran.", func(p *Plan) (int, error) { return p.runs, nil })
	pyext.Property(plan, "name", "The plan's name.", func(p *Plan) (string, error) { return p.name, nil })
	pyext.SettableProperty(plan, "a", "The factor.", func(p *Plan) (float64, error) { return p.a, nil },
		func(p *Plan, a float64) error { p.a = a; return nil })
	pyext.Func2R(m, "combine", "A plan of p.a + q.a (q None: p.a).", func(p, q *Plan) (*Plan, error) {
		if q == nil {
			return &Plan{a: p.a, name: p.name}, nil
		}
		return &Plan{a: p.a + q.a, name: p.name + "+" + q.name}, nil
	}, pyext.P("p"), pyext.P("q", pyext.Optional()))
	pyext.Func0R(m, "closed_plans", "How many plans Go closed.", func() (int64, error) { return closedPlans.Load(), nil })

	// A class Go alone makes: no constructor.
	tok := pyext.NewClass[token](m, "Token", "A value only Go makes.")
	pyext.Property(tok, "id", "The token's number.", func(t *token) (int, error) { return t.id, nil })
	pyext.Func1R(m, "token", "A new Token.", func(id int) (*token, error) { return &token{id: id}, nil }, pyext.P("id"))
	// Binary special methods: another operand than the parameter takes is
	// NotImplemented (test_classes.py).
	pyext.Method1R(tok, "__eq__", "", func(t, u *token) (bool, error) { return t.id == u.id, nil }, pyext.P("other"))
	pyext.Method1R(tok, "__add__", "", func(t *token, n int) (*token, error) { return &token{id: t.id + n}, nil }, pyext.P("n"))
}

type token struct{ id int }

func hostRamp(n int64) (*usm.Array, error) {
	a, err := pyext.Empty[float64](pyext.Host, n)
	if err != nil {
		return nil, err
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = float64(i)
	}
	if err := usm.CopyFromSlice(a, vals); err != nil {
		a.Owner.Release()
		return nil, err
	}
	return a, nil
}

func scalars(i int64, f float64, b bool, s string) (pybridge.Object, error) {
	var o pybridge.Object
	err := pyext.Python().Do(func(g *pybridge.GIL) error {
		var err error
		o, err = g.FromGo([]any{i, f, b, s})
		return err
	})
	return o, err
}

func narrow(i int8, u uint16) (int, error) { return int(i) + int(u), nil }

func total(x pyext.Array[float64]) (float64, error) {
	vals, err := usm.Values[float64](x.USM())
	if err != nil {
		return 0, err
	}
	var t float64
	for v := range vals {
		t += v
	}
	return t, nil
}

func first(x pyext.Array[int32]) (int, error) {
	if x.IsNone() {
		return -1, nil
	}
	if x.Len() == 0 {
		return 0, pyext.ValueError("x is empty")
	}
	return int(x.Slice()[0]), nil
}

func kind(x pyext.AnyArray) (string, error) {
	a := x.USM()
	if a.DLDevice.Type == 1 {
		return "host", nil
	}
	return a.Memory.Kind.String(), nil
}

func same(x, shape pyext.AnyArray) (pyext.AnyArray, error) { return x, nil }

func halves(n int) ([]float32, error) {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i) / 2
	}
	return s, nil
}

func call(fn pybridge.Object) error {
	return pyext.Python().Do(func(g *pybridge.GIL) error {
		r, err := g.Call(fn) // a Python exception is err, as itself
		if err == nil {
			g.DecRef(r)
		}
		return err
	})
}

// callAndDrop handles a callback's exception and goes on, as a retry or a
// logged failure does: ReleaseError lets the exception and what its
// traceback keeps go now, not at Go's next collection.
func callAndDrop(fn pybridge.Object) (raised bool, err error) {
	err = pyext.Python().Do(func(g *pybridge.GIL) error {
		r, err := g.Call(fn)
		if err != nil {
			raised = true
			g.ReleaseError(err)
			return nil
		}
		g.DecRef(r)
		return nil
	})
	return raised, err
}

func fail(kind string) error {
	switch kind {
	case "value":
		return pyext.ValueError("a value error from Go")
	case "type":
		return pyext.TypeError("a type error from Go")
	case "buffer":
		return pyext.BufferError("a buffer error from Go")
	case "kind":
		return usm.ErrOverflow
	case "usm": // an error of usmbridge's own, passed on as a user's function would
		_, err := usm.ParseJSON([]byte("{"))
		return err
	}
	return errors.New("a plain Go error")
}

func sleep(ms int) error {
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return nil
}

func fromGoroutines(fn pybridge.Object, n int) error {
	py := pyext.Python()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = py.Do(func(g *pybridge.GIL) error {
				arg, err := g.FromGo(int64(i))
				if err != nil {
					return err
				}
				defer g.DecRef(arg)
				r, err := g.Call(fn, arg)
				if err == nil {
					g.DecRef(r)
				}
				return err
			})
			runtime.Gosched()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // the Python exception of the first callback that raised, as itself
		}
	}
	return nil
}

var kept *usm.Array

// stashed is a view stored past its call (stash), which no longer says
// where the memory is.
var stashed pyext.AnyArray

func keep(x pyext.AnyArray) error {
	if kept != nil {
		kept.Owner.Release()
	}
	var err error
	kept, err = x.Keep()
	return err
}

func keptSum() (float64, error) {
	if kept == nil {
		return 0, pyext.ValueError("nothing kept")
	}
	vals, err := usm.Values[float64](kept)
	if err != nil {
		return 0, err
	}
	var t float64
	for v := range vals {
		t += v
	}
	return t, nil
}

func drop() error {
	if kept != nil {
		kept.Owner.Release()
		kept = nil
	}
	return nil
}

// The keeper: views kept past their call, by id, for the lifecycle tests
// (test_lifecycle.py drives them in random orders against a model).
var (
	keeperMu sync.Mutex
	keeper   = map[int64]*usm.Array{}
	keeperID int64
)

func store(a *usm.Array) int64 {
	keeperMu.Lock()
	defer keeperMu.Unlock()
	keeperID++
	keeper[keeperID] = a
	return keeperID
}

// holdHow keeps x as how says: "plain" (one Keep), "twice" (two Keeps of
// the one argument, two ids) or "goroutine" (Keep called by a goroutine
// the function waits for). It returns the ids as a list.
func holdHow(x pyext.AnyArray, how string) ([]int64, error) {
	var out []*usm.Array
	switch how {
	case "plain", "twice":
		n := 1
		if how == "twice" {
			n = 2
		}
		for range n {
			k, err := x.Keep()
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	case "goroutine":
		var k *usm.Array
		var err error
		done := make(chan struct{})
		go func() { defer close(done); k, err = x.Keep() }()
		<-done
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	default:
		return nil, pyext.ValueError("how must be plain, twice or goroutine, got %q", how)
	}
	ids := make([]int64, len(out))
	for i, k := range out {
		ids[i] = store(k)
	}
	return ids, nil
}

func hold(x pyext.AnyArray, how string) (pybridge.Object, error) {
	ids, err := holdHow(x, how)
	if err != nil {
		return pybridge.Object{}, err
	}
	return toPython(ids)
}

func toPython(ids []int64) (pybridge.Object, error) {
	var o pybridge.Object
	err := pyext.Python().Do(func(g *pybridge.GIL) error {
		vals := make([]any, len(ids))
		for i, id := range ids {
			vals[i] = id
		}
		var err error
		o, err = g.FromGo(vals)
		return err
	})
	return o, err
}

// holdReturn keeps x, then returns x itself as the result.
func holdReturn(x pyext.AnyArray) (pyext.AnyArray, error) {
	k, err := x.Keep()
	if err != nil {
		return pyext.AnyArray{}, err
	}
	store(k)
	return x, nil
}

// unhold releases the view kept under id (from any goroutine: "goroutine"
// releases it from a goroutine the function waits for).
func unhold(id int64, how string) error {
	keeperMu.Lock()
	k, ok := keeper[id]
	delete(keeper, id)
	keeperMu.Unlock()
	if !ok {
		return pyext.ValueError("no kept view %d", id)
	}
	if how == "goroutine" {
		done := make(chan struct{})
		go func() { defer close(done); k.Owner.Release() }()
		<-done
		return nil
	}
	k.Owner.Release()
	return nil
}

// heldSum is the sum of the float64 view kept under id, read now (device
// memory through a copy).
func heldSum(id int64) (float64, error) {
	keeperMu.Lock()
	k, ok := keeper[id]
	keeperMu.Unlock()
	if !ok {
		return 0, pyext.ValueError("no kept view %d", id)
	}
	n := 1
	for _, s := range k.Shape {
		n *= int(s)
	}
	vals := make([]float64, n)
	if err := usm.CopyToSlice(vals, k); err != nil {
		return 0, err
	}
	var t float64
	for _, v := range vals {
		t += v
	}
	return t, nil
}

func heldCount() (int, error) {
	keeperMu.Lock()
	defer keeperMu.Unlock()
	return len(keeper), nil
}

func lastKept() (int64, error) {
	keeperMu.Lock()
	defer keeperMu.Unlock()
	return keeperID, nil
}

// The wider API (issue 29): any number of parameters, one name over
// several element types, results on the caller's queue, out= returned as
// given.
func defineWide(m *pyext.Module) {
	pyext.Func(m, "gemv", "y = alpha*A@x + beta*y, in place; returns y as given.", gemv,
		[]pyext.Param{pyext.P("alpha"), pyext.P("a", pyext.NDim(2)), pyext.P("x", pyext.NDim(1)),
			pyext.P("beta"), pyext.P("y", pyext.NDim(1), pyext.Writable())})
	pyext.Func1R(m, "colsum", "Column sums of a 2-D float32 array.", colsum[float32], pyext.P("x", pyext.NDim(2)))
	pyext.Func1R(m, "colsum", "", colsum[float64], pyext.P("x", pyext.NDim(2)))
	pyext.Func1R(m, "colsum", "", colsum[int32], pyext.P("x", pyext.NDim(2)))
	pyext.Func3R(m, "scale", "x*factor, into out when given (returned as given), else a new array like x.", scale,
		pyext.P("x"), pyext.P("factor"), pyext.P("out", pyext.Optional(), pyext.KeywordOnly(), pyext.Writable()))
	pyext.Func1R(m, "describe", "x as Go sees it: (address of element 0, shape, strides in elements, read-only, element type).",
		describe, pyext.P("x"))
	pyext.Func1R(m, "dtype_of", "x's element type.", func(x pyext.AnyArray) (string, error) { return x.DType().String(), nil }, pyext.P("x"))
	pyext.Func2R(m, "zeros_on", "n float64 zeros on device (a dpctl.SyclQueue binds them to it).", zerosOn,
		pyext.P("n"), pyext.P("device", pyext.Default("cpu")))
	pyext.Func1R(m, "zeros_like", "Zeros where x is: its device, queue and USM kind.", zerosLike, pyext.P("x"))
	for _, n := range []int{9, 70, 126} { // 126: reflect.FuncOf's most, with two results
		defineArity(m, n)
	}
}

// defineArity adds sum_<n>, of n float64 parameters x0 … x<n-1> with
// defaults 0, 1, …, and arrays_<n>, of n optional array parameters a0 …,
// which counts the arrays given: Func takes a func of any arity, and the
// C half reads that many arguments (issue 41: a stack array of 64 was
// written past).
func defineArity(m *pyext.Module, n int) {
	floats, arrays := make([]reflect.Type, n), make([]reflect.Type, n)
	fps, aps := make([]pyext.Param, n), make([]pyext.Param, n)
	for i := range n {
		floats[i], arrays[i] = reflect.TypeFor[float64](), reflect.TypeFor[pyext.AnyArray]()
		fps[i] = pyext.P("x"+strconv.Itoa(i), pyext.Default(float64(i)))
		aps[i] = pyext.P("a"+strconv.Itoa(i), pyext.Optional())
	}
	out := []reflect.Type{reflect.TypeFor[float64](), reflect.TypeFor[error]()}
	sum := reflect.MakeFunc(reflect.FuncOf(floats, out, false), func(args []reflect.Value) []reflect.Value {
		t := 0.0
		for _, a := range args {
			t += a.Float()
		}
		return []reflect.Value{reflect.ValueOf(t), reflect.Zero(out[1])}
	})
	count := reflect.MakeFunc(reflect.FuncOf(arrays, out, false), func(args []reflect.Value) []reflect.Value {
		t := 0.0
		for _, a := range args {
			if !a.Interface().(pyext.AnyArray).IsNone() {
				t++
			}
		}
		return []reflect.Value{reflect.ValueOf(t), reflect.Zero(out[1])}
	})
	pyext.Func(m, "sum_"+strconv.Itoa(n), "The sum of the parameters.", sum.Interface(), fps)
	pyext.Func(m, "arrays_"+strconv.Itoa(n), "How many arrays were given.", count.Interface(), aps)
}

func gemv(alpha float64, a pyext.Array[float64], x pyext.Array[float64], beta float64, y pyext.Array[float64]) (pyext.Result, error) {
	sh := a.Shape()
	if sh[1] != int64(x.Len()) || sh[0] != int64(y.Len()) {
		return pyext.Result{}, pyext.ValueError("shapes %v, (%d,), (%d,) do not fit", sh, x.Len(), y.Len())
	}
	av, xv := make([]float64, a.Len()), make([]float64, x.Len())
	yv := make([]float64, y.Len())
	for _, c := range []struct {
		dst []float64
		src *usm.Array
	}{{av, a.USM()}, {xv, x.USM()}, {yv, y.USM()}} {
		if err := usm.CopyToSlice(c.dst, c.src); err != nil {
			return pyext.Result{}, err
		}
	}
	for i := range yv {
		s := 0.0
		for j := range xv {
			s += av[i*len(xv)+j] * xv[j]
		}
		yv[i] = alpha*s + beta*yv[i]
	}
	if err := usm.CopyFromSlice(y.USM(), yv); err != nil {
		return pyext.Result{}, err
	}
	return y.Given(), nil
}

func colsum[T float32 | float64 | int32](x pyext.Array[T]) ([]T, error) {
	sh := x.Shape()
	vals := make([]T, x.Len())
	if err := usm.CopyToSlice(vals, x.USM()); err != nil {
		return nil, err
	}
	out := make([]T, sh[1])
	for i := range sh[0] {
		for j := range sh[1] {
			out[j] += vals[i*sh[1]+j]
		}
	}
	return out, nil
}

func scale(x pyext.AnyArray, factor float64, out pyext.AnyArray) (pyext.Result, error) {
	xf, ok := pyext.As[float64](x)
	if !ok {
		return pyext.Result{}, pyext.TypeError("scale() argument 'x' must be an array of float64, got %s", x.DType())
	}
	vals := make([]float64, xf.Len())
	if err := usm.CopyToSlice(vals, xf.USM()); err != nil {
		return pyext.Result{}, err
	}
	for i := range vals {
		vals[i] *= factor
	}
	if !out.IsNone() {
		if err := usm.CopyFromSlice(out.USM(), vals); err != nil {
			return pyext.Result{}, err
		}
		return out.Given(), nil
	}
	r, err := pyext.EmptyLike[float64](x)
	if err != nil {
		return pyext.Result{}, err
	}
	if err := usm.CopyFromSlice(r, vals); err != nil {
		r.Owner.Release()
		return pyext.Result{}, err
	}
	return pyext.NewArray(r), nil
}

func zerosOn(n int64, d pyext.Device) (*usm.Array, error) {
	a, err := pyext.Empty[float64](d, n)
	if err != nil {
		return nil, err
	}
	if err := usm.CopyFromSlice(a, make([]float64, n)); err != nil {
		a.Owner.Release()
		return nil, err
	}
	return a, nil
}

func zerosLike(x pyext.AnyArray) (*usm.Array, error) {
	a, err := pyext.EmptyLike[float64](x)
	if err != nil {
		return nil, err
	}
	if err := usm.CopyFromSlice(a, make([]float64, x.Len())); err != nil {
		a.Owner.Release()
		return nil, err
	}
	return a, nil
}

func describe(x pyext.AnyArray) (pybridge.Object, error) {
	a := x.USM()
	shape, strides := make([]any, len(a.Shape)), make([]any, len(a.Shape))
	for i := range a.Shape {
		shape[i], strides[i] = a.Shape[i], a.EffectiveStrides()[i]
	}
	var o pybridge.Object
	err := pyext.Python().Do(func(g *pybridge.GIL) error {
		var err error
		o, err = g.FromGo([]any{int64(a.ElementPointer()), shape, strides, a.ReadOnly, a.DType.String()})
		return err
	})
	return o, err
}
