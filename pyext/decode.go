package pyext

import (
	"errors"
	"math"
	"reflect"
	"strconv"
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

// decoderFor makes the decoder of a parameter of Go type T, or records a
// definition error in m.
func decoderFor[T any](m *Module, fn string, p Param) (typedDecoder[T], bool) {
	var zero T
	name := reflect.TypeFor[T]().String()
	td := typedDecoder[T]{d: decoder{typ: name}}
	switch any(zero).(type) {
	case bool:
		td.d.kind = pBool
		td.read = func(c *frame, i int) (T, error) {
			v, def, err := c.scalar(i)
			if def != nil || err != nil {
				return defaultOf[T](def), err
			}
			b := v.i != 0
			return *(*T)(unsafe.Pointer(&b)), nil
		}
	case string:
		td.d.kind = pStr
		td.read = func(c *frame, i int) (T, error) {
			v, def, err := c.scalar(i)
			if def != nil || err != nil {
				return defaultOf[T](def), err
			}
			s := v.str()
			return *(*T)(unsafe.Pointer(&s)), nil
		}
	case float64:
		td.d.kind = pFloat
		td.read = func(c *frame, i int) (T, error) {
			v, def, err := c.scalar(i)
			if def != nil || err != nil {
				return defaultOf[T](def), err
			}
			return *(*T)(unsafe.Pointer(&v.f)), nil
		}
	case float32:
		td.d.kind = pFloat
		td.read = func(c *frame, i int) (T, error) {
			v, def, err := c.scalar(i)
			if def != nil || err != nil {
				return defaultOf[T](def), err
			}
			f := float32(v.f)
			return *(*T)(unsafe.Pointer(&f)), nil
		}
	case int:
		return intDecoder[T, int](td)
	case int8:
		return intDecoder[T, int8](td)
	case int16:
		return intDecoder[T, int16](td)
	case int32:
		return intDecoder[T, int32](td)
	case int64:
		return intDecoder[T, int64](td)
	case uint:
		return intDecoder[T, uint](td)
	case uint8:
		return intDecoder[T, uint8](td)
	case uint16:
		return intDecoder[T, uint16](td)
	case uint32:
		return intDecoder[T, uint32](td)
	case uint64:
		return intDecoder[T, uint64](td)
	case pybridge.Object:
		td.d.kind = pObject
		td.read = func(c *frame, i int) (T, error) {
			v := &c.vals[i]
			var o pybridge.Object
			if v.kind != vMissing && v.kind != vNone {
				o = pybridge.UnsafeObject(v.obj)
			}
			return *(*T)(unsafe.Pointer(&o)), nil
		}
	case Device:
		td.d.kind = pObject
		td.read = func(c *frame, i int) (T, error) {
			d, err := c.device(i)
			return *(*T)(unsafe.Pointer(&d)), err
		}
		td.d.checkDefault = func(v any) error {
			switch v.(type) {
			case Device, string:
				return nil
			}
			return errors.New("the default of a Device parameter is a Device or a string such as \"cpu\"")
		}
		return td, true
	case arrayType:
		at := any(zero).(arrayType)
		want, goType := at.wants()
		mk := at.maker().(func(*arg, uint32) T)
		td.d.kind, td.d.array = pArray, true
		td.read = func(c *frame, i int) (T, error) {
			a, err := c.array(i, want, goType)
			if err != nil {
				var z T
				return z, err
			}
			return mk(a, a.gen), nil
		}
	default:
		if c := m.classOf(reflect.TypeFor[T]()); c != nil {
			return instanceDecoder(c, td)
		}
		m.errs = append(m.errs, errors.New("function "+fn+": parameter "+p.name+" has Go type "+name+", which pyext cannot read from a Python argument"+classHint(reflect.TypeFor[T]())))
		return td, false
	}
	td.d.checkDefault = func(v any) error {
		if _, ok := v.(T); !ok {
			return errors.New("Default(" + strconv.Quote(reflect.TypeOf(v).String()) + ") is not a " + name)
		}
		return nil
	}
	return td, true
}

type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// intDecoder reads an int argument as I (which T is), range-checked.
func intDecoder[T any, I integer](td typedDecoder[T]) (typedDecoder[T], bool) {
	td.d.kind = pInt
	td.read = func(c *frame, i int) (T, error) {
		v, def, err := c.scalar(i)
		if def != nil || err != nil {
			return defaultOf[T](def), err
		}
		x := I(v.i)
		if int64(x) != v.i || (v.i < 0) != (x < 0) {
			return *new(T), argErr(errkind.Overflow, c.fn.name, c.fn.params[i].name, "= "+strconv.FormatInt(v.i, 10)+" does not fit in "+reflect.TypeFor[I]().String())
		}
		return *(*T)(unsafe.Pointer(&x)), nil
	}
	td.d.checkDefault = func(v any) error {
		if _, ok := v.(T); !ok {
			return errors.New("Default of type " + reflect.TypeOf(v).String() + " for a parameter of type " + reflect.TypeFor[T]().String())
		}
		return nil
	}
	return td, true
}

// defaultOf is def (a *paramSpec's default, of type T) or T's zero value.
func defaultOf[T any](def any) T {
	if x, ok := def.(T); ok {
		return x
	}
	var z T
	return z
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
	v := &c.vals[i]
	spec := &c.fn.params[i]
	a := &c.args[i]
	a.none = false
	switch v.kind {
	case vMissing, vNone:
		a.none = true
		a.arr = usm.Array{}
		return a, nil
	case vArray:
		if err := c.viewArray(a, &v.v); err != nil {
			return nil, &ArgumentError{Func: c.fn.name, Param: spec.name, Reason: "cannot be read", kind: errkind.Value, Err: err}
		}
	default:
		arr, err := c.importObject(v.obj)
		if err != nil {
			var exc *pybridge.Exception
			if errors.As(err, &exc) {
				return nil, err // the producer's own exception, as itself
			}
			k := errkind.Of(err)
			if k == nil {
				k = errkind.Type
			}
			return nil, &ArgumentError{Func: c.fn.name, Param: spec.name, Reason: "is not an array usmbridge can read", kind: k, Err: err}
		}
		a.arr = *arr
	}
	got, err := a.arr.DType.DataType()
	if err != nil {
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
	if a.gen != gen || c.ended {
		return nil, errkind.New(errkind.Value, "pyext.Array.Keep", "the call that received the array has returned")
	}
	if a.none {
		return nil, errkind.New(errkind.Value, "pyext.Array.Keep", "the argument is None")
	}
	return c.keep(a)
}

// typedEncoder writes a Go function's result.
type typedEncoder[R any] func(c *frame, out R, r *result) error

// encoderFor makes the encoder of a result of Go type R, or records a
// definition error in m.
func encoderFor[R any](m *Module, fn string) (typedEncoder[R], bool) {
	var zero R
	switch any(zero).(type) {
	case bool:
		return func(c *frame, out R, r *result) error {
			r.kind = rBool
			if *(*bool)(unsafe.Pointer(&out)) {
				r.i = 1
			}
			return nil
		}, true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return func(c *frame, out R, r *result) error {
			rv := reflect.ValueOf(&out).Elem()
			r.kind = rInt
			if rv.CanInt() {
				r.i = rv.Int()
				return nil
			}
			u := rv.Uint()
			if u > math.MaxInt64 {
				return errkind.New(errkind.Overflow, "pyext", fn+"() result "+strconv.FormatUint(u, 10)+" does not fit in a 64-bit int")
			}
			r.i = int64(u)
			return nil
		}, true
	case float64:
		return func(c *frame, out R, r *result) error {
			r.kind, r.f = rFloat, *(*float64)(unsafe.Pointer(&out))
			return nil
		}, true
	case float32:
		return func(c *frame, out R, r *result) error {
			r.kind, r.f = rFloat, float64(*(*float32)(unsafe.Pointer(&out)))
			return nil
		}, true
	case string:
		return func(c *frame, out R, r *result) error {
			return c.setString(r, *(*string)(unsafe.Pointer(&out)))
		}, true
	case pybridge.Object:
		return func(c *frame, out R, r *result) error {
			r.kind, r.obj = rObject, (*(*pybridge.Object)(unsafe.Pointer(&out))).Ptr()
			if r.obj == 0 {
				r.kind = rNone
			}
			return nil
		}, true
	case *usm.Array:
		return func(c *frame, out R, r *result) error {
			return c.setArray(r, *(*(*usm.Array))(unsafe.Pointer(&out)))
		}, true
	case arrayResult:
		return func(c *frame, out R, r *result) error {
			a, gen := any(out).(arrayResult).argOf()
			return c.setArgArray(r, a, gen)
		}, true
	}
	if s, ok := sliceEncoder[R](); ok {
		return s, true
	}
	if c := m.classOf(reflect.TypeFor[R]()); c != nil {
		return instanceEncoder[R](c), true
	}
	m.errs = append(m.errs, errors.New("function "+fn+": result type "+reflect.TypeFor[R]().String()+" cannot be returned to Python"+classHint(reflect.TypeFor[R]())))
	return nil, false
}

// arrayResult is an array argument returned as the result.
type arrayResult interface{ argOf() (*arg, uint32) }

func (x Array[T]) argOf() (*arg, uint32) { return x.a, x.gen }
func (x AnyArray) argOf() (*arg, uint32) { return x.a, x.gen }

// sliceEncoder returns Go slices of element types as host Arrays over the
// slice's memory, which the module keeps (pinned) until the Array goes.
func sliceEncoder[R any]() (typedEncoder[R], bool) {
	t := reflect.TypeFor[R]()
	if t.Kind() != reflect.Slice {
		return nil, false
	}
	dt, ok := sliceDType(t.Elem())
	if !ok {
		return nil, false
	}
	return func(c *frame, out R, r *result) error {
		rv := reflect.ValueOf(out)
		return c.setSlice(r, unsafe.Pointer(rv.Pointer()), rv.Len(), t.Elem().Size(), dt, out)
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
