package pyext

// The C definition of the module's classes (ubx.h's ubx_class), and the Go
// callback of class.c.

// #include <stdlib.h>
// #include "ubx.h"
import "C"

import "unsafe"

// cStr copies s into C memory that lives as long as the process.
func cStr(s string) uintptr { return uintptr(unsafe.Pointer(C.CString(s))) }

// cFuncs allocates n ubx_funcs (zeroed) that live as long as the process.
func cFuncs(n int) []cFunc {
	return unsafe.Slice((*cFunc)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(cFunc{})))), n)
}

// writeFunc writes f as C calls it: its name, doc, parameters and Go index.
func writeFunc(cf *cFunc, f *function) {
	cf.name, cf.doc, cf.builtin, cf.index = cStr(f.name), cStr(f.doc), f.builtin, int32(f.index)
	cf.releaseGIL = boolC(f.releaseGIL)
	cf.nparams = int32(len(f.params))
	ps := unsafe.Slice((*cParam)(C.calloc(C.size_t(max(len(f.params), 1)), C.size_t(unsafe.Sizeof(cParam{})))), len(f.params))
	for j, p := range f.params {
		ps[j] = cParam{name: cStr(p.name), kind: p.kind, flags: p.flags, class: p.class}
	}
	if len(ps) > 0 {
		cf.params = uintptr(unsafe.Pointer(&ps[0]))
	}
}

// oneFunc is f alone, in C memory.
func oneFunc(f *function) uintptr {
	cf := cFuncs(1)
	writeFunc(&cf[0], f)
	return uintptr(unsafe.Pointer(&cf[0]))
}

// cClasses writes the module's classes into def.
func cClasses(m *Module, def *cModule) {
	if len(m.classes) == 0 {
		return
	}
	cs := unsafe.Slice((*cClass)(C.calloc(C.size_t(len(m.classes)), C.size_t(unsafe.Sizeof(cClass{})))), len(m.classes))
	for k, c := range m.classes {
		cc := &cs[k]
		cc.name = cStr(m.name + "." + c.name)
		doc := c.doc
		if c.ctor != nil {
			doc = c.ctor.doc + c.doc // the constructor's signature: inspect.signature(Plan)
			cc.ctor = oneFunc(c.ctor)
		}
		cc.doc = cStr(doc)
		ms := cFuncs(len(c.methods))
		for i, f := range c.methods {
			writeFunc(&ms[i], f)
		}
		if len(ms) > 0 {
			cc.methods = uintptr(unsafe.Pointer(&ms[0]))
		}
		cc.nmethods = int32(len(c.methods))
		ps := unsafe.Slice((*cProp)(C.calloc(C.size_t(max(len(c.props), 1)), C.size_t(unsafe.Sizeof(cProp{})))), len(c.props))
		for i, p := range c.props {
			ps[i] = cProp{name: cStr(p.name), doc: cStr(p.doc), get: oneFunc(p.get)}
			if p.set != nil {
				ps[i].set = oneFunc(p.set)
			}
		}
		if len(ps) > 0 {
			cc.props = uintptr(unsafe.Pointer(&ps[0]))
		}
		cc.nprops = int32(len(c.props))
		cc.hidden = boolC(c.hidden)
	}
	def.classes = uintptr(unsafe.Pointer(&cs[0]))
	def.nclasses = int32(len(m.classes))
}

//export ubx_go_drop_value
func ubx_go_drop_value(h C.int64_t) C.int {
	return status(guard("Close", func() error { return dropValue(int64(h)) }))
}
