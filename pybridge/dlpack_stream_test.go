package pybridge

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/errkind"
)

// __dlpack__'s stream follows the array's device: NumPy's rule (only None,
// RuntimeError otherwise) for kDLCPU, None or -1 (NoSync) for kDLOneAPI,
// whose other integers are ValueErrors and other objects TypeErrors; with
// a kDLCPU dl_device only None. (A dpctl.SyclQueue stream is tested through
// the extension module, python/tests/test_streams.py.)
func TestParseDLPackArgsStream(t *testing.T) {
	py := embedded(t)
	cpu := dlpack.Device{Type: dlpack.CPU}
	oneAPI := dlpack.Device{Type: dlpack.OneAPI}
	for _, c := range []struct {
		dev              dlpack.Device
		stream, dlDevice string
		want             string // exception name, or "sync"/"nosync"
	}{
		{cpu, "None", "None", "sync"},
		{cpu, "-1", "None", "RuntimeError"},
		{cpu, "0", "None", "RuntimeError"},
		{cpu, "1", "None", "RuntimeError"},
		{cpu, "2**70", "None", "RuntimeError"},
		{cpu, "'x'", "None", "RuntimeError"},
		{cpu, "-1", "(1, 0)", "RuntimeError"},
		{oneAPI, "None", "None", "sync"},
		{oneAPI, "-1", "None", "nosync"},
		{oneAPI, "-1", "(14, 0)", "nosync"},
		{oneAPI, "-1", "(1, 0)", "ValueError"},
		{oneAPI, "0", "None", "ValueError"},
		{oneAPI, "1", "None", "ValueError"},
		{oneAPI, "2", "None", "ValueError"},
		{oneAPI, "-2", "None", "ValueError"},
		{oneAPI, "2**70", "None", "ValueError"},
		{oneAPI, "-2**70", "None", "ValueError"},
		{oneAPI, "True", "None", "TypeError"},
		{oneAPI, "1.0", "None", "TypeError"},
		{oneAPI, "'x'", "None", "TypeError"},
	} {
		name := c.dev.String() + " stream=" + c.stream + " dl_device=" + c.dlDevice
		require.NoError(t, py.Do(func(g *GIL) error {
			s, dd := eval(t, g, c.stream), eval(t, g, c.dlDevice)
			defer g.DecRef(s)
			defer g.DecRef(dd)
			o, err := g.parseDLPackArgs(c.dev, s, Object{}, dd, Object{})
			switch c.want {
			case "sync", "nosync":
				require.NoError(t, err, name)
				assert.Equal(t, c.want == "nosync", o.NoSync, name)
			default:
				assert.Equal(t, c.want, exceptionName(err), "%s: %v", name, err)
				if c.want == "RuntimeError" {
					assert.ErrorIs(t, err, errHostStream, name)
				}
			}
			return nil
		}))
	}
}

// A stream on a kDLCPU array raises what the process's NumPy raises for
// the same call: RuntimeError up to NumPy 2.4, ValueError from 2.5 on
// (python/tests/test_streams.py holds it to the real NumPy of each CPython
// of the support matrix); both match errHostStream. Here sys.modules's
// numpy is a stand-in of each version, for one hold of the GIL.
func TestHostStreamFollowsNumPyVersion(t *testing.T) {
	py := embedded(t)
	cpu := dlpack.Device{Type: dlpack.CPU}
	for _, c := range []struct{ version, want string }{
		{"'2.4.6'", "RuntimeError"},
		{"'1.26.4'", "RuntimeError"},
		{"'2.5.0'", "ValueError"},
		{"'2.5.0rc1'", "ValueError"},
		{"'2.10.0.dev0+git20261127'", "ValueError"},
		{"'3.0.0'", "ValueError"},
		{"'unknown'", "RuntimeError"},
		{"None", "RuntimeError"},   // a __version__ that is not a str
		{"absent", "RuntimeError"}, // no numpy in sys.modules
	} {
		require.NoError(t, py.Do(func(g *GIL) error {
			stub := "sys.modules['numpy'] = types.SimpleNamespace(__version__=" + c.version + ")"
			if c.version == "absent" {
				stub = "sys.modules.pop('numpy')"
			}
			require.NoError(t, g.Exec("import sys, types\n_ub_saved_numpy = sys.modules['numpy']\n"+stub))
			defer func() {
				require.NoError(t, g.Exec("import sys\nsys.modules['numpy'] = _ub_saved_numpy\ndel _ub_saved_numpy"))
			}()
			s, dd := eval(t, g, "1"), eval(t, g, "None")
			defer g.DecRef(s)
			defer g.DecRef(dd)
			_, err := g.parseDLPackArgs(cpu, s, Object{}, dd, Object{})
			assert.Equal(t, c.want, exceptionName(err), "numpy %s: %v", c.version, err)
			assert.ErrorIs(t, err, errHostStream, c.version)
			assert.Contains(t, errkind.Message(err), "only stream=None is supported", c.version)
			return nil
		}))
	}
}
