package pyext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// namesScript writes Python's verdict on every code point c as a name, in
// three places: c alone (a first character), "_" + c and "a" + c (a later
// one; "a" composes with many combining marks, which NFKC joins). Per code
// point: whether it is assigned in Python's Unicode, then a verdict per
// string: 0 a name, 1 no identifier, 2 a keyword, 3 not NFKC. The verdict
// is the rule written plainly, and usmbridge.build's name_problem (the
// build's check of a module name, python/usmbridge/build.py) must give the
// same. The first lines are the Unicode version and the keyword lists.
const namesScript = `
import importlib.util, json, keyword, sys, unicodedata
spec = importlib.util.spec_from_file_location("ubuild", sys.argv[1])
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)

def verdict(s):
    if not s.isidentifier():
        return 1
    if keyword.iskeyword(s):
        return 2
    if unicodedata.normalize("NFKC", s) != s:
        return 3
    return 0

REASONS = {None: 0, "is not a Python identifier": 1, "is a Python keyword": 2}

out = bytearray()
for c in range(0x110000):
    ch = chr(c)
    out.append(unicodedata.category(ch) != "Cn")
    for s in (ch, "_" + ch, "a" + ch):
        v = verdict(s)
        p = build.name_problem(s)
        b = REASONS.get(p, 3 if p and p.startswith("is not in the NFKC form") else 9)
        if b != v:
            sys.exit("usmbridge.build's name_problem(%r) is %r; Python's rule says %d" % (s, p, v))
        out.append(v)
sys.stdout.write(unicodedata.unidata_version + "\n")
sys.stdout.write(json.dumps(keyword.kwlist) + "\n" + json.dumps(keyword.softkwlist) + "\n")
sys.stdout.flush()
sys.stdout.buffer.write(out)
`

// pythonNames is one interpreter's output of namesScript.
type pythonNames struct {
	unicode    string // its Unicode version ("14.0.0")
	kw, softKw []string
	verdicts   []byte // 4 per code point
}

func runNamesScript(t *testing.T, py string) *pythonNames {
	t.Helper()
	build := filepath.Join(testutil.ModuleRoot(), "python", "usmbridge", "build.py")
	cmd := exec.Command(py, "-c", namesScript, build)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	var p pythonNames
	lines := bytes.SplitN(out, []byte("\n"), 4)
	require.Len(t, lines, 4)
	p.unicode = string(lines[0])
	require.NoError(t, json.Unmarshal(lines[1], &p.kw))
	require.NoError(t, json.Unmarshal(lines[2], &p.softKw))
	p.verdicts = lines[3]
	require.Len(t, p.verdicts, 4*(unicode.MaxRune+1))
	return &p
}

// identifierChanges are the characters whose identifier properties
// Unicode changed after assigning them, by the version that changed them:
// a Python of another Unicode than Go's disagrees on them rightly.
var identifierChanges = map[string][]rune{
	// ZWNJ, ZWJ, KATAKANA MIDDLE DOT and its halfwidth form joined
	// ID_Continue (UAX #31 of Unicode 15.1).
	"15.1.0": {0x200C, 0x200D, 0x30FB, 0xFF65},
}

// unicodeBefore reports whether Unicode version a is older than b.
func unicodeBefore(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}

// goAssigned reports whether Go's Unicode assigns r (unicode.C holds the
// unassigned code points too).
func goAssigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z,
		unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// verdictOf is rule's answer as namesScript writes Python's.
func verdictOf(rule func(string) string, s string) byte {
	switch p := rule(s); {
	case p == "":
		return 0
	case p == "is not a Python identifier":
		return 1
	case p == "is a Python keyword":
		return 2
	case strings.HasPrefix(p, "is not in the NFKC form"):
		return 3
	}
	return 9
}

// asString is r as a Go string; a surrogate, which UTF-8 cannot hold, as
// the three bytes that would be it (invalid UTF-8, as in a Go string
// from C).
func asString(r rune) string {
	if r >= 0xD800 && r <= 0xDFFF {
		return string([]byte{0xED, byte(0xA0 | (r-0xD800)>>6), byte(0x80 | r&0x3F)})
	}
	return string(r)
}

// disagreements are where rule and Python disagree: code points in the
// three places, Python's keywords (each must be refused as one) and soft
// keywords (each is a name). Code points that only one of the two
// Unicodes assigns, and those whose properties changed between them, are
// left out when the versions differ, and counted in skipped.
func disagreements(rule func(string) string, py *pythonNames) (diffs []string, skipped int) {
	same := py.unicode == unicode.Version
	lo, hi := py.unicode, unicode.Version
	if unicodeBefore(hi, lo) {
		lo, hi = hi, lo
	}
	changed := map[rune]bool{}
	for v, rs := range identifierChanges {
		if unicodeBefore(lo, v) && !unicodeBefore(hi, v) {
			for _, r := range rs {
				changed[r] = true
			}
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		d := py.verdicts[4*r : 4*r+4]
		if !same && (d[0] == 0 || !goAssigned(r) || changed[r]) {
			skipped++
			continue
		}
		c := asString(r)
		for i, s := range []string{c, "_" + c, "a" + c} {
			if got := verdictOf(rule, s); got != d[1+i] && len(diffs) < 20 {
				diffs = append(diffs, fmt.Sprintf("%+q: Go %d, Python %d", s, got, d[1+i]))
			} else if got != d[1+i] {
				diffs = append(diffs, "...")
			}
		}
	}
	for _, k := range py.kw {
		if got := verdictOf(rule, k); got != 2 {
			diffs = append(diffs, fmt.Sprintf("keyword %q: Go %d", k, got))
		}
	}
	for _, k := range py.softKw {
		if got := verdictOf(rule, k); got != 0 {
			diffs = append(diffs, fmt.Sprintf("soft keyword %q: Go %d", k, got))
		}
	}
	return diffs, skipped
}

// The names a module defines are held to Python's own rule (names.go):
// nameProblem gives Python's verdict, and the same reason, for every code
// point of Unicode as a first and as a later character, every keyword and
// every soft keyword, against the project's Python and against each
// Python of USMBRIDGE_PYVERSIONS whose Unicode is Go's (where the two
// must agree on every code point, assigned or not). usmbridge.build's
// name_problem must agree with the plain rule on the same strings. The
// rule's mutants (the ASCII-only rule before issue 41, no NFKC condition,
// ID_Start for XID_Start, soft keywords as keywords) must each disagree.
func TestNamesMatchPython(t *testing.T) {
	pys := []string{testutil.ProjectPython(t)}
	for _, dir := range filepath.SplitList(os.Getenv("USMBRIDGE_PYVERSIONS")) {
		py := filepath.Join(dir, "bin", "python")
		out, err := exec.Command(py, "-c", "import unicodedata; print(unicodedata.unidata_version)").Output()
		if err == nil && strings.TrimSpace(string(out)) == unicode.Version {
			pys = append(pys, py)
		}
	}
	var project *pythonNames
	for _, py := range pys {
		names := runNamesScript(t, py)
		if project == nil {
			project = names
		}
		diffs, skipped := disagreements(nameProblem, names)
		t.Logf("%s (Unicode %s; Go's is %s): %d code points left out", py, names.unicode, unicode.Version, skipped)
		assert.Empty(t, diffs, "Go's rule and %s's disagree", py)
		if names.unicode == unicode.Version {
			assert.Zero(t, skipped)
		}
	}
	mutants := map[string]func(string) string{
		"ASCII only": func(s string) string {
			for i, r := range s {
				letter := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
				digit := i > 0 && '0' <= r && r <= '9'
				if r != '_' && !letter && !digit {
					return "is not a Python identifier"
				}
			}
			return nameProblem(s)
		},
		"no NFKC": func(s string) string {
			if p := nameProblem(s); !strings.HasPrefix(p, "is not in the NFKC form") {
				return p
			}
			return ""
		},
		"ID_Start for XID_Start": func(s string) string {
			if r := []rune(s); len(r) > 0 && idStart(r[0]) && !xidStart(r[0]) && isIdentifier("a"+string(r[1:])) {
				return "is not in the NFKC form"
			}
			return nameProblem(s)
		},
		"soft keywords": func(s string) string {
			if s == "match" || s == "case" || s == "type" || s == "_" {
				return "is a Python keyword"
			}
			return nameProblem(s)
		},
	}
	for name, rule := range mutants {
		diffs, _ := disagreements(rule, project)
		assert.NotEmpty(t, diffs, "the mutant %q of the rule agrees with Python", name)
	}
}

// Names Python reads as another (not in NFKC form) are refused with the
// name they would be read as; keywords as keywords; a valid non-ASCII
// identifier is a name (issue 41, items 8 and 9).
func TestNameProblems(t *testing.T) {
	for s, want := range map[string]string{
		"naïve":     "",
		"modé":      "",
		"match":     "",
		"_":         "",
		"class":     "is a Python keyword",
		"\ufb01t":   `is not in the NFKC form to which Python normalizes the identifiers it reads (code that writes it names "fit")`,
		"\u212bngs": `(code that writes it names "Ångs")`, // ANGSTROM SIGN
		"a-b":       "is not a Python identifier",
		"1st":       "is not a Python identifier",
		"":          "is not a Python identifier",
		"a\x00":     "is not a Python identifier",
		"\xffa":     "is not a Python identifier",
	} {
		if want == "" {
			assert.Empty(t, nameProblem(s), "%q", s)
		} else {
			assert.Contains(t, nameProblem(s), want, "%q", s)
		}
	}
	assert.Equal(t, `has a part "class" that is a Python keyword`, moduleNameProblem("pkg.class"))
	assert.Empty(t, moduleNameProblem("pkg.modé"))
	assert.Equal(t, `has a part "" that is not a Python identifier`, moduleNameProblem("pkg..m"))
}
