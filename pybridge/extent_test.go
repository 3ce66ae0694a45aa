package pybridge

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// windowCase is a window of int32 elements on a 64-byte allocation.
type windowCase struct {
	name    string
	shape   string // Python tuples
	strides string
	offset  int64
	inside  bool
}

var windowCases = []windowCase{
	{"whole allocation", "(16,)", "None", 0, true},
	{"sub-window ending at the end", "(4,)", "None", 12, true},
	{"negative strides inside", "(16,)", "(-1,)", 15, true},
	{"2-D, rows reversed", "(4, 4)", "(-4, 1)", 12, true},
	{"one element below the base", "(1,)", "None", -1, false},
	{"far below the base", "(16,)", "None", -4096, false},
	{"one element past the end", "(17,)", "None", 0, false},
	{"offset one element too far", "(4,)", "None", 13, false},
	{"negative strides reaching below", "(16,)", "(-1,)", 14, false},
	{"a MiB backwards from below", "(1 << 20,)", "(-1,)", -1, false},
	{"huge offset", "(1,)", "None", 1 << 40, false},
}

// TestDpctlExtentEdges: with dpctl loaded, a SUAI whose window leaves its
// 64-byte allocation is refused with an *usm.ExtentError (ValueError),
// whatever the syclobj, and the exact fits bind with the allocation's
// extent.
func TestDpctlExtentEdges(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, testutil.ExtentPy)
	for _, form := range testutil.WindowForms {
		base := uintptr(evalGo(t, py, "ext_ptr['"+form.Buf+"']").(int64))
		for _, c := range windowCases {
			t.Run(form.Buf+" "+form.So+"/"+c.name, func(t *testing.T) {
				expr := fmt.Sprintf("ExtWin('%s', %s, %s, %s, %d)", form.Buf, form.So, c.shape, c.strides, c.offset)
				arr, err := asArray(t, py, expr)
				if !c.inside {
					var ee *usm.ExtentError
					require.ErrorAs(t, err, &ee, expr)
					assert.ErrorIs(t, err, usm.ErrValue)
					assert.Equal(t, [2]uintptr{base, base + 64}, ee.Allocation)
					return
				}
				require.NoError(t, err, expr)
				defer arr.Owner.Release()
				assert.Equal(t, base, arr.Memory.Base, "base")
				assert.EqualValues(t, 64, arr.Memory.Size, "size")
			})
		}
	}
}

// A DLPack tensor is measured against the allocation its data pointer (the
// producer's) lies in, whatever byte_offset says.
func TestDpctlDLPackImportWindow(t *testing.T) {
	_, d := withDpctl(t)
	alloc, err := d.Alloc(0, usm.KindDevice, 64)
	require.NoError(t, err)
	defer alloc.Free()
	arr, err := d.Registry().NewArray(alloc, dtype.Int32, []int64{16})
	require.NoError(t, err)
	require.Equal(t, alloc.Pointer(), arr.Memory.Base, "NewArray binds with the extent")
	require.EqualValues(t, 64, arr.Memory.Size)

	for _, c := range []struct {
		name          string
		byteOffset    uint64
		shape, stride int64
		inside        bool
	}{
		{"whole", 0, 16, 1, true},
		{"last element through byte_offset", 60, 1, 1, true},
		{"negative strides inside", 60, 16, -1, true},
		{"byte_offset one past the end", 64, 1, 1, false},
		{"one element too many", 0, 17, 1, false},
		{"negative strides below the base", 0, 2, -1, false},
		{"byte_offset 2^40", 1 << 40, 1, 1, false},
		{"byte_offset 2^63", 1 << 63, 1, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
			require.NoError(t, err)
			tn := &(*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer())).DLTensor
			require.Equal(t, alloc.Pointer(), tn.Data)
			tn.ByteOffset = c.byteOffset
			*(*int64)(cmem.Ptr(tn.Shape)) = c.shape
			*(*int64)(cmem.Ptr(tn.Strides)) = c.stride
			imp, err := dlpack.Import(m, dlpack.ImportOptions{Registry: d.Registry()})
			if !c.inside {
				require.ErrorIs(t, err, usm.ErrBuffer)
				assert.Equal(t, "BufferError", usm.PythonException(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, alloc.Pointer(), imp.Memory.Base)
			assert.EqualValues(t, 64, imp.Memory.Size)
			imp.Release()
		})
	}
	assert.Zero(t, exportledger.Read().LiveImports)
}

// Binds from many goroutines at once share the cached native contexts.
func TestDpctlExtentConcurrent(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, testutil.ExtentPy)
	exprs := make([]string, 0, len(testutil.WindowForms))
	for _, f := range testutil.WindowForms {
		exprs = append(exprs, "ExtWin('"+f.Buf+"', "+f.So+", (17,), None, 0)")
	}
	inParallel(t, 8, func(w int) error {
		for i := range 50 {
			e := exprs[(w+i)%len(exprs)]
			_, err := asArray(t, py, e)
			var ee *usm.ExtentError
			if !errors.As(err, &ee) {
				return fmt.Errorf("%s: %v, want an ExtentError", e, err)
			}
			if !strings.Contains(err.Error(), "outside its allocation") {
				return err
			}
		}
		return nil
	})
}
