package testutil

import (
	"encoding/binary"
	"testing"
)

// MalformedModule is a SPIR-V module made malformed, and the word where it
// is (what kernelparams.CheckSPIRV reports).
type MalformedModule struct {
	Name   string
	Module []byte
	Word   int
}

// MalformedSPIRV returns SPIRV made malformed in the ways that stopped
// Intel's CPU OpenCL runtime (intel-opencl-rt 2026.2) in clBuildProgram:
// it looped forever on an instruction of word count 0, and ended the
// process (exit status 14 or 10) on an unknown opcode, a schema other than
// 0, an instruction cut by the module's end, and an <id> nothing defines
// (past the bound, or below it). The backends refuse each before a
// runtime sees it. Without the SPIR-V tools it skips or fails tb as SPIRV
// does.
func MalformedSPIRV(tb testing.TB) []MalformedModule {
	tb.Helper()
	good := SPIRV(tb)
	word := func(m []byte, i int) uint32 { return binary.LittleEndian.Uint32(m[4*i:]) }
	var starts []int // where each instruction begins
	for at := 5; at < len(good)/4; at += int(word(good, at) >> 16) {
		starts = append(starts, at)
	}
	edit := func(i int, f func(uint32) uint32) []byte {
		m := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(m[4*i:], f(word(m, i)))
		return m
	}
	first := func(opcode uint32) int { // the first instruction of opcode
		for _, at := range starts {
			if word(good, at)&0xFFFF == opcode {
				return at
			}
		}
		tb.Fatalf("MalformedSPIRV: the module has no instruction of opcode %d", opcode)
		return 0
	}
	void := first(19) + 1    // OpTypeVoid's Result <id>
	returns := first(33) + 2 // the return type of the first OpTypeFunction
	bound := word(good, 3)   // an <id> nothing defines, once the bound is one more
	undefined := edit(3, func(uint32) uint32 { return bound + 1 })
	binary.LittleEndian.PutUint32(undefined[4*returns:], bound)
	last := starts[len(starts)-3] // an instruction of more than one word (OpStore or the like)
	if word(good, last)>>16 < 2 {
		tb.Fatalf("MalformedSPIRV: the instruction at word %d has one word", last)
	}
	return []MalformedModule{
		{"word count 0", edit(5, func(w uint32) uint32 { return w & 0xFFFF }), 5},
		{"unknown opcode", edit(starts[len(starts)-2], func(w uint32) uint32 { return w&^0xFFFF | 0x7777 }), starts[len(starts)-2]},
		{"schema 1", edit(4, func(uint32) uint32 { return 1 }), 4},
		{"cut inside an instruction", good[:4*(last+1)], last},
		{"<id> past the bound", edit(void, func(uint32) uint32 { return 5000 }), void},
		{"<id> nothing defines", undefined, returns},
	}
}
