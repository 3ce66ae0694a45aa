package pyext

// The module's definition, when Python imports it (module.c asks for it):
// the Go package's Module function runs, and its definition is written
// into C memory as ubx.h's ubx_module_def, with the tables of Go's rules
// C reads (dtype sizes, buffer formats, the SUAI keys, the top of user
// space).

// #include <stdlib.h>
// #include "ubx.h"
import "C"

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/suaikeys"
	"github.com/usmbridge/usmbridge/pybridge"
)

//export ubx_go_define
func ubx_go_define(name *C.char, out **C.ubx_module_def) (msg *C.char) {
	var err error
	defer func() {
		if err != nil {
			msg = C.CString(err.Error())
		}
	}()
	defer boundary.Recover("module definition", &err)
	// First: every Go callback C may call from now on (DLPack deleters,
	// capsule destructors) goes through C's fork gate.
	boundary.SetGate(func(goFn uintptr) uintptr { return uintptr(C.ubx_gate(C.uintptr_t(goFn))) })
	n := C.GoString(name)
	if registered.define == nil || registered.name != n {
		err = errors.New("module " + n + " was not built from a Go package by usmbridge.build (no pyext.Main for it)")
		return nil
	}
	py, e := pybridge.Attach()
	if e != nil {
		err = errors.New("cannot attach to the running Python: " + errkind.Message(e))
		return nil
	}
	m := &Module{name: n}
	if e := registered.define(m); e != nil {
		err = errors.New(n + ": " + errkind.Message(e))
		return nil
	}
	if e := m.err(); e != nil {
		err = errors.New(n + ": " + errkind.Message(e))
		return nil
	}
	addStub(m)
	ext.mod, ext.py = m, py
	fillTables()
	def := cDefinition(m)
	if e := cConsts(m, py, def); e != nil {
		err = errors.New(n + ": " + errkind.Message(e))
		return nil
	}
	*out = (*C.ubx_module_def)(cmem.Ptr(uintptr(unsafe.Pointer(def))))
	return nil
}

// cConsts writes the module's attributes (Const) into def, as Python
// objects that live as long as the process.
func cConsts(m *Module, py *pybridge.Python, def *cModule) error {
	if len(m.consts) == 0 {
		return nil
	}
	cs := unsafe.Slice((*cConst)(C.calloc(C.size_t(len(m.consts)), C.size_t(unsafe.Sizeof(cConst{})))), len(m.consts))
	err := py.DoHeld(func(g *pybridge.GIL) error {
		for i, c := range m.consts {
			o, err := g.FromGo(constValue(c.v))
			if err != nil {
				return fmt.Errorf("attribute %s: %w", c.name, err)
			}
			cs[i] = cConst{name: cStr(c.name), value: o.Ptr()}
		}
		return nil
	})
	def.consts, def.nconsts = uintptr(unsafe.Pointer(&cs[0])), int32(len(cs))
	return err
}

// constValue is v as pybridge.FromGo converts it: a float32 as a float64,
// a slice as a []any of its elements so converted.
func constValue(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = constValue(rv.Index(i).Interface())
		}
		return out
	}
	if rv.Kind() == reflect.Float32 {
		return rv.Float()
	}
	return v
}

// fillTables writes the rules C reads (ubx.h): the element size of every
// DLPack dtype Go accepts, the top of user space, and each dtype's buffer
// format.
func fillTables() {
	sizes := (*[C.UBX_DTYPE_CODES][C.UBX_DTYPE_BYTES]C.uint8_t)(unsafe.Pointer(&C.ubx_dtype_size))
	for code := range sizes {
		for b := range sizes[code] {
			dt := dlabi.DataType{Code: dlabi.TypeCode(code), Bits: uint8(b * 8), Lanes: 1}
			if ts, err := dtype.FromDataType(dt); err == nil && b > 0 {
				sizes[code][b] = C.uint8_t(ts.Size())
			}
		}
	}
	C.ubx_max_user_address = C.uint64_t(dlabi.MaxUserAddress)
	keys := (*[C.UBX_SUAI_KEYS]*C.char)(unsafe.Pointer(&C.ubx_suai_keys))
	for i, k := range suaikeys.Names {
		keys[i] = C.CString(k) // lives as long as the process
	}
	formats := (*[C.UBX_DTYPE_CODES][C.UBX_DTYPE_BYTES]*C.char)(unsafe.Pointer(&C.ubx_buffer_format))
	for code := range formats {
		for b := 1; b < len(formats[code]); b++ {
			formats[code][b] = bufferFormat(dlabi.DataType{Code: dlabi.TypeCode(code), Bits: uint8(b * 8), Lanes: 1})
		}
	}
}

// cDefinition writes m as a ubx_module_def in C memory that lives as long
// as the process.
func cDefinition(m *Module) *cModule {
	str := func(s string) uintptr { return uintptr(unsafe.Pointer(C.CString(s))) }
	def := (*cModule)(C.calloc(1, C.size_t(unsafe.Sizeof(cModule{}))))
	def.doc = str(m.doc)
	arrayName, forkName := m.arrayName, m.forkErrorName
	if arrayName == "" {
		arrayName, forkName = m.name+".Array", m.name+".ForkError"
	}
	def.arrayName, def.forkErrorName = str(arrayName), str(forkName)
	top := m.moduleFuncs()
	funcs := cFuncs(len(top))
	for i, f := range top {
		writeFunc(&funcs[i], f)
	}
	if len(funcs) > 0 {
		def.funcs = uintptr(unsafe.Pointer(&funcs[0]))
	}
	def.nfuncs = int32(len(top))
	cClasses(m, def)
	for k := range def.minorFor {
		v, _ := dlabi.NegotiateVersion(&dlpack.Version{Major: 1, Minor: uint32(k)}, dlpack.ProducerVersion)
		def.minorFor[k] = v.Minor
	}
	v, _ := dlabi.NegotiateVersion(&dlpack.Version{Major: 2}, dlpack.ProducerVersion)
	def.minorNewer, def.major = v.Minor, v.Major
	def.maxMajor, def.maxMinor = dlpack.ProducerVersion.Major, dlpack.ProducerVersion.Minor
	if len(m.excs) > 0 {
		ex := unsafe.Slice((*cExc)(C.calloc(C.size_t(len(m.excs)), C.size_t(unsafe.Sizeof(cExc{})))), len(m.excs))
		for i, e := range m.excs {
			ex[i] = cExc{name: str(m.name + "." + e.name), doc: str(e.doc), base: str(e.base), baseExc: int32(e.baseExc)}
		}
		def.excs, def.nexcs = uintptr(unsafe.Pointer(&ex[0])), int32(len(ex))
		ext.excs = ex
	}
	return def
}
