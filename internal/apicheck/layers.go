package apicheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Deps returns, for each package of the module at root (go list ./...)
// and of the nested modules that hold public packages (NestedModules),
// the module's packages it depends on, directly or not, without tests, in
// the build CGO_ENABLED selects (cgo true: 1). Import paths are relative
// to the root's module ("usm", "internal/ffi", "dpctl/internal/dpctlapi",
// "gonum").
func Deps(root string, cgo bool) (map[string][]string, error) {
	mods, err := NestedModules(root)
	if err != nil {
		return nil, err
	}
	deps := map[string][]string{}
	mod := ""
	for _, dir := range append([]string{"."}, mods...) {
		if err := listDeps(root, dir, cgo, &mod, deps); err != nil {
			return nil, err
		}
	}
	return deps, nil
}

// listDeps adds the packages of the module in dir (relative to root) to
// deps; *mod is the root's module path, which the first call (dir ".")
// learns.
func listDeps(root, dir string, cgo bool, mod *string, deps map[string][]string) error {
	cmd := exec.Command("go", "list", "-json=ImportPath,Deps,Module", "./...")
	cmd.Dir = filepath.Join(root, dir)
	enabled := "0"
	if cgo {
		enabled = "1"
	}
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+enabled)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("go list in %s: %v\n%s", dir, err, ee.Stderr)
		}
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Deps       []string
			Module     *struct{ Path string }
		}
		if err := dec.Decode(&p); err != nil {
			return err
		}
		if p.Module == nil {
			continue
		}
		if dir == "." {
			*mod = p.Module.Path
		}
		rel := func(path string) (string, bool) {
			if path == *mod {
				return ".", true
			}
			r, ok := strings.CutPrefix(path, *mod+"/")
			return r, ok
		}
		pkg, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		own := []string{}
		for _, d := range p.Deps {
			if r, ok := rel(d); ok {
				own = append(own, r)
			}
		}
		deps[pkg] = own
	}
	return nil
}

// IsInternal reports whether a module-relative package path is internal
// (a path element is "internal").
func IsInternal(pkg string) bool {
	for _, e := range strings.Split(pkg, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}
