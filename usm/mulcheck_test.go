package usm

import (
	"math"
	"math/big"
	"testing"
)

// mulCheck must agree with exact arithmetic: the product when it fits in
// an int64, an overflow otherwise, at every sign and at the edges.
func TestMulCheckExact(t *testing.T) {
	edges := []int64{0, 1, -1, 2, -2, 3, 1 << 31, -(1 << 31), 1 << 32, -(1 << 32), 3037000499, 3037000500, -3037000500,
		1 << 62, -(1 << 62), math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, math.MaxInt64 / 2, math.MinInt64 / 2}
	for _, a := range edges {
		for _, b := range edges {
			checkMul(t, a, b)
		}
	}
}

func FuzzMulCheck(f *testing.F) {
	f.Add(int64(math.MinInt64), int64(1))
	f.Add(int64(-4611686018427387904), int64(2))
	f.Add(int64(4611686018427387904), int64(2))
	f.Fuzz(checkMul)
}

func checkMul(t *testing.T, a, b int64) {
	exact := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	got, ok := mulCheck(a, b)
	if fits := exact.IsInt64(); ok != fits || (fits && got != exact.Int64()) {
		t.Fatalf("mulCheck(%d, %d) = %d, %v; exact product %s", a, b, got, ok, exact)
	}
}
