package pyext

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// typedDecoder reads argument i of a call as a T.
type typedDecoder[T any] struct {
	d    decoder
	read func(c *frame, i int) (T, error)
}

// decoderFor makes the decoder of a parameter of Go type T (decoderOf's),
// or records a definition error in m.
func decoderFor[T any](m *Module, fn string, p Param) (typedDecoder[T], bool) {
	d, ok := m.decoderOf(reflect.TypeFor[T]())
	if !ok {
		m.errs = append(m.errs, errors.New("function "+fn+": parameter "+p.name+" has Go type "+d.typ+", which pyext cannot read from a Python argument"+classHint(reflect.TypeFor[T]())))
		return typedDecoder[T]{d: d}, false
	}
	// The value is made here, in a variable of T that does not leave the
	// call (passing its address to d.into would put it on the heap, an
	// allocation per argument per call): the same decoders' parts, by
	// value.
	td := typedDecoder[T]{d: d}
	switch {
	case d.array:
		want, goType := d.want, d.goType
		td.read = func(c *frame, i int) (T, error) {
			var x T
			a, err := c.array(i, want, goType)
			if err == nil {
				*(*argRef)(unsafe.Pointer(&x)) = argRef{a, a.gen}
			}
			return x, err
		}
	case d.word != nil:
		word := d.word
		td.read = func(c *frame, i int) (T, error) {
			var x T
			w, err := wordArg(c, i, word)
			storeWord(unsafe.Pointer(&x), unsafe.Sizeof(x), w)
			return x, err
		}
	case d.kind == pStr && !d.optional:
		td.read = func(c *frame, i int) (T, error) {
			s, err := strArg(c, i)
			return *(*T)(unsafe.Pointer(&s)), err
		}
	default:
		td.read = func(c *frame, i int) (T, error) {
			var x T
			err := d.into(c, i, unsafe.Pointer(&x))
			return x, err
		}
	}
	return td, true
}

// decoderOf is the decoder of a parameter of Go type t: how C reads the
// argument (kind) and how Go writes it into a value of type t (into). One
// per type, for the typed FuncN and for Func of any arity alike. The
// types and what each accepts are listed on Param.
func decoderOf(t reflect.Type) (decoder, bool) {
	d := decoder{typ: t.String()}
	d.checkDefault = func(v any) error {
		if v == nil || reflect.TypeOf(v) != t {
			return errors.New("Default of type " + typeName(v) + " for a parameter of type " + t.String())
		}
		return nil
	}
	switch t {
	case reflect.TypeFor[bool]():
		d.kind = pBool
		d.word = func(v *value, _ *frame, _ int) (uint64, error) { return uint64(v.i) & 1, nil }
	case reflect.TypeFor[string]():
		d.kind = pStr
		d.into = func(c *frame, i int, dst unsafe.Pointer) error {
			s, err := strArg(c, i)
			*(*string)(dst) = s
			return err
		}
	case reflect.TypeFor[float64]():
		d.kind = pFloat
		d.word = func(v *value, _ *frame, _ int) (uint64, error) { return math.Float64bits(v.f), nil }
	case reflect.TypeFor[float32]():
		d.kind = pFloat
		d.word = func(v *value, _ *frame, _ int) (uint64, error) { return uint64(math.Float32bits(float32(v.f))), nil }
	case reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](),
		reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32]():
		d.kind = pInt
		bits := t.Bits()
		unsigned := t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64
		d.word = func(v *value, c *frame, i int) (uint64, error) {
			// The range of the parameter's Go type: C read an int64.
			if unsigned && (v.i < 0 || (bits < 64 && v.i >= 1<<bits)) ||
				!unsigned && bits < 64 && (v.i < -(1<<(bits-1)) || v.i >= 1<<(bits-1)) {
				return 0, argErr(errkind.Overflow, c.fn.name, c.fn.params[i].name, "= "+strconv.FormatInt(v.i, 10)+" does not fit in "+t.String())
			}
			return uint64(v.i), nil
		}
	case reflect.TypeFor[uint](), reflect.TypeFor[uint64]():
		// C reads the whole range, 0 ... 2**64-1 (UBX_P_UINT: its bits in
		// v.i).
		d.kind = pUint
		bits := t.Bits()
		d.word = func(v *value, c *frame, i int) (uint64, error) {
			if bits < 64 && uint64(v.i) >= 1<<bits { // uint on a 32-bit platform
				return 0, argErr(errkind.Overflow, c.fn.name, c.fn.params[i].name, "= "+strconv.FormatUint(uint64(v.i), 10)+" does not fit in "+t.String())
			}
			return uint64(v.i), nil
		}
	case reflect.TypeFor[pybridge.Object]():
		d.kind = pObject
		d.into = func(c *frame, i int, dst unsafe.Pointer) error {
			v := &c.vals[i]
			var o pybridge.Object
			if v.kind != vMissing && v.kind != vNone {
				o = pybridge.UnsafeObject(v.obj)
			}
			*(*pybridge.Object)(dst) = o
			return nil
		}
	case reflect.TypeFor[Device]():
		d.kind = pObject
		d.into = func(c *frame, i int, dst unsafe.Pointer) error {
			dv, err := c.device(i)
			*(*Device)(dst) = dv
			return err
		}
		d.checkDefault = func(v any) error {
			switch v.(type) {
			case Device, string:
				return nil
			}
			return errors.New("the default of a Device parameter is a Device or a string such as \"cpu\"")
		}
	default:
		if t.Kind() == reflect.Pointer {
			return optionalDecoder(t)
		}
		at, ok := reflect.Zero(t).Interface().(arrayType)
		if !ok {
			return d, false
		}
		want, goType := at.wants()
		d.kind, d.array = pArray, true
		d.want, d.goType = want, goType
		d.into = func(c *frame, i int, dst unsafe.Pointer) error {
			a, err := c.array(i, want, goType)
			if err != nil {
				return err
			}
			// Array[T] and AnyArray are the same two words: the argument
			// and its call's generation.
			*(*argRef)(dst) = argRef{a, a.gen}
			return nil
		}
	}
	if d.word != nil {
		size, word := t.Size(), d.word
		d.into = func(c *frame, i int, dst unsafe.Pointer) error {
			w, err := wordArg(c, i, word)
			storeWord(dst, size, w)
			return err
		}
	}
	return d, true
}

// optionalDecoder reads a parameter of type *T, T a bool, integer, float
// or str: None is nil, which tells it from T's zero value; omitted is nil
// too, or a pointer to the Default (a T) when there is one. The parameter
// takes None whatever its options (UBX_F_NONE).
func optionalDecoder(t reflect.Type) (decoder, bool) {
	ed, ok := decoderOf(t.Elem())
	if !ok || !isScalar(t.Elem()) {
		return decoder{typ: t.String()}, false
	}
	elem := t.Elem()
	d := decoder{typ: t.String(), kind: ed.kind, flags: fNone, optional: true}
	d.checkDefault = func(v any) error {
		if v == nil || reflect.TypeOf(v) != elem {
			return errors.New("Default of type " + typeName(v) + " for a parameter of type " + t.String() +
				" (the default is a " + elem.String() + "; Optional makes None the default)")
		}
		return nil
	}
	d.into = func(c *frame, i int, dst unsafe.Pointer) error {
		v := &c.vals[i]
		if v.kind == vNone || v.kind == vMissing && !c.fn.params[i].hasDefault {
			*(*unsafe.Pointer)(dst) = nil
			return nil
		}
		p := reflect.New(elem)
		if err := ed.into(c, i, p.UnsafePointer()); err != nil {
			return err
		}
		*(*unsafe.Pointer)(dst) = p.UnsafePointer()
		return nil
	}
	return d, true
}

// isScalar reports whether t is a bool, an integer, a float or a string
// type pyext reads and returns (and so has an optional form, *t).
func isScalar(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[bool](), reflect.TypeFor[string](), reflect.TypeFor[float32](), reflect.TypeFor[float64](),
		reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](),
		reflect.TypeFor[uint](), reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64]():
		return true
	}
	return false
}

// wordArg is a scalar argument as the bits of its Go value (word reads
// C's value), or its default's, or zero when omitted or None.
func wordArg(c *frame, i int, word func(*value, *frame, int) (uint64, error)) (uint64, error) {
	v, def, err := c.scalar(i)
	if err != nil {
		return 0, err
	}
	if def != nil {
		return defaultWord(def), nil
	}
	return word(v, c, i)
}

// defaultWord is the bits of a scalar default (zero for noDefault).
func defaultWord(def any) uint64 {
	switch x := def.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return math.Float64bits(x)
	case float32:
		return uint64(math.Float32bits(x))
	}
	rv := reflect.ValueOf(def)
	switch {
	case rv.CanInt():
		return uint64(rv.Int())
	case rv.CanUint():
		return rv.Uint()
	}
	return 0
}

// strArg is a str argument, its default, or "" when omitted or None; one
// of its choices (OneOf) when it has them.
func strArg(c *frame, i int) (string, error) {
	v, def, err := c.scalar(i)
	if err != nil || def != nil {
		s, _ := def.(string)
		return s, err
	}
	s := v.str()
	if ch := c.fn.params[i].choices; ch != nil && !slices.Contains(ch, s) {
		return "", argErr(errkind.Value, c.fn.name, c.fn.params[i].name, "must be one of "+choiceList(ch)+", got "+pyStrRepr(s))
	}
	return s, nil
}

// choiceList is OneOf's choices as a message says them: 'a', 'b' or 'c'.
func choiceList(ch []string) string {
	q := make([]string, len(ch))
	for i, c := range ch {
		q[i] = pyStrRepr(c)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// storeWord writes the low size bytes of w at dst (a bool, an integer or
// a float of that size, in the machine's byte order).
func storeWord(dst unsafe.Pointer, size uintptr, w uint64) {
	switch size {
	case 1:
		*(*uint8)(dst) = uint8(w)
	case 2:
		*(*uint16)(dst) = uint16(w)
	case 4:
		*(*uint32)(dst) = uint32(w)
	default:
		*(*uint64)(dst) = w
	}
}

// argRef is the layout Array[T] and AnyArray share.
type argRef struct {
	a   *arg
	gen uint32
}

func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}

// noDefault marks "use the zero value" for an Optional parameter.
type noDefault struct{}

// scalar returns argument i, or its default (def non-nil) when omitted or
// None.
func (c *frame) scalar(i int) (v *value, def any, err error) {
	v = &c.vals[i]
	if v.kind == vMissing || v.kind == vNone {
		s := &c.fn.params[i]
		if s.hasDefault && v.kind == vMissing {
			return nil, s.deflt, nil
		}
		return nil, noDefault{}, nil
	}
	return v, nil, nil
}

// array reads array argument i: C's view, or (for what C left to Go) an
// import through pybridge; then the element type and the parameter's
// constraints.
func (c *frame) array(i int, want dlabi.DataType, goType string) (*arg, error) {
	a, err := c.decodeArray(i)
	if err != nil || a.none {
		return a, err
	}
	spec := &c.fn.params[i]
	got := a.dl
	if got.Bits == 0 {
		return nil, argErr(errkind.Type, c.fn.name, spec.name, "has an element type without a DLPack dtype")
	}
	if want.Bits != 0 && got != want {
		return nil, argErr(errkind.Type, c.fn.name, spec.name, "must be an array of "+wantName(goType, want)+", got "+dtypeName(got))
	}
	if err := spec.array.check(c.fn.name, spec.name, &a.arr); err != nil {
		return nil, err
	}
	return a, nil
}

// decodeArray reads array argument i once per call (an overloaded
// function looks at it before the overload it chose does): C's view, or
// (for what C left to Go) an import through pybridge.
func (c *frame) decodeArray(i int) (*arg, error) {
	a := &c.args[i]
	if a.decoded {
		return a, nil
	}
	v := &c.vals[i]
	spec := &c.fn.params[i]
	a.none = false
	switch v.kind {
	case vMissing, vNone:
		a.none = true
		a.arr = usm.Array{}
		a.decoded = true
		return a, nil
	case vArray:
		a.dl = v.v.t.DType
		if err := c.viewArray(a, &v.v); err != nil {
			return nil, &ArgumentError{Func: c.fn.name, Param: spec.name, Reason: "cannot be read", kind: errkind.Value, Err: err}
		}
	default:
		if err := c.importObject(v, a); err != nil {
			k := errkind.Of(err)
			if exc, own := errkind.Origin[*pybridge.Exception](err); own && exc != nil {
				if !errors.Is(exc, errkind.Buffer) {
					return nil, err // the producer's own exception, as itself
				}
				// The producer's BufferError says it cannot export the
				// array (a dtype DLPack cannot carry: datetime64, ">f8",
				// object): a TypeError naming the parameter, caused by it.
				k = errkind.Type
			}
			if k == nil {
				k = errkind.Type
			}
			return nil, &ArgumentError{Func: c.fn.name, Param: spec.name, Reason: "is not an array usmbridge can read", kind: k, Err: err}
		}
		a.dl, _ = a.arr.DType.DataType() // the zero dtype for none: refused by array
	}
	a.decoded = true
	return a, nil
}

// viewArray makes a's usm.Array from a view C read: this module's Array
// (with its Go state, if any) or host memory.
func (c *frame) viewArray(a *arg, v *view) error {
	if v.handle != 0 {
		if st := handles.get(v.handle); st != nil {
			a.arr = *st.arr
			return nil
		}
	}
	return fillArray(&a.arr, v)
}

// fillArray writes the usm.Array of a view of host memory (or of a kDLOneAPI
// Array whose Go state is gone): shape and strides alias the view's.
func fillArray(arr *usm.Array, v *view) error {
	ts, err := dtype.FromDataType(v.t.DType)
	if err != nil {
		return err
	}
	n := int(v.t.Ndim)
	*arr = usm.Array{Device: -1, DLDevice: v.t.Device}
	arr.DType, arr.Version, arr.Data = ts, usm.Version1, v.t.Data
	arr.ReadOnly = v.flags&dlabi.FlagReadOnly != 0
	if n > 0 {
		arr.Shape = unsafe.Slice((*int64)(cmem.Ptr(v.t.Shape)), n)
		arr.Strides = unsafe.Slice((*int64)(cmem.Ptr(v.t.Strides)), n)
	} else {
		arr.Shape = []int64{}
	}
	if v.t.ByteOffset != 0 {
		arr.Offset = int64(v.t.ByteOffset) / int64(ts.Size())
	}
	arr.Memory = usm.PointerInfo{Kind: usm.KindHost, Device: -1}
	if v.t.Device.Type == dlabi.OneAPI {
		arr.Memory.Kind = usm.Kind(v.usmKind)
	}
	return nil
}

// keep is Array.Keep and AnyArray.Keep.
func keep(a *arg, gen uint32) (*usm.Array, error) {
	if a == nil || a.frame == nil {
		return nil, errkind.New(errkind.Value, "pyext.Array.Keep", "the array is not an argument of a call")
	}
	c := a.frame
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.gen != gen {
		return nil, errkind.New(errkind.Value, "pyext.Array.Keep", "the call that received the array has returned")
	}
	if a.none {
		return nil, errkind.New(errkind.Value, "pyext.Array.Keep", "the argument is None")
	}
	return c.keep(a)
}

// typedEncoder writes a Go function's result.
type typedEncoder[R any] func(c *frame, out R, r *result) error

// encoderFor makes the encoder of a result of Go type R (encoderOf's), or
// records a definition error in m.
func encoderFor[R any](m *Module, fn string) (typedEncoder[R], bool) {
	t := reflect.TypeFor[R]()
	e, ok := m.encoderOf(t)
	if !ok {
		m.errs = append(m.errs, errors.New("function "+fn+": result type "+t.String()+" cannot be returned to Python"+classHint(t)))
		return nil, false
	}
	return func(c *frame, out R, r *result) error { return e(c, unsafe.Pointer(&out), r) }, true
}

// encoder writes a result of a Go type, read from src, into r.
type encoder func(c *frame, src unsafe.Pointer, r *result) error

// encoderOf is the encoder of a result of Go type t: one per type, for the
// typed FuncNR and for Func of any arity alike.
func encoderOf(t reflect.Type) (encoder, bool) {
	switch t {
	case reflect.TypeFor[bool]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			r.kind = rBool
			if *(*bool)(src) {
				r.i = 1
			}
			return nil
		}, true
	case reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			r.kind, r.i = rInt, reflect.NewAt(t, src).Elem().Int()
			return nil
		}, true
	case reflect.TypeFor[uint](), reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			u := reflect.NewAt(t, src).Elem().Uint()
			r.kind = rInt
			if u > math.MaxInt64 {
				r.kind = rUint // Python's int has the whole range
			}
			r.i = int64(u)
			return nil
		}, true
	case reflect.TypeFor[float64]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			r.kind, r.f = rFloat, *(*float64)(src)
			return nil
		}, true
	case reflect.TypeFor[float32]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			r.kind, r.f = rFloat, float64(*(*float32)(src))
			return nil
		}, true
	case reflect.TypeFor[string]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			return c.setString(r, *(*string)(src))
		}, true
	case reflect.TypeFor[pybridge.Object]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			r.kind, r.obj = rObject, (*(*pybridge.Object)(src)).Ptr()
			if r.obj == 0 {
				r.kind = rNone
			}
			return nil
		}, true
	case reflect.TypeFor[*usm.Array]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			return c.setArray(r, *(**usm.Array)(src))
		}, true
	case reflect.TypeFor[Result]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			return c.setResult(r, *(*Result)(src))
		}, true
	case reflect.TypeFor[none]():
		return func(c *frame, src unsafe.Pointer, r *result) error {
			r.kind = rNone
			return nil
		}, true
	}
	if t.Kind() == reflect.Pointer && isScalar(t.Elem()) { // *T: nil is None
		e, _ := encoderOf(t.Elem())
		return func(c *frame, src unsafe.Pointer, r *result) error {
			p := *(*unsafe.Pointer)(src)
			if p == nil {
				r.kind = rNone
				return nil
			}
			return e(c, p, r)
		}, true
	}
	if _, ok := reflect.Zero(t).Interface().(arrayResult); ok {
		return func(c *frame, src unsafe.Pointer, r *result) error {
			ref := (*argRef)(src)
			return c.setArgArray(r, ref.a, ref.gen)
		}, true
	}
	return sliceEncoder(t)
}

// arrayResult is an array argument returned as the result.
type arrayResult interface{ argOf() (*arg, uint32) }

func (x AnyArray) argOf() (*arg, uint32) { return x.a, x.gen }

// sliceEncoder returns Go slices of element types as host Arrays over the
// slice's memory, which the module keeps (pinned) until the Array goes.
func sliceEncoder(t reflect.Type) (encoder, bool) {
	if t.Kind() != reflect.Slice {
		return nil, false
	}
	dt, ok := sliceDType(t.Elem())
	if !ok {
		return nil, false
	}
	return func(c *frame, src unsafe.Pointer, r *result) error {
		rv := reflect.NewAt(t, src).Elem()
		return c.setSlice(r, rv.UnsafePointer(), rv.Len(), t.Elem().Size(), dt, rv.Interface())
	}, true
}

func sliceDType(t reflect.Type) (dlabi.DataType, bool) {
	size := uint8(t.Size() * 8)
	switch t.Kind() {
	case reflect.Bool:
		return dlabi.DataType{Code: dlabi.Bool, Bits: 8, Lanes: 1}, true
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return dlabi.DataType{Code: dlabi.Int, Bits: size, Lanes: 1}, true
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return dlabi.DataType{Code: dlabi.UInt, Bits: size, Lanes: 1}, true
	case reflect.Float32, reflect.Float64:
		return dlabi.DataType{Code: dlabi.Float, Bits: size, Lanes: 1}, true
	case reflect.Complex64, reflect.Complex128:
		return dlabi.DataType{Code: dlabi.Complex, Bits: size, Lanes: 1}, true
	}
	return dlabi.DataType{}, false
}

// wantName names the element type a parameter wants: its DLPack name, and
// the Go type when that says something else (a named type).
func wantName(goType string, want dlabi.DataType) string {
	if n := dtypeName(want); n != goType {
		return n + " (Go " + goType + ")"
	}
	return goType
}
