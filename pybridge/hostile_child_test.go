package pybridge

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/usm"
)

// childCaseEnv names the crash-class case a child process of
// TestCrashClassCases runs.
const childCaseEnv = "USMBRIDGE_PYBRIDGE_CHILD_CASE"

// crashCase is a hostile object that crashed the process (stack overflow,
// a nil dereference, a read of freed memory) before the SUAI reader took
// strong references and stopped converting containers generically. setup
// is Python that defines obj; PTR is the address of a 256-byte host
// allocation the registry knows, so that parsing gets past dpctl's step 6.
type crashCase struct {
	setup string
	// call, when set, is run instead of AsArray(obj) and returns the
	// result line ("ok ..." or the exception's class).
	call  func(t *testing.T, g *GIL, obj Object) string
	want  string // the exception's class, or "ok"
	shape string // for "ok": the shape the array must have
	// debugMalloc runs the child under PYTHONMALLOC=debug, which fills
	// freed memory, so that a read of a freed object faults instead of
	// reading stale but plausible bytes.
	debugMalloc bool
}

// suaiClass is the Python prelude of the cases: S(d) exposes d as its
// __sycl_usm_array_interface__, and base() is a valid 1-D float32 dict.
const suaiClass = `
class S:
    def __init__(self, d): self.d = d
    @property
    def __sycl_usm_array_interface__(self): return self.d
def base(**kw):
    d = {"data": (PTR, False), "shape": (4,), "strides": None, "typestr": "<f4", "version": 1, "syclobj": "host"}
    d.update(kw)
    return d
`

var crashCases = map[string]crashCase{
	// 1. Containers that contain themselves: dpctl raises TypeError for
	// int() of a list or dict, and ValueError for a non-str typestr or a
	// shape that is not a sequence.
	"shape_list_holds_itself":      {setup: `s = []; s.append(s); obj = S(base(shape=s))`, want: "TypeError"},
	"shape_item_dict_holds_itself": {setup: `d = {}; d["d"] = d; obj = S(base(shape=(d,)))`, want: "TypeError"},
	"data_list_holds_itself":       {setup: `p = [0, False]; p[0] = p; obj = S(base(data=p))`, want: "TypeError"},
	"strides_list_holds_itself":    {setup: `s = []; s.append(s); obj = S(base(strides=s, shape=(1,)))`, want: "TypeError"},
	"offset_list_holds_itself":     {setup: `o = []; o.append(o); obj = S(base(offset=o))`, want: "TypeError"},
	"version_list_holds_itself":    {setup: `v = []; v.append(v); obj = S(base(version=v))`, want: "TypeError"},
	"typestr_list_holds_itself":    {setup: `t = []; t.append(t); obj = S(base(typestr=t))`, want: "ValueError"},
	"dict_is_its_own_shape":        {setup: `d = base(); d["shape"] = d; obj = S(d)`, want: "ValueError"},
	"read_only_flag_holds_itself":  {setup: `p = [PTR, 0]; p[1] = p; obj = S(base(data=p))`, want: "ok", shape: "[4]"},

	// 2. Python code run while an item is being read frees what Go reads.
	// The reader reads the containers as they were when it first looked
	// at them (a snapshot it owns), so these parse.
	"index_clears_the_shape_list": {setup: `
class Evil:
    def __index__(self): shape.clear(); return 3
shape = [Evil(), 5]
obj = S(base(shape=shape))`, want: "ok", shape: "[3 5]"},
	"index_clears_the_strides_list": {setup: `
class Evil:
    def __index__(self): strides.clear(); return 1
strides = [Evil(), 1]
obj = S(base(shape=(2, 2), strides=strides))`, want: "ok", shape: "[2 2]"},
	// (A tuple of more than 20 items, and a list's items, go back to the
	// allocator when freed, not to a free list.)
	"index_replaces_shape_of_dict_subclass": {setup: `
class D(dict): pass
class Evil:
    def __index__(self): d["shape"] = (1,); return 3
d = D(base(shape=(Evil(),) + (1,) * 20))
obj = S(d)`, want: "ok", shape: "[3" + strings.Repeat(" 1", 20) + "]", debugMalloc: true},
	"index_replaces_data_of_dict_subclass": {setup: `
class D(dict): pass
class Evil:
    def __index__(self): d["data"] = (0, False); return PTR
d = D(base(data=[Evil(), False]))
obj = S(d)`, want: "ok", shape: "[4]", debugMalloc: true},
	"getattr_deletes_the_syclobj": {setup: `
class D(dict): pass
class Evil:
    def __getattr__(self, name):
        d.pop("syclobj", None)
        if name == "_get_capsule":
            return lambda: 42
        raise AttributeError(name)
d = D(base(syclobj=Evil()))
obj = S(d)`, want: "ValueError", debugMalloc: true},
}

// Generic conversions that followed containers without bound.
func init() {
	toGo := func(t *testing.T, g *GIL, obj Object) string {
		v, err := g.goValue(obj)
		if err != nil {
			return exceptionName(err)
		}
		return "ok " + fmt.Sprint(v)
	}
	fromGo := func(v any) func(*testing.T, *GIL, Object) string {
		return func(t *testing.T, g *GIL, _ Object) string {
			o, err := g.fromGo(v)
			if err != nil {
				return exceptionName(err)
			}
			g.DecRef(o)
			return "ok"
		}
	}
	selfSlice := []any{1, nil}
	selfSlice[1] = selfSlice
	selfMap := map[string]any{}
	selfMap["m"] = selfMap
	for name, c := range map[string]crashCase{
		"togo_list_holds_itself":    {setup: `obj = []; obj.append(obj)`, call: toGo, want: "ValueError"},
		"togo_dict_holds_itself":    {setup: `obj = {}; obj["d"] = [obj]`, call: toGo, want: "ValueError"},
		"togo_tuple_in_list_cycle":  {setup: `l = []; obj = (l,); l.append(obj)`, call: toGo, want: "ValueError"},
		"fromgo_slice_holds_itself": {setup: `obj = None`, call: fromGo(selfSlice), want: "ValueError"},
		"fromgo_map_holds_itself":   {setup: `obj = None`, call: fromGo(selfMap), want: "ValueError"},
		// addressof_ref is how a SyclQueue's ref is read when dpctl's C
		// API is missing: a failed lookup used to call NULL.
		"addressof_ref_missing": {setup: `obj = object()`, want: "AttributeError", call: func(t *testing.T, g *GIL, obj Object) string {
			_, err := g.addressofRef(obj.p)
			return exceptionName(err)
		}},
	} {
		crashCases[name] = c
	}
}

// TestCrashClassCases runs each case in a child process, so that a
// regression fails the case instead of killing the test binary.
func TestCrashClassCases(t *testing.T) {
	if os.Getenv(childCaseEnv) != "" {
		t.Skip("runs in the parent process only")
	}
	embedded(t) // skips or fails here, not in every child, without Python
	names := make([]string, 0, len(crashCases))
	for n := range crashCases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		c := crashCases[name]
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashClassChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), childCaseEnv+"="+name)
			if c.debugMalloc {
				cmd.Env = append(cmd.Env, "PYTHONMALLOC=debug")
			}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "the child process failed:\n%s", tail(out))
			want := "RESULT " + c.want
			if c.want == "ok" && c.call == nil {
				want += " " + c.shape
			}
			require.Contains(t, string(out), want+"\n", "child output:\n%s", tail(out))
		})
	}
}

// TestCrashClassChild is the child half of TestCrashClassCases.
func TestCrashClassChild(t *testing.T) {
	name := os.Getenv(childCaseEnv)
	if name == "" {
		t.Skip("runs in the child processes of TestCrashClassCases")
	}
	c, ok := crashCases[name]
	require.True(t, ok, "no case %q", name)
	py := embedded(t)
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, err := host.AllocHost(256)
	require.NoError(t, err)
	defer func() { _ = alloc.Free() }()
	run(t, py, "PTR = "+strconv.FormatUint(uint64(alloc.Pointer()), 10)+"\n"+suaiClass+c.setup)
	var result string
	require.NoError(t, py.Do(func(g *GIL) error {
		o := eval(t, g, "obj")
		defer g.DecRef(o)
		if c.call != nil {
			result = c.call(t, g, o)
			return nil
		}
		arr, err := g.AsArray(o, reg)
		switch err {
		case nil:
			result = "ok " + fmt.Sprint(arr.Shape)
			arr.Owner.Release()
		default:
			result = exceptionName(err)
		}
		return nil
	}))
	fmt.Printf("RESULT %s\n", result)
}

// exceptionName is the Python exception err raises: a Python exception's
// own class, else the one its kind maps to.
func exceptionName(err error) string {
	var pe *Exception
	if errors.As(err, &pe) {
		return pe.Type
	}
	return usm.PythonException(err)
}

// tail returns the end of a child's output, enough to show a crash.
func tail(out []byte) string {
	s := string(out)
	if len(s) > 4000 {
		s = "..." + s[len(s)-4000:]
	}
	return strings.TrimSpace(s)
}
