package pybridge

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/usm"
)

// readerCases are SUAI dicts as JSON, for the three readers of
// usm.Fields.
var readerCases = []string{
	`{"data":[4096,false],"shape":[3,4],"strides":[-4,1],"offset":8,"typestr":"<i8","version":1,"syclobj":"host"}`,
	`{"data":[4096,true],"shape":[],"strides":null,"typestr":"|f8","version":1,"syclobj":"host"}`,
	`{"data":[18446744073709551615,1],"shape":[0],"typestr":"|u1","version":true,"syclobj":"opencl:cpu:0"}`,
	// offset and version first.
	`{"offset":null,"version":"x"}`, `{"offset":1.5}`, `{"offset":-0.0}`, `{"offset":1e3}`,
	`{"offset":9223372036854775808}`, `{"offset":-9223372036854775809}`, `{"offset":[1]}`, `{"offset":{}}`,
	`{"version":2}`, `{"version":false}`, `{"version":4294967297}`, `{"version":"1"}`, `{}`,
	// data.
	`{"version":1}`, `{"version":1,"data":null}`, `{"version":1,"data":[]}`, `{"version":1,"data":[1]}`,
	`{"version":1,"data":[1,2,3]}`, `{"version":1,"data":0}`, `{"version":1,"data":0.0}`, `{"version":1,"data":5}`,
	`{"version":1,"data":2.5}`, `{"version":1,"data":true}`, `{"version":1,"data":false}`, `{"version":1,"data":""}`,
	`{"version":1,"data":"ab"}`, `{"version":1,"data":"abc"}`, `{"version":1,"data":"\u00e9\u00e9"}`,
	`{"version":1,"data":{}}`, `{"version":1,"data":{"a":1}}`, `{"version":1,"data":{"a":1,"b":2}}`,
	`{"version":1,"data":[-1,false]}`, `{"version":1,"data":[18446744073709551616,false]}`,
	`{"version":1,"data":[-99999999999999999999,false]}`, `{"version":1,"data":[4096.0,false]}`,
	`{"version":1,"data":[1e3,false]}`, `{"version":1,"data":["4096",false]}`, `{"version":1,"data":[null,false]}`,
	`{"version":1,"data":[[4096],false]}`, `{"version":1,"data":[true,false],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	// The read-only flag's truth.
	`{"version":1,"data":[4096,null],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,"x"],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,""],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,[]],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,[0]],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,{}],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,0.0],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,-0.5],"syclobj":"host","shape":[1],"typestr":"|u1"}`,
	// syclobj.
	`{"version":1,"data":[4096,false]}`, `{"version":1,"data":[4096,false],"syclobj":null}`,
	`{"version":1,"data":[4096,false],"syclobj":0}`, `{"version":1,"data":[4096,false],"syclobj":""}`,
	`{"version":1,"data":[4096,false],"syclobj":"vulkan"}`, `{"version":1,"data":[4096,false],"syclobj":["host"]}`,
	`{"version":1,"data":[4096,false],"syclobj":{"_get_capsule":1}}`,
	`{"version":1,"data":[4096,false],"syclobj":"host\u0000"}`,
	// shape, typestr, strides.
	`{"version":1,"data":[4096,false],"syclobj":"host"}`, `{"version":1,"data":[4096,false],"syclobj":"host","shape":null}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":"ab"}`, `{"version":1,"data":[4096,false],"syclobj":"host","shape":{}}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":5}`, `{"version":1,"data":[4096,false],"syclobj":"host","shape":[1]}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[1],"typestr":5}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[1],"typestr":"f3"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[1],"typestr":"|f4\u0000junk"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":["x"],"typestr":"f3"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[1,2],"typestr":"|u1","strides":[1]}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[1,2],"typestr":"|u1","strides":"ab"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[1,2],"typestr":"|u1","strides":5}`,
	// Items, dimension by dimension.
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[2,"x"],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[null],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[1.5],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[[1]],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[99999999999999999999],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[-1,"x"],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":["x",-1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[-1,2],"strides":[null,1],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[-1,2],"strides":[1,null],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[2,2],"strides":[true,false],"typestr":"|u1"}`,
	`{"version":1,"data":[4096,false],"syclobj":"host","shape":[4611686018427387904,4],"typestr":"|u1"}`,
}

// The same dict gives the same Interface, or the same error kind on the
// same field, whichever reader reads it: JSON text (usm.ParseJSON), Go
// values (usm.Parse of the dict decoded with UseNumber) and live Python
// objects (GIL.parseSUAI of the dict json.loads makes). The cases are the
// table above and the corpus of usm's FuzzParse.
func TestReadersAgree(t *testing.T) {
	py := embedded(t)
	run(t, py, "import json\n"+`
class S:
    def __init__(self, d): self.d = d
    @property
    def __sycl_usm_array_interface__(self): return self.d
`)
	cases := append([]string(nil), readerCases...)
	corpus, err := filepath.Glob(filepath.Join("..", "usm", "testdata", "fuzz", "FuzzParse", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, corpus)
	for _, f := range corpus {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		require.True(t, len(lines) > 1 && strings.HasPrefix(lines[1], "string("), f)
		js, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
		require.NoError(t, err, f)
		cases = append(cases, js)
	}
	compared := 0
	for _, js := range cases {
		fromJSON, errJSON := usm.ParseJSON([]byte(js))
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader([]byte(js)))
		d.UseNumber()
		if d.Decode(&m) != nil || m == nil {
			continue // not a JSON object: ParseJSON's own error
		}
		fromMap, errMap := usm.Parse(m)
		var fromPy, fromC usm.Interface
		var errPy, errC error
		isDict := true
		require.NoError(t, py.Do(func(g *GIL) error {
			obj, err := g.Eval("S(json.loads(" + strconv.Quote(js) + "))")
			if err != nil { // a JSON Python reads and Go does not, or the other way round
				isDict = false
				return nil
			}
			defer g.DecRef(obj)
			if !evalGo(t, py, "isinstance(json.loads("+strconv.Quote(js)+"), dict)").(bool) {
				isDict = false
				return nil
			}
			fromPy, errPy = g.parseSUAI(obj)
			fromC, errC = g.parseSUAIAsC(obj)
			return nil
		}))
		if !isDict {
			continue
		}
		compared++
		for _, r := range []struct {
			name string
			in   usm.Interface
			err  error
		}{{"Go map", fromMap, errMap}, {"Python", fromPy, errPy}, {"Python read as C reads it", fromC, errC}} {
			assert.Equal(t, exceptionName(errJSON), exceptionName(r.err), "%s reader, %s: %v / %v", r.name, js, errJSON, r.err)
			assert.Equal(t, malformedField(errJSON), malformedField(r.err), "%s reader, %s: %v / %v", r.name, js, errJSON, r.err)
			if errJSON == nil && r.err == nil {
				assert.Equal(t, fromJSON, r.in, "%s reader, %s", r.name, js)
			}
		}
	}
	t.Logf("%d of %d cases compared", compared, len(cases))
	assert.Greater(t, compared, len(readerCases)-5, "most cases were compared")
}

// parseSUAIAsC is parseSUAI the way an extension module's C half has it
// parsed: C reads the attribute (a missing one is cleared and passed as
// NULL), and Go binds the dict it read (ArrayFromSUAI's readSUAIDictOf).
func (g *GIL) parseSUAIAsC(obj Object) (usm.Interface, error) {
	a := g.api()
	d := a.GetAttrC(obj.p, cSUAI)
	if d == 0 {
		if a.ErrGivenMatches(a.ErrOccurred(), a.Exc["AttributeError"]) {
			a.ErrClear()
			return usm.Interface{}, g.noSUAIError(obj)
		}
		return usm.Interface{}, g.fetch("")
	}
	s, err := g.readSUAIDictOf(obj, Object{d})
	if err != nil {
		return usm.Interface{}, err
	}
	defer s.Release(g)
	return usm.ParseFields(s)
}
