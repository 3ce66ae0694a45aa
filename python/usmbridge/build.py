"""Build a Go package into a Python extension module.

    python -m usmbridge.build GO_PACKAGE_DIR -o OUTDIR [--name NAME] [--define FUNC] [--stubs]

GO_PACKAGE_DIR is a Go package that imports github.com/usmbridge/usmbridge/pyext
and has a function

    func Module(m *pyext.Module) error

that defines the module's functions (docs/extensions.md). The command writes
OUTDIR/NAME<EXT_SUFFIX> (e.g. saxpy.cpython-311-x86_64-linux-gnu.so) for the
Python that runs it; NAME defaults to the Go package's name and may be dotted
(pkg.mod) for a module inside a package. Each part must be a name Python
code can write (name_problem: an identifier, no keyword, in NFKC form); a
part that is not ASCII gets the init function PEP 489 names, PyInitU_ and
its punycode. With --stubs it also writes the module's type stub,
OUTDIR/NAME.pyi (its functions and classes with the Python types of their
parameters, defaults and results), for editors and type checkers: the
module, once built, is imported in a child process and describes itself.

What it does: it writes a main package in a temporary directory that
registers the package's Module function with pyext.Main and defines the
module's init function (init_function), and a go.work that joins that main
package, the Go module holding GO_PACKAGE_DIR, and usmbridge's Go source,
which this Python package carries (usmbridge/_gosrc, with the modules it
needs: purego, and golang.org/x/text's NFKC), so no Go module proxy is
needed for usmbridge itself. It then runs

    go build -buildmode=c-shared

with cgo on, Python's headers on the include path and UBX_MODULE defined.
A package outside any Go module is built as a module of its own.

What the machine needs: Go (the version usmbridge's go.mod names, 1.25 or
newer), a C compiler for cgo (gcc or clang; $CC), and the headers of this
Python (Python.h; Debian: libpython3.X-dev). The free-threaded build of
CPython is not supported.

For `pip install .` of a project of your own, use GoExtension and
BuildGoExt in setup.py (see their docstrings).
"""
import argparse
import keyword
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unicodedata

__all__ = ["build", "GoExtension", "BuildGoExt", "BuildError"]

MODULE_PATH = "github.com/usmbridge/usmbridge"
HERE = os.path.dirname(os.path.abspath(__file__))


class BuildError(Exception):
    """The build cannot go on; the message says why and what to do."""


def gosrc():
    """The directory of usmbridge's Go module: the copy this package
    carries when installed, else the source tree it sits in."""
    carried = os.path.join(HERE, "_gosrc", "usmbridge")
    if os.path.exists(os.path.join(carried, "go.mod")):
        return carried
    root = os.path.dirname(os.path.dirname(HERE))
    if _module_of(root) == MODULE_PATH:
        return root
    raise BuildError("usmbridge's Go source is missing from %s (a broken install?): reinstall usmbridge" % HERE)


def _carried_deps():
    """Go modules the installed package carries besides usmbridge (purego)."""
    d = os.path.join(HERE, "_gosrc")
    if not os.path.isdir(d):
        return []
    return [os.path.join(d, n) for n in sorted(os.listdir(d))
            if n != "usmbridge" and os.path.exists(os.path.join(d, n, "go.mod"))]


def _module_of(d):
    """The module path that d/go.mod declares, or None."""
    try:
        with open(os.path.join(d, "go.mod")) as f:
            m = re.search(r"^module\s+(\S+)", f.read(), re.M)
    except OSError:
        return None
    return m.group(1).strip('"') if m else None


def _module_root(d):
    """The directory of the go.mod that governs d, or None."""
    d = os.path.abspath(d)
    while True:
        if os.path.exists(os.path.join(d, "go.mod")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _go():
    go = os.environ.get("GO") or shutil.which("go")
    if not go or not shutil.which(go):
        raise BuildError("no `go` command was found on PATH (or in $GO): install Go 1.25 or newer (https://go.dev/dl/)")
    return go


# The go flags the build decides itself: it builds in a workspace of its own
# (GOWORK), where -mod can only be readonly and -modfile names no go.mod of
# the build's. A user's GOFLAGS (in the shell, or `go env -w`) keeps the
# others (-tags, -trimpath, -ldflags, ...).
_WORKSPACE_FLAGS = ("mod", "modfile")


def go_flags(goflags):
    """GOFLAGS for the build, from the user's goflags (what `go env GOFLAGS`
    says: the shell's, or `go env -w`'s): each flag but those the build's
    workspace decides (-mod, -modfile), and -mod=readonly, which a workspace
    builds with, so that no setting of the user's config file comes back
    (an empty GOFLAGS would let it). Returns the flags and those left out."""
    kept, dropped = [], []
    for f in goflags.split():
        (dropped if f.lstrip("-").split("=", 1)[0] in _WORKSPACE_FLAGS else kept).append(f)
    return " ".join(kept + ["-mod=readonly"]), dropped


def go_env(go, verbose=False):
    """The environment of go build: cgo on, Python's headers, UBX_MODULE;
    modules on, and GOFLAGS without what the build's workspace decides
    (go_flags), whatever GOFLAGS, GOWORK and GO111MODULE the caller's shell
    or `go env -w` set (the build sets GOWORK to its own workspace)."""
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        raise BuildError("%s is a free-threaded build of CPython, which usmbridge does not support "
                         "(docs/extensions.md)" % sys.executable)
    env = dict(os.environ)
    env["GO111MODULE"] = "on"
    env.pop("GOWORK", None)
    r = subprocess.run([go, "env", "GOFLAGS"], env=env, capture_output=True, text=True)
    env["GOFLAGS"], dropped = go_flags(r.stdout.strip() if r.returncode == 0 else env.get("GOFLAGS", ""))
    if dropped and verbose:
        print("usmbridge.build: GOFLAGS %s left out: the build's own workspace decides them" % " ".join(dropped),
              file=sys.stderr)
    env["CGO_ENABLED"] = "1"
    cc = env.get("CC") or subprocess.run([go, "env", "CC"], env=env, capture_output=True,
                                         text=True).stdout.strip() or "cc"
    if not shutil.which(shlex.split(cc)[0]):
        raise BuildError("cgo needs a C compiler and %r was not found: install one (Debian: apt-get "
                         "install gcc) or set CC" % cc)
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        raise BuildError("Python.h is not in %s, the include directory of %s: install its headers "
                         "(Debian: libpython3.X-dev)" % (include, sys.executable))
    env["CGO_CFLAGS"] = ("-I%s -DUBX_MODULE -O2 %s" % (include, env.get("CGO_CFLAGS", ""))).strip()
    return env


def _go_version(go, env):
    """The toolchain's language version, e.g. "1.26"."""
    out = subprocess.run([go, "env", "GOVERSION"], env=env, capture_output=True, text=True).stdout
    m = re.match(r"go(\d+\.\d+)", out.strip())
    return m.group(1) if m else "1.25"


def _package_name(go, env, pkgdir):
    out = subprocess.run([go, "list", "-f", "{{.Name}} {{.ImportPath}}", "."], cwd=pkgdir, env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise BuildError("go list %s failed:\n%s" % (pkgdir, out.stderr.strip()))
    name, path = out.stdout.split()
    return name, path


def name_problem(s):
    """Why s cannot be a name Python code writes (import s, mod.s), or
    None: not an identifier, a keyword, or not in the NFKC form to which
    Python normalizes the identifiers it reads (code that writes "ﬁt"
    imports "fit"). pyext's rule for every name a module defines
    (pyext/names.go's nameProblem); pyext/names_test.go holds the two equal
    over every code point."""
    if not s.isidentifier():
        return "is not a Python identifier"
    if keyword.iskeyword(s):
        return "is a Python keyword"
    nfkc = unicodedata.normalize("NFKC", s)
    if nfkc != s:
        return ("is not in the NFKC form to which Python normalizes the identifiers it reads "
                "(code that writes it names %r)" % nfkc)
    return None


def module_name_problem(name):
    """Why name, a module's full dotted name, cannot be imported as it is
    written, or None."""
    for part in name.split("."):
        p = name_problem(part)
        if p is not None:
            return p if part == name else "has a part %r that %s" % (part, p)
    return None


def init_function(name):
    """The name of the function that CPython calls to import the extension
    module name (PEP 489): PyInit_<last part> for an ASCII name, else
    PyInitU_ and the last part in punycode, '-' made '_'."""
    last = name.rsplit(".", 1)[-1]
    try:
        return "PyInit_" + last.encode("ascii").decode()
    except UnicodeEncodeError:
        return "PyInitU_" + last.encode("punycode").decode("ascii").replace("-", "_")


MAIN_GO = '''// Code generated by usmbridge.build for %(name)s; DO NOT EDIT.
package main

// void *ubx_module_init(const char *name);
// void *%(init)s(void) { return ubx_module_init("%(name)s"); }
import "C"

import (
	"github.com/usmbridge/usmbridge/pyext"

	pkg "%(import_path)s"
)

func init() { pyext.Main("%(name)s", pkg.%(define)s) }

func main() {}
'''


def build(pkgdir, outdir, name=None, define="Module", verbose=False, output=None, strip=True, stubs=False):
    """Build the Go package in pkgdir into outdir/<name><EXT_SUFFIX> and
    return that path. output, when given, is the file to write instead.
    stubs: also write the module's type stub beside it (<last name>.pyi)."""
    if name is not None:
        _check_module_name(name)
    go = _go()
    env = go_env(go, verbose)
    pkgdir = os.path.abspath(pkgdir)
    if not os.path.isdir(pkgdir):
        raise BuildError("%s is not a directory" % pkgdir)
    src = gosrc()
    with tempfile.TemporaryDirectory(prefix="usmbridge-build-") as tmp:
        version = _go_version(go, env)
        root = _module_root(pkgdir)
        if root is None:
            # A package outside any module: a module of its own, in a copy.
            root = os.path.join(tmp, "pkg")
            shutil.copytree(pkgdir, root, ignore=shutil.ignore_patterns("*_test.go"))
            with open(os.path.join(root, "go.mod"), "w") as f:
                f.write("module usmbridge.build/pkg\n\ngo %s\n\nrequire %s v0.0.0\n" % (version, MODULE_PATH))
            pkgdir = root
        # usmbridge and what it carries are replaced, not used: a workspace
        # module that another one requires at a version still needs that
        # version's go.mod, which a machine without a proxy cannot read.
        uses = [os.path.join(tmp, "main"), root]
        replaces = {} if os.path.realpath(root) == os.path.realpath(src) else {MODULE_PATH: src}
        for d in _carried_deps():
            replaces[_module_of(d)] = d
        main = os.path.join(tmp, "main")
        os.makedirs(main)
        with open(os.path.join(main, "go.mod"), "w") as f:
            f.write("module usmbridge.build/main\n\ngo %s\n" % version)
            if replaces.get(MODULE_PATH):
                f.write("\nrequire %s v0.0.0\n" % MODULE_PATH)
        work = os.path.join(tmp, "go.work")
        with open(work, "w") as f:
            f.write("go %s\n\nuse (\n%s)\n" % (version, "".join("\t%s\n" % _quote(u) for u in uses)))
            for mod, d in replaces.items():
                f.write("\nreplace %s => %s\n" % (mod, _quote(d)))
        env["GOWORK"] = work
        gopkg, import_path = _package_name(go, env, pkgdir)
        if gopkg == "main":
            raise BuildError("%s is package main; write the module as an importable package with a "
                             "Module function (docs/extensions.md)" % pkgdir)
        name = name or gopkg
        _check_module_name(name)
        last = name.rsplit(".", 1)[-1]
        with open(os.path.join(main, "main.go"), "w", encoding="utf-8") as f:
            f.write(MAIN_GO % {"name": name, "init": init_function(name), "import_path": import_path, "define": define})
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        target = output or os.path.join(outdir, last + suffix)
        out = os.path.join(tmp, "out" + suffix)  # the header Go writes beside -o stays here
        cmd = [go, "build", "-buildmode=c-shared", "-trimpath"] + (["-ldflags=-s -w"] if strip else []) + ["-o", out, "."]
        if verbose:
            print("usmbridge.build: " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
        r = subprocess.run(cmd, cwd=main, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            msg = r.stderr.strip()
            if "undefined: pkg.%s" % define in msg:
                msg = ("package %s has no func %s(m *pyext.Module) error, which defines the module"
                       % (import_path, define))
            raise BuildError("go build of %s failed:\n%s" % (import_path, msg))
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        shutil.copyfile(out, target)
    if stubs:
        write_stub(target, name)
    return target


def _check_module_name(name):
    problem = module_name_problem(name)
    if problem is not None:
        raise BuildError("module name %r %s, so Python could not import the module by that name "
                         "(choose another with --name)" % (name, problem))


_STUB_SCRIPT = """
import importlib.machinery, importlib.util, sys
name, path = sys.argv[1], sys.argv[2]
loader = importlib.machinery.ExtensionFileLoader(name, path)
spec = importlib.util.spec_from_file_location(name, path, loader=loader)
mod = importlib.util.module_from_spec(spec)
loader.exec_module(mod)
sys.stdout.buffer.write(mod._stub().encode("utf-8"))
"""


def write_stub(path, name):
    """Write the type stub of the module built at path (named name) beside
    it, as <last part of name>.pyi, and return the stub's path. The module
    describes itself (pyext's _stub()), in a child process: importing it
    here would load a Go runtime into the build."""
    r = subprocess.run([sys.executable, "-c", _STUB_SCRIPT, name, path], capture_output=True)
    if r.returncode != 0:
        raise BuildError("the module %s was built, but importing it for its stub failed:\n%s"
                         % (name, r.stderr.decode("utf-8", "replace").strip()))
    stub = os.path.join(os.path.dirname(os.path.abspath(path)), name.rsplit(".", 1)[-1] + ".pyi")
    with open(stub, "wb") as f:
        f.write(r.stdout)
    return stub


def _quote(p):
    return '"%s"' % p.replace("\\", "\\\\").replace('"', '\\"') if re.search(r'[\s"]', p) else p


try:
    from setuptools import Extension as _Extension
    from setuptools.command.build_ext import build_ext as _build_ext
except ImportError:  # setuptools is only needed for the hook
    _Extension = object
    _build_ext = object


class GoExtension(_Extension):
    """An extension module built from a Go package, for setup.py:

        from setuptools import setup
        from usmbridge.build import BuildGoExt, GoExtension

        setup(ext_modules=[GoExtension("saxpy", "go/saxpy")],
              cmdclass={"build_ext": BuildGoExt})

    with usmbridge and setuptools in pyproject.toml's build-system requires.
    name is the module's full name; package_dir the Go package (relative to
    setup.py); define the Go function that defines it; stubs (on by
    default) puts the module's type stub, <name>.pyi, beside it in the
    wheel, where type checkers look for it.
    """

    def __init__(self, name, package_dir, define="Module", stubs=True):
        super().__init__(name, sources=[])
        self.go_package = package_dir
        self.go_define = define
        self.go_stubs = stubs


class BuildGoExt(_build_ext):
    """build_ext that builds GoExtensions with usmbridge.build (and any other
    extension as setuptools does)."""

    def build_extension(self, ext):
        if not isinstance(ext, GoExtension):
            return super().build_extension(ext)
        target = os.path.abspath(self.get_ext_fullpath(ext.name))
        try:
            build(ext.go_package, os.path.dirname(target), name=ext.name, define=ext.go_define,
                  verbose=True, output=target, stubs=getattr(ext, "go_stubs", False))
        except BuildError as e:
            from setuptools.errors import CompileError
            raise CompileError(str(e)) from None


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m usmbridge.build", description=__doc__.split("\n\n")[0])
    p.add_argument("package", help="the Go package's directory")
    p.add_argument("-o", "--outdir", default=".", help="where to write the module (default: .)")
    p.add_argument("--name", help="the module's name (default: the Go package's)")
    p.add_argument("--define", default="Module", help="the Go function that defines the module (default: Module)")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--no-strip", action="store_true", help="keep symbols and debug information (debuggers)")
    p.add_argument("--stubs", action="store_true", help="also write the module's type stub, NAME.pyi, beside it")
    a = p.parse_args(argv)
    try:
        path = build(a.package, a.outdir, name=a.name, define=a.define, verbose=a.verbose, strip=not a.no_strip,
                     stubs=a.stubs)
    except BuildError as e:
        print("usmbridge.build: " + str(e), file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
