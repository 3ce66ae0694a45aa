package pybridge

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/usm"
)

// pyFloats evaluates a Python list of numbers as []float32.
func pyFloats(t *testing.T, py *Python, expr string) []float32 {
	t.Helper()
	var out []float32
	for _, v := range evalGo(t, py, expr).([]any) {
		switch x := v.(type) {
		case float64:
			out = append(out, float32(x))
		case int64:
			out = append(out, float32(x))
		default:
			t.Fatalf("%s: element %T", expr, v)
		}
	}
	return out
}

// TestTypedDpnpArrays reads and writes float32 dpnp.tensor arrays from Go
// without unsafe: device memory through dpctl's copier, shared memory
// directly, strided views element by element, and read-only arrays only
// for reading.
func TestTypedDpnpArrays(t *testing.T) {
	py, _ := withDpctl(t)
	for _, usmType := range []string{"device", "shared", "host"} {
		t.Run(usmType, func(t *testing.T) {
			run(t, py, "x = dpt.reshape(dpt.arange(12, dtype='f4', sycl_queue=q, usm_type='"+usmType+"'), (3, 4))\n"+
				"v = x[::-1, 1::2]")
			x, err := asArray(t, py, "x")
			require.NoError(t, err)
			defer x.Owner.Release()
			require.Equal(t, usmType, x.Memory.Kind.String())
			v, err := asArray(t, py, "v")
			require.NoError(t, err)
			defer v.Owner.Release()

			got := make([]float32, 6)
			require.NoError(t, usm.CopyToSlice(got, v))
			assert.Equal(t, pyFloats(t, py, "dpt.asnumpy(v).ravel().tolist()"), got)

			require.NoError(t, usm.CopyFromSlice(v, []float32{-1, -2, -3, -4, -5, -6}))
			assert.Equal(t, []float32{0, -5, 2, -6, 4, -3, 6, -4, 8, -1, 10, -2},
				pyFloats(t, py, "dpt.asnumpy(x).ravel().tolist()"), "Python sees the strided write, and nothing else changed")

			_, err = usm.View[float32](x)
			if usmType == "device" {
				require.ErrorIs(t, err, usm.ErrBuffer)
				return
			}
			require.NoError(t, err)
			e, err := usm.At[float32](v, 2, 0)
			require.NoError(t, err)
			assert.Equal(t, float32(-5), e)
		})
	}
	t.Run("read-only", func(t *testing.T) {
		run(t, py, "r = dpt.arange(4, dtype='f4', sycl_queue=q)\nr.flags['W'] = False")
		r, err := asArray(t, py, "r")
		require.NoError(t, err)
		defer r.Owner.Release()
		require.True(t, r.ReadOnly)
		require.ErrorIs(t, usm.CopyFromSlice(r, []float32{9, 9, 9, 9}), usm.ErrBuffer)
		got := make([]float32, 4)
		require.NoError(t, usm.CopyToSlice(got, r))
		assert.Equal(t, []float32{0, 1, 2, 3}, got)
	})
}
