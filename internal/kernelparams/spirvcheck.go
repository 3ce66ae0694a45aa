package kernelparams

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
	"strconv"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// SPIR-V's physical layout (the SPIR-V specification, unified 1.6,
// "Physical Layout of a SPIR-V Module and Instruction"): a header of five
// words (magic, version, generator, id bound, schema 0), then
// instructions, each beginning with a word holding its word count (itself
// included) in the high 16 bits and its opcode in the low 16.
const (
	headerWords = 5
	// maxIDBound is SPIR-V's universal limit on the id bound (the
	// specification's "Universal Limits"), which spirv-val enforces too: a
	// runtime may size tables by the bound.
	maxIDBound = 0x3FFFFF
)

// spirvOp is what the grammar says of an opcode (spirvops.go, written by
// genops.go): the fewest words its instruction takes, the word of its
// Result <id> and of a literal string (0 if none), and the words that are
// <id>s (bit i: word i of the instruction), as far as its operands have
// fixed places.
type spirvOp struct {
	op       uint16
	minWords uint8
	result   uint8
	str      uint8
	ids      uint32
	name     string
}

// opInfo returns the grammar's entry for opcode op.
func opInfo(op uint16) (*spirvOp, bool) {
	i := sort.Search(len(spirvOps), func(i int) bool { return spirvOps[i].op >= op })
	if i < len(spirvOps) && spirvOps[i].op == op {
		return &spirvOps[i], true
	}
	return nil, false
}

// CheckSPIRV checks that module is a SPIR-V module every reader can walk,
// before a runtime sees it: Intel's OpenCL runtime loops forever on an
// instruction of word count 0, and ends the process on an unknown opcode
// (RATIONALE.md, "Kernels on the array's own queue"). It checks the header
// (whole words, the magic number in either byte order, a version 1.x, an
// id bound within SPIR-V's limit, schema 0) and every instruction: a word
// count of at least 1 and at most what is left of the module, an opcode
// the SPIR-V grammar defines, at least the words its operands take, <id>s
// from 1 to below the bound, each the Result <id> of an instruction, and
// literal strings that end within the instruction, as far as the operands
// have fixed places. It is no validator of meaning (spirv-val's types,
// layout and rules): a module that passes may still fail to build.
//
// It returns the module in little-endian words, the order runtimes read:
// module itself, or a copy of a big-endian one with its words swapped,
// which is the same module (a literal string is packed into words, not
// bytes). A module it refuses is an ErrValue error (op names the caller)
// saying what is malformed, at which word.
func CheckSPIRV(op string, module []byte) ([]byte, error) {
	le, at, detail := checkSPIRV(module)
	if detail != "" {
		return nil, errkind.New(errkind.Value, op, "malformed SPIR-V module: word "+strconv.Itoa(at)+": "+detail)
	}
	return le, nil
}

// checkSPIRV is CheckSPIRV's rule: the little-endian module, or the word
// where module is malformed and what is wrong there.
func checkSPIRV(module []byte) (le []byte, at int, detail string) {
	if len(module) < 4*headerWords || len(module)%4 != 0 {
		return nil, 0, "the module is " + strconv.Itoa(len(module)) + " bytes long; SPIR-V is 4-byte words, at least the " +
			strconv.Itoa(headerWords) + " of its header"
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch {
	case binary.LittleEndian.Uint32(module) == spvMagic:
	case binary.BigEndian.Uint32(module) == spvMagic:
		order = binary.BigEndian
	default:
		return nil, 0, "0x" + hex(binary.LittleEndian.Uint32(module)) + " is not SPIR-V's magic number 0x07230203 (in either byte order)"
	}
	word := func(i int) uint32 { return order.Uint32(module[4*i:]) }
	n := len(module) / 4
	if v := word(1); v&0xFF0000FF != 0 || v>>16 != 1 {
		return nil, 1, "version 0x" + hex(v) + " is not a SPIR-V version 1.x (0x0001mm00)"
	}
	bound := word(3)
	if bound > maxIDBound {
		return nil, 3, "the id bound " + strconv.FormatUint(uint64(bound), 10) + " is past SPIR-V's limit of " + strconv.Itoa(maxIDBound)
	}
	if s := word(4); s != 0 {
		return nil, 4, "schema " + strconv.FormatUint(uint64(s), 10) + " is not 0, the only one SPIR-V defines"
	}
	var results []uint32 // every Result <id>, for the uses below
	for at := headerWords; at < n; {
		first := word(at)
		wc, opcode := int(first>>16), uint16(first)
		if wc == 0 {
			return nil, at, "an instruction (opcode " + strconv.Itoa(int(opcode)) + ") has a word count of 0; it counts at least its first word"
		}
		if wc > n-at {
			return nil, at, "an instruction (opcode " + strconv.Itoa(int(opcode)) + ") of " + strconv.Itoa(wc) +
				" words runs past the module's end at word " + strconv.Itoa(n)
		}
		info, ok := opInfo(opcode)
		if !ok {
			return nil, at, "opcode " + strconv.Itoa(int(opcode)) + " is not one of SPIR-V (grammar " + spirvGrammar + ", with its extensions)"
		}
		what := info.name + " of " + strconv.Itoa(wc) + " words"
		if wc < int(info.minWords) {
			return nil, at, what + " is short: it takes at least " + strconv.Itoa(int(info.minWords))
		}
		for ids := info.ids; ids != 0; ids &= ids - 1 {
			i := bits.TrailingZeros32(ids)
			if id := word(at + i); id == 0 || id >= bound {
				return nil, at + i, "<id> " + strconv.FormatUint(uint64(id), 10) + " of " + what + " at word " + strconv.Itoa(at) +
					" is not from 1 to below the id bound " + strconv.FormatUint(uint64(bound), 10)
			}
		}
		if s := int(info.str); s != 0 && !hasNUL(word, at+s, at+wc) {
			return nil, at + s, "the literal string of " + what + " at word " + strconv.Itoa(at) + " does not end (with a NUL byte) within the instruction"
		}
		if info.result != 0 {
			results = append(results, word(at+int(info.result)))
		}
		at += wc
	}
	// Every <id> an instruction uses is the result of one, before it or
	// after (Intel's runtime ends the process on one that is not).
	slices.Sort(results)
	for at := headerWords; at < n; {
		first := word(at)
		wc := int(first >> 16)
		info, _ := opInfo(uint16(first))
		for ids := info.ids; ids != 0; ids &= ids - 1 {
			i := bits.TrailingZeros32(ids)
			if _, ok := slices.BinarySearch(results, word(at+i)); !ok {
				return nil, at + i, "<id> " + strconv.FormatUint(uint64(word(at+i)), 10) + " of " + info.name + " at word " + strconv.Itoa(at) +
					" is the Result <id> of no instruction"
			}
		}
		at += wc
	}
	if order == binary.LittleEndian {
		return module, 0, ""
	}
	le = make([]byte, len(module))
	for i := range n {
		binary.LittleEndian.PutUint32(le[4*i:], word(i))
	}
	return le, 0, ""
}

// hasNUL reports whether a word in [from, to) holds a zero byte.
func hasNUL(word func(int) uint32, from, to int) bool {
	for i := from; i < to; i++ {
		w := word(i)
		if w&0xFF == 0 || w&0xFF00 == 0 || w&0xFF0000 == 0 || w&0xFF000000 == 0 {
			return true
		}
	}
	return false
}

func hex(x uint32) string {
	s := strconv.FormatUint(uint64(x), 16)
	for len(s) < 8 {
		s = "0" + s
	}
	return s
}
