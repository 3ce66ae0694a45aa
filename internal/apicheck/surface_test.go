package apicheck

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// What counts as an export, on a fixture with every kind of declaration.
func TestMeasure(t *testing.T) {
	s, err := Measure(filepath.Join("testdata", "sample"))
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "B", "Device", "Embedded", "F", "Fine", "I", "Leaky", "T", "V"}, s.Decls)
	assert.Equal(t, []string{"T.M", "T.N"}, s.Methods)
	assert.Equal(t, []string{"I.Do", "T.Embedded", "T.X", "T.Y"}, s.Fields)
	assert.Equal(t, 12, s.Count())
}

// exportBudget is the export count (Measure: exported top-level names and
// exported methods of exported types) each public package may have. An
// export is added deliberately: with a user who needs it, and this number
// raised in the same commit.
var exportBudget = map[string]int{
	"cpu":       10, // -DeviceName (Devices()[0].Name says it), -New (new(Backend) is ready to use)
	"dlpack":    31, // -Tensor.ReleaseDeferred (internal/hooks: the extension's C half calls a producer's C deleter itself); +Live, the leak counts as every package gives them; -NegotiateVersion (internal/dlabi, which the extension imports); -the raw ABI (DLTensor, ManagedTensor, ManagedTensorVersioned, TypeCode, DataType, Flag*: internal/dlabi; dtype.DataType names the element type); -Stats, ReadStats (Live; the extension reads the ledger)
	"dtype":     35, // the element type (issue 25): every DLPack dtype of whole-byte elements by name (24), both mappings (DLPack, typestr), size, name, byte order
	"levelzero": 40, // +Backend.QueryPointerInContextOf (the registry binds a filter selector in the named device's context); +Queue.OrderBefore (usm.Order orders on the device); -ErrorInvalidArgument (usm.ErrValue says it)
	"opencl":    31, // +Backend.QueryPointerInContextOf (the registry binds a filter selector in the named device's context); +Queue.OrderBefore (usm.Order orders on the device); -InvalidValue (usm.ErrValue says it), InvalidContext, InvalidCommandQueue (handles the caller of an Unsafe function vouched for)
	"pybridge":  55, // CPython for a program that embeds it and for Go code Python loaded (Attach: pyext's Go half, a public client like any other): raw objects for C, calls, exceptions as objects both ways, the DLPack and SUAI steps an extension's C half does not make
	"pyext":     70, // extension modules in Go (issue 23): definition (Module, FuncN/FuncNR, P and its options), the argument and result types (Array, AnyArray, Device), errors, the interpreter for callbacks
	"syclobj":   38, // -FromValue, Resolve, Error: the SUAI parser's, now in usm; -CapsuleSource, FromCapsuleFunc: pybridge makes capsule sources through internal/hooks
	"typestr":   21, // -the element type and its DLPack mapping (14 types, DataType, Type.DataType, FromDataType): package dtype
	"usm":       79, // +Order: ordering a consumer queue on the device; -the backend-only interfaces (Copier, QueueProvider, RefBinder, DLPackDevicer, Orderer), NewAllocation, Registry.SyclobjFor, Registry.DLPackDevice (arrays carry it), the SUAI reader interface (Fields, ReadError, ParseFields, Registry.ParseFields: internal/suaifields, internal/hooks) and AccessError
}

// TestExportBudget keeps the public surface from growing unnoticed; -v
// prints every package's count.
func TestExportBudget(t *testing.T) {
	root := testutil.ModuleRoot()
	pkgs, err := Public(root)
	require.NoError(t, err)
	total := 0
	for _, p := range pkgs {
		s, err := Measure(filepath.Join(root, p))
		require.NoError(t, err)
		t.Logf("%-10s %3d (decls %3d, methods %3d; fields %3d)", p, s.Count(), len(s.Decls), len(s.Methods), len(s.Fields))
		total += s.Count()
		budget, ok := exportBudget[p]
		if !ok {
			t.Errorf("public package %s has no export budget", p)
			continue
		}
		if s.Count() > budget {
			t.Errorf("%s exports %d names, over its budget of %d: unexport what no user needs, or raise the budget with the reason", p, s.Count(), budget)
		}
	}
	t.Logf("total      %3d", total)
}
