package test

import (
	"context"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// The docs a user reads: every code block in them is checked, Python by
// running it (TestDocsPython), Go by holding it to the code it was copied
// from, which go test compiles and runs (TestDocsGo). RATIONALE.md holds
// no code to run.
var docFiles = []string{"README.md", "CONTRIBUTING.md", "docs/*.md"}

// docBlock is one fenced code block of a doc.
type docBlock struct {
	file   string // relative to the repository's root
	line   int    // of the opening fence, 1-based
	lang   string // the fence's info string: "python", "go", "sh", ...
	text   string // the lines between the fences, each ending in "\n"
	marker string // the HTML comment on the line before the fence, without <!-- -->; "" if none
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// Markers a block may carry, on the line right before its fence:
//
//	<!-- not run: reason -->         a Python block that is not run (kept rare: a file of the
//	                                 reader's own project, say)
//	<!-- run: mpiexec -n N -->       a Python block run as N MPI ranks (USMBRIDGE_MPIEXEC)
//	<!-- go: path [name] -->         a Go block that is lines of the declaration name in the
//	                                 file path (relative to the root), or of the whole file
//	<!-- run after: statements -->   a Python block run as a program after the statements
//	                                 (the module of one's own it shows, bound to a test module)
//	<!-- run by: path, how -->       a Python block another test runs, which reads it from
//	                                 the docs (docBlockRunBy): a project's setup.py, say
var (
	notRunRe   = regexp.MustCompile(`^not run: \S.*$`)
	runAfterRe = regexp.MustCompile(`^run after: (\S.*)$`)
	runByRe    = regexp.MustCompile(`^run by: (\S+\.go), \S.*$`)
	mpiRunRe   = regexp.MustCompile(`^run: mpiexec -n ([0-9]+)$`)
	goCodeRe   = regexp.MustCompile(`^go: (\S+\.go)(?: (\S+))?$`)
	fenceRe    = regexp.MustCompile("^```([A-Za-z0-9_+-]*)\\s*$")
	commentRe  = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)
)

// readDocs returns the code blocks of every doc file, failing on an
// unterminated fence.
func readDocs(t *testing.T, root string) []docBlock {
	t.Helper()
	var blocks []docBlock
	for _, pattern := range docFiles {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			rel, _ := filepath.Rel(root, path)
			blocks = append(blocks, parseBlocks(t, rel, path)...)
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no code blocks in the docs")
	}
	return blocks
}

func parseBlocks(t *testing.T, rel, path string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		m := fenceRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := docBlock{file: rel, line: i + 1, lang: m[1]}
		for j := i - 1; j >= 0; j-- { // the marker: the nearest line above that is not blank
			if s := strings.TrimSpace(lines[j]); s != "" {
				if c := commentRe.FindStringSubmatch(s); c != nil {
					b.marker = c[1]
				}
				break
			}
		}
		var body strings.Builder
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimRight(lines[j], " \t") == "```" {
				end = j
				break
			}
			body.WriteString(lines[j] + "\n")
		}
		if end < 0 {
			t.Fatalf("%s: a code block that never ends", b)
		}
		b.text = body.String()
		blocks = append(blocks, b)
		i = end
	}
	return blocks
}

// TestDocsPython runs every ```python block of the docs with the project's
// Python, the package built from this checkout (USMBRIDGE_LIB) and the
// saxpy example module and test/extmod on the path, each block in a process of its own
// (test/docblock.py: a ">>> " session is checked with doctest, anything
// else runs as a program). A block fails the test if it raises or, for a
// session, prints anything but what the docs show.
func TestDocsPython(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	notRun := 0
	for _, b := range readDocs(t, root) {
		if b.lang != "python" {
			continue
		}
		switch {
		case b.marker == "" || goCodeRe.MatchString(b.marker):
		case notRunRe.MatchString(b.marker):
			notRun++
			continue
		case runByRe.MatchString(b.marker):
			// Run by the test the marker names, which reads the block
			// from here: check that it does.
			m := runByRe.FindStringSubmatch(b.marker)
			src, err := os.ReadFile(filepath.Join(root, "test", filepath.Base(m[1])))
			if err != nil || !strings.Contains(string(src), "docBlockRunBy(") {
				t.Errorf("%s: <!-- %s --> names a test that does not read the block (docBlockRunBy)", b, b.marker)
			}
			continue
		case runAfterRe.MatchString(b.marker):
			b.text = runAfterRe.FindStringSubmatch(b.marker)[1] + "\n" + b.text
		case mpiRunRe.MatchString(b.marker):
		default:
			t.Errorf("%s: unknown marker <!-- %s --> (want \"not run: <reason>\" or \"run: mpiexec -n <N>\")", b, b.marker)
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		t.Fatal("no Python blocks to run in the docs")
	}
	// Blocks that are not run stay the exception (a file of the reader's
	// own project, which pip runs).
	if notRun > 2 {
		t.Errorf("%d Python blocks are marked \"not run\": run them, or say in this test why more may not", notRun)
	}
	if raceEnabled {
		t.Skip("runs without -race only: the blocks run in other processes")
	}
	py := testutil.ProjectPython(t)
	// The docs show NumPy, dpctl and dpnp on an opencl:cpu device, and jax
	// and tvm-ffi: the project's .venv has them all.
	if err := exec.Command(py, "-c", "import numpy, dpctl, dpnp, jax, tvm_ffi; dpctl.SyclDevice('opencl:cpu')").Run(); err != nil {
		testutil.Runtime(t, testutil.Dpctl, errkind.Wrap(errkind.NotAvailable, "docs", "numpy/dpctl/dpnp/jax/tvm_ffi or an opencl:cpu device missing", err))
	}
	dir := t.TempDir()
	buildModule(t, dir, "--name", "usmbridge._ext", "../python/ext")
	buildModule(t, dir, "../examples/saxpy")
	buildModule(t, dir, "extmod") // docs/extensions.md's classes
	buildModule(t, dir, "../examples/linalg")
	buildModule(t, dir, "../examples/rolling") // docs/extensions.md's "Classes, start to end"
	buildModule(t, dir, "nativemod")           // "run after: import ..., nativemod as mymod"
	lib, err := filepath.Glob(filepath.Join(dir, "_ext.*"))
	if err != nil || len(lib) != 1 {
		t.Fatalf("no usmbridge._ext built in %s: %v", dir, lib)
	}
	runner := filepath.Join(root, "test", "docblock.py")
	env := append(os.Environ(),
		"PYTHONPATH="+dir+string(os.PathListSeparator)+filepath.Join(root, "python"),
		"USMBRIDGE_LIB="+lib[0], "JAX_PLATFORMS=cpu")
	// Sessions run per file, in order, in one namespace (a page is read
	// top to bottom); programs run each in a process of its own.
	var programs []docBlock
	sessions := map[string][]docBlock{}
	var files []string
	for _, b := range blocks {
		if !strings.HasPrefix(strings.TrimSpace(b.text), ">>> ") {
			programs = append(programs, b)
			continue
		}
		if sessions[b.file] == nil {
			files = append(files, b.file)
		}
		sessions[b.file] = append(sessions[b.file], b)
	}
	for _, file := range files {
		t.Run(file+" sessions", func(t *testing.T) {
			t.Parallel()
			args := []string{runner, "session"}
			for _, b := range sessions[file] {
				args = append(args, b.String()+"="+writeBlock(t, b))
			}
			runDocBlock(t, file+"'s sessions", "", exec.Command(py, args...), env)
		})
	}
	for _, b := range programs {
		t.Run(b.String(), func(t *testing.T) {
			t.Parallel()
			path := writeBlock(t, b)
			if m := mpiRunRe.FindStringSubmatch(b.marker); m != nil {
				mpiexec := os.Getenv("USMBRIDGE_MPIEXEC")
				if mpiexec == "" {
					testutil.Runtime(t, testutil.MPI, errkind.New(errkind.NotAvailable, "docs", "USMBRIDGE_MPIEXEC is not set (scripts/setup-50-mpi.sh prints it)"))
				}
				// The fork launcher starts the ranks here, without ssh;
				// `python -m mpi4py` aborts every rank when one raises.
				runDocBlock(t, b.String(), b.text, exec.Command(mpiexec, "-launcher", "fork", "-n", m[1], py, "-m", "mpi4py", runner, "program", path), env)
				return
			}
			runDocBlock(t, b.String(), b.text, exec.Command(py, runner, "program", path), env)
		})
	}
}

// writeBlock writes a block into a file of its own, in a directory of the
// test's, and returns the file's path.
func writeBlock(t *testing.T, b docBlock) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), strings.NewReplacer("/", "_", ":", "_").Replace(b.String())+".py")
	if err := os.WriteFile(path, []byte(b.text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runDocBlock runs cmd (test/docblock.py, directly or under mpiexec) in
// the test's directory, within two minutes, and fails t with the block (a
// program's; a session's failures show their own lines) and what cmd
// printed if it fails.
func runDocBlock(t *testing.T, what, block string, cmd *exec.Cmd, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish in time:\n%s", what, out)
	}
	if err != nil && block != "" {
		t.Fatalf("%s failed: %v\n--- the block:\n%s--- its output:\n%s", what, err, block, out)
	}
	if err != nil {
		t.Fatalf("%s failed: %v\n%s", what, err, out)
	}
}

// TestDocsGo holds every ```go block of the docs to the Go code it shows.
// A block carries <!-- go: path [name] -->: its lines, without their
// common indentation, must be consecutive lines of the declaration name
// (a function, or Type.Method) in the file path, likewise without theirs,
// or of the whole file when name is omitted. The code they are taken from
// is compiled and run by go test: docs/go.md and README.md show Example
// functions, whose `// Output:` go test asserts, and docs/extensions.md
// shows the saxpy example module and test/extmod, which
// examples/saxpy/saxpy_test.go and TestExtmod build and run from Python.
//
// go test compiles an Example inside its package's test build, where
// names only tests declare (export_test.go's aliases of unexported
// functions, another test file's helpers) are in scope: an example that
// used one would pass here and not compile for a user. So the files that
// docs/go.md and README.md take their blocks from, and every example file
// go doc shows (example*_test.go of the public packages, the nested gonum
// module's and examples/*'s), are also compiled as a user's code, in a
// module of its own that requires the checkout through replace
// (compileAsUser).
func TestDocsGo(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	userFiles := map[string]bool{}
	for _, b := range readDocs(t, root) {
		if b.lang != "go" {
			continue
		}
		n++
		m := goCodeRe.FindStringSubmatch(b.marker)
		if m == nil {
			t.Errorf("%s: a Go block without <!-- go: path [name] --> naming the code it shows", b)
			continue
		}
		if b.file == "docs/go.md" || b.file == "README.md" {
			userFiles[m[1]] = true
		}
		src, err := goSource(filepath.Join(root, filepath.FromSlash(m[1])), m[2])
		if err != nil {
			t.Errorf("%s: %v", b, err)
			continue
		}
		if !containsLines(src, strings.TrimSuffix(b.text, "\n")) {
			t.Errorf("%s: the block is not the code of %s %s; it is now:\n%s", b, m[1], m[2], dedent(src))
		}
	}
	if n == 0 {
		t.Fatal("no Go blocks in the docs")
	}
	for _, pattern := range []string{"*/example*_test.go", "examples/*/example*_test.go"} {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			userFiles[filepath.ToSlash(rel)] = true
		}
	}
	compileAsUser(t, root, userFiles)
}

// compileAsUser compiles the Go files files (relative to root) as a user's
// program sees the module: copied into a module of its own that requires
// github.com/usmbridge/usmbridge and its gonum module through replace
// directives to the checkout, one package per source directory, as
// non-test files of a package named docexample (compiled, not linked).
// A file that names what only the module's tests declare, or an internal
// package, does not compile, and fails t with the compiler's message.
// Modules come from Go's module cache only (GOPROXY=off).
func compileAsUser(t *testing.T, root string, files map[string]bool) {
	t.Helper()
	dir := t.TempDir()
	gomod := "module docexample\n\ngo 1.25.0\n\nrequire (\n" +
		"\tgithub.com/usmbridge/usmbridge v0.0.0\n\tgithub.com/usmbridge/usmbridge/gonum v0.0.0\n)\n\n" +
		"replace github.com/usmbridge/usmbridge => " + root + "\n\n" +
		"replace github.com/usmbridge/usmbridge/gonum => " + filepath.Join(root, "gonum") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	var sum []byte
	for _, f := range []string{"go.sum", "gonum/go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	pkgClause := regexp.MustCompile(`(?m)^package \w+`)
	var names []string
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		pkgDir := filepath.Join(dir, filepath.FromSlash(filepath.Dir(f)))
		if err := os.MkdirAll(pkgDir, 0o755); err != nil {
			t.Fatal(err)
		}
		out := strings.TrimSuffix(filepath.Base(f), "_test.go")
		out = strings.TrimSuffix(out, ".go") + "_doc.go"
		src = pkgClause.ReplaceAll(src, []byte("package docexample"))
		if err := os.WriteFile(filepath.Join(pkgDir, out), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "./..."}} {
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...) //nolint:staticcheck // SA1019: the toolchain of this test binary
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the docs' Go examples do not compile as a user's code (go %s in a module requiring the checkout): %v\n%s\nfiles: %v",
				strings.Join(args, " "), err, out, names)
		}
	}
}

// goSource returns the text of the declaration name in a Go file (from
// `func` to its closing brace, without its doc comment), or the whole
// file for "". name is a function or Type.Method.
func goSource(path, name string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if name == "" {
		return string(data), nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, data, parser.ParseComments)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || declName(fd) != name {
			continue
		}
		return string(data[fset.Position(fd.Pos()).Offset:fset.Position(fd.End()).Offset]), nil
	}
	return "", fmt.Errorf("%s declares no function %s", path, name)
}

func declName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// dedent removes the leading tabs all non-blank lines share, and trailing
// blanks.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, "\t")); common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			lines[i] = ""
		} else {
			lines[i] = strings.TrimRight(l[common:], " \t")
		}
	}
	return strings.Join(lines, "\n")
}

// containsLines reports whether the lines of part are consecutive lines of
// whole, each side without the indentation its lines share.
func containsLines(whole, part string) bool {
	w, p := strings.Split(whole, "\n"), dedent(part)
	n := strings.Count(p, "\n") + 1
	for i := 0; i+n <= len(w); i++ {
		if dedent(strings.Join(w[i:i+n], "\n")) == p {
			return true
		}
	}
	return false
}

// TestDocsLinks checks the relative links of the docs: the file exists
// and, for a link with a #fragment into a Markdown file, that file has a
// heading of that anchor (GitHub's: lower case, punctuation dropped,
// spaces as dashes).
func TestDocsLinks(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	linkRe := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, pattern := range append(docFiles, "RATIONALE.md") {
		files, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, path)
			inFence := false
			for i, line := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(line, "```") {
					inFence = !inFence
				}
				if inFence {
					continue
				}
				for _, m := range linkRe.FindAllStringSubmatch(line, -1) {
					target := m[1]
					if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
						continue
					}
					file, frag, _ := strings.Cut(target, "#")
					dest := path
					if file != "" {
						dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
					}
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link to %s: no such file", rel, i+1, target)
						continue
					}
					if frag != "" && strings.HasSuffix(dest, ".md") && !hasAnchor(t, dest, frag) {
						t.Errorf("%s:%d: link to %s: no heading with that anchor", rel, i+1, target)
					}
				}
			}
		}
	}
}

// hasAnchor reports whether the Markdown file has a heading whose GitHub
// anchor is frag.
func hasAnchor(t *testing.T, path, frag string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inFence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		if anchorOf(strings.TrimSpace(strings.TrimLeft(line, "#"))) == frag {
			return true
		}
	}
	return false
}

// anchorOf is GitHub's anchor of a heading: lower case, every character
// but letters, digits, spaces, '-' and '_' dropped, spaces as '-'.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsSupportMatrix holds the CPython versions README.md's "What runs
// where" names for the Python package to supportedPythons, the versions
// TestPythonVersions installs and tests the package on: the row names
// them all, its "tested with" cell the patch release of each, and the
// range README's Install and docs/python.md's "Supported Pythons" state
// is theirs.
func TestDocsSupportMatrix(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	first, last := supportedPythons[0], supportedPythons[len(supportedPythons)-1]
	if want := "Python (CPython " + first + "–" + last + " on Linux"; !strings.Contains(string(data), want) {
		t.Errorf("README.md's Install does not say %q", want)
	}
	guide, err := os.ReadFile("../docs/python.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "### Supported Pythons\n\nCPython " + first + " to " + last + ","; !strings.Contains(string(guide), want) {
		t.Errorf("docs/python.md does not say %q", want)
	}
	want := "| Python package | CPython " + strings.Join(supportedPythons, ", ") + " "
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "| Python package |") {
			if !strings.HasPrefix(line, want) {
				t.Errorf("README.md's Python package row does not start %q:\n%s", want, line)
			}
			cells := strings.Split(line, "|")
			if len(cells) != 5 {
				t.Fatalf("README.md's Python package row does not have three cells:\n%s", line)
			}
			for _, minor := range supportedPythons {
				if !regexp.MustCompile(`\b` + regexp.QuoteMeta(minor) + `\.\d+\b`).MatchString(cells[3]) {
					t.Errorf("README.md's Python package row names no tested release of CPython %s:\n%s", minor, cells[3])
				}
			}
			return
		}
	}
	t.Error(`README.md has no "| Python package |" row`)
}

// docBlockRunBy is the text of the Python block of the docs file (relative
// to the root) whose marker is "run by: " the test file caller: the test
// runs the block as the docs show it.
func docBlockRunBy(t *testing.T, file, caller string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range readDocs(t, root) {
		if b.file == file {
			if m := runByRe.FindStringSubmatch(b.marker); m != nil && filepath.Base(m[1]) == caller {
				return b.text
			}
		}
	}
	t.Fatalf("%s has no block marked <!-- run by: test/%s, ... -->", file, caller)
	return ""
}

// TestDocsGoDoc holds the code in pyext's doc comments (what `go doc`
// shows) to code go test compiles and runs: each block that is Go (a
// declaration or statements; tables and Python lines are not) is lines of
// an Example of pyext's example*_test.go files, whose // Output: go test
// asserts, or, for Main's, the main package usmbridge.build writes (its
// MAIN_GO, rendered for example.com/saxpy), which every module build
// compiles. (Issue 44: KeywordOnly's example said f(x, out=None, *, n) and
// Python saw f(x, *, out=None, n).)
func TestDocsGoDoc(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var examples []string
	files, err := filepath.Glob(filepath.Join(root, "pyext", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(path, "_test.go") {
			if strings.HasPrefix(filepath.Base(path), "example") {
				examples = append(examples, string(src))
			}
			continue
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			docs = append(docs, f.Doc.Text())
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch d := n.(type) {
			case *ast.FuncDecl:
				if d.Doc != nil && d.Name.IsExported() {
					docs = append(docs, d.Doc.Text())
				}
			case *ast.GenDecl:
				if d.Doc != nil {
					docs = append(docs, d.Doc.Text())
				}
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Doc != nil {
						docs = append(docs, ts.Doc.Text())
					}
				}
			}
			return true
		})
	}
	if len(examples) == 0 {
		t.Fatal("pyext has no example*_test.go files")
	}
	main := mainGoOfBuild(t, filepath.Join(root, "python", "usmbridge", "build.py"))
	var parser0 comment.Parser
	n := 0
	for _, text := range docs {
		for _, b := range parser0.Parse(text).Content {
			code, ok := b.(*comment.Code)
			if !ok || !isGo(code.Text) {
				continue
			}
			n++
			if strings.Contains(code.Text, "package main") {
				if dedent(code.Text) != dedent(main) {
					t.Errorf("pyext's doc shows the main package usmbridge.build writes, and it is not what build.py's MAIN_GO makes:\n%s\n--- MAIN_GO:\n%s", code.Text, main)
				}
				continue
			}
			found := false
			for _, ex := range examples {
				if containsLines(ex, strings.TrimSuffix(code.Text, "\n")) {
					found = true
				}
			}
			if !found {
				t.Errorf("a code block of pyext's doc is in no example of pyext (example*_test.go), which go test runs:\n%s", code.Text)
			}
		}
	}
	if n < 2 {
		t.Errorf("found %d Go blocks in pyext's doc comments, want Module's and Main's at least", n)
	}
}

// isGo reports whether code parses as Go: a file's declarations, or
// statements.
func isGo(code string) bool {
	fset := token.NewFileSet()
	if strings.HasPrefix(strings.TrimSpace(code), "package ") {
		_, err := parser.ParseFile(fset, "", code, 0)
		return err == nil
	}
	if _, err := parser.ParseFile(fset, "", "package p\n"+code, 0); err == nil {
		return true
	}
	_, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}\n", 0)
	return err == nil
}

// mainGoOfBuild is the main package usmbridge.build writes (build.py's
// MAIN_GO) for the module saxpy of the package example.com/saxpy, without
// its "Code generated" line.
func mainGoOfBuild(t *testing.T, path string) string {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)MAIN_GO = '''(.*?)'''`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s has no MAIN_GO", path)
	}
	s := strings.NewReplacer("%(name)s", "saxpy", "%(init)s", "PyInit_saxpy", "%(import_path)s", "example.com/saxpy",
		"%(define)s", "Module").Replace(string(m[1]))
	_, s, _ = strings.Cut(s, "\n") // the "Code generated" line
	return s
}
