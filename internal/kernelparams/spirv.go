package kernelparams

import "encoding/binary"

// SPIR-V numbers FromSPIRV reads (the SPIR-V specification, unified 1.6).
const (
	spvMagic = 0x07230203

	opName                  = 5
	opEntryPoint            = 15
	opTypePointer           = 32
	opFunction              = 54
	opFunctionParameter     = 55
	opFunctionEnd           = 56
	opDecorate              = 71
	opTypeUntypedPointerKHR = 4417

	// Types of runtime handles (Opaque parameters).
	opTypeImage        = 25
	opTypeSampler      = 26
	opTypeSampledImage = 27
	opTypeEvent        = 34
	opTypeDeviceEvent  = 35
	opTypeReserveID    = 36
	opTypeQueue        = 37
	opTypePipe         = 38
	opTypePipeStorage  = 322

	execModelKernel = 6

	decorationFuncParamAttr = 38
	funcParamAttrByVal      = 2

	storageUniformConstant = 0 // __constant
	storageWorkgroup       = 4 // __local
	storageCrossWorkgroup  = 5 // __global
	storageGeneric         = 8
	storageDeviceOnlyINTEL = 5936 // SPV_INTEL_usm_storage_classes
	storageHostOnlyINTEL   = 5937
)

// FromSPIRV returns the kinds of the parameters of each kernel (an
// OpEntryPoint of the Kernel execution model) of module, by name. It reads
// only what it needs and never fails: a module it cannot read, or a part
// of one, gives no kernels, or Unknown kinds, and the launch then takes
// the arguments as given. The backends read only modules CheckSPIRV
// accepted, which it reads to the end.
func FromSPIRV(module []byte) map[string][]Kind {
	kinds, _ := readSPIRV(module)
	return kinds
}

// readSPIRV is FromSPIRV, and the word where it stopped reading or found
// an instruction shorter than what it reads of it (-1 if none): CheckSPIRV
// refuses every such module (FuzzFromSPIRV holds the two to that).
func readSPIRV(module []byte) (map[string][]Kind, int) {
	if len(module) < 20 || len(module)%4 != 0 {
		return nil, 0
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch {
	case binary.LittleEndian.Uint32(module) == spvMagic:
	case binary.BigEndian.Uint32(module) == spvMagic:
		order = binary.BigEndian
	default:
		return nil, 0
	}
	words := make([]uint32, len(module)/4)
	for i := range words {
		words[i] = order.Uint32(module[4*i:])
	}
	type entry struct {
		fn   uint32
		name string
	}
	var entries []entry             // the kernels, in the module's order
	pointers := map[uint32]uint32{} // pointer type id -> storage class
	handles := map[uint32]bool{}    // type ids of images, samplers, pipes, queues
	byVal := map[uint32]bool{}      // parameter ids decorated ByVal
	params := map[uint32][]uint32{} // function id -> its parameters' (type, id) pairs
	var fn uint32                   // the function being read, 0 outside one
	bad := -1
	short := func(at int) {
		if bad < 0 {
			bad = at
		}
	}
	at := 5
	for at < len(words) {
		n := int(words[at] >> 16)
		if n == 0 || at+n > len(words) {
			short(at)
			break // malformed: keep what was read
		}
		ops := words[at+1 : at+n]
		switch words[at] & 0xFFFF {
		case opEntryPoint:
			if len(ops) < 3 {
				short(at)
			} else if ops[0] == execModelKernel {
				if name, ok := literalString(ops[2:]); ok {
					entries = append(entries, entry{ops[1], name})
				} else {
					short(at)
				}
			}
		case opTypeImage, opTypeSampler, opTypeSampledImage, opTypeEvent, opTypeDeviceEvent, opTypeReserveID,
			opTypeQueue, opTypePipe, opTypePipeStorage:
			if len(ops) < 1 {
				short(at)
			} else {
				handles[ops[0]] = true
			}
		case opTypePointer, opTypeUntypedPointerKHR:
			if len(ops) < 2 {
				short(at)
			} else {
				pointers[ops[0]] = ops[1]
			}
		case opDecorate:
			// A FuncParamAttr decoration's attribute is an operand of
			// the decoration, which CheckSPIRV does not look into: one
			// without it is not ByVal.
			if len(ops) < 2 {
				short(at)
			} else if len(ops) >= 3 && ops[1] == decorationFuncParamAttr && ops[2] == funcParamAttrByVal {
				byVal[ops[0]] = true
			}
		case opFunction:
			if len(ops) < 2 {
				short(at)
			} else {
				fn = ops[1]
				params[fn] = params[fn][:0]
			}
		case opFunctionParameter:
			if len(ops) < 2 {
				short(at)
			} else if fn != 0 {
				params[fn] = append(params[fn], ops[0], ops[1])
			}
		case opFunctionEnd:
			fn = 0
		}
		at += n
	}
	out := make(map[string][]Kind, len(entries))
	for _, e := range entries {
		ps := params[e.fn]
		kinds := make([]Kind, len(ps)/2)
		for i := range kinds {
			typ, param := ps[2*i], ps[2*i+1]
			kinds[i] = kindOf(pointers, handles, typ, byVal[param])
		}
		if prev, ok := out[e.name]; ok {
			kinds = agreed(prev, kinds)
		}
		out[e.name] = kinds
	}
	return out, bad
}

// agreed is what two kernels of one name (which SPIR-V forbids, and of
// which a runtime may take either) say of their parameters: a kind where
// both say it, Unknown elsewhere.
func agreed(a, b []Kind) []Kind {
	out := make([]Kind, max(len(a), len(b)))
	for i := range min(len(a), len(b)) {
		if a[i] == b[i] {
			out[i] = a[i]
		}
	}
	return out
}

// kindOf is the kind of a parameter of type typ.
func kindOf(pointers map[uint32]uint32, handles map[uint32]bool, typ uint32, byVal bool) Kind {
	sc, isPointer := pointers[typ]
	switch {
	case handles[typ]:
		return Opaque
	case !isPointer || byVal:
		return Value
	case sc == storageCrossWorkgroup || sc == storageUniformConstant || sc == storageGeneric ||
		sc == storageDeviceOnlyINTEL || sc == storageHostOnlyINTEL:
		return Global
	case sc == storageWorkgroup:
		return Local
	}
	return Value // a pointer to Function memory: a struct passed by value
}

// literalString reads a SPIR-V literal string (UTF-8, NUL-terminated,
// little-endian bytes packed into words) from the start of ws.
func literalString(ws []uint32) (string, bool) {
	var b []byte
	for _, w := range ws {
		for s := 0; s < 32; s += 8 {
			c := byte(w >> s)
			if c == 0 {
				return string(b), true
			}
			b = append(b, c)
		}
	}
	return "", false
}
