"""Builds usmbridge._ext, the Go half of the Python package, for setuptools.

The metadata is in pyproject.toml; this file only adds the build step that
setuptools cannot express declaratively: `go build -buildmode=c-shared` of
the Go package that defines the extension module. Being a build_ext step,
the wheel is platform-tagged (cpXY-cpXY-linux_x86_64) like any C extension,
and `pip install -e .` (build_ext --inplace) works the same way.

What the build needs on the machine: Go (the version go.mod names, or a
toolchain Go may download), a C compiler for cgo, and the headers of the
Python that runs the build (Python.h; Debian: libpython3.X-dev).

manylinux: the system's C compiler links against the machine's glibc
(Debian 12: the wheel needs GLIBC_2.34, so auditwheel calls it
manylinux_2_34). With USMBRIDGE_GLIBC=2.28 the C half is compiled and
linked by `zig cc -target <arch>-linux-gnu.2.28` instead (ziglang from
PyPI, which the build backend then requires), and the wheel is tagged
manylinux_2_28_<arch>, the tag of the dpctl/oneAPI wheels; auditwheel
confirms it (test/wheel_test.go). Unset it to build with the system's
compiler; a zig that cannot be found is an error that says so.
"""
import importlib.util
import json
import platform
import re
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import CompileError

SOURCE_ROOT = os.path.dirname(os.path.abspath(__file__))

# usmbridge.build, by path: the package being built is not installed yet.
# usmbridge._ext is built by it like any extension module of a user's
# (python/ext is a Go package with a Module function).
_spec = importlib.util.spec_from_file_location("_usmbridge_build", os.path.join(SOURCE_ROOT, "python", "usmbridge", "build.py"))
ub_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ub_build)

# The Go package of usmbridge._ext.
GO_PACKAGE = "python/ext"


class BuildError(CompileError):
    """The build cannot go on; the message says why and what to install.

    A CompileError, so setuptools prints it as one "error:" line.
    """


class GoBuildExt(ub_build.BuildGoExt):
    """usmbridge.build's build_ext, plus the manylinux build (USMBRIDGE_GLIBC)."""

    def build_extension(self, ext):
        if not GLIBC:
            return super().build_extension(ext)
        target = os.path.abspath(self.get_ext_fullpath(ext.name))
        with tempfile.TemporaryDirectory(prefix="usmbridge-zig-") as tmp:
            env = dict(os.environ)
            zig_env(env, tmp)
            saved = dict(os.environ)
            os.environ.update(env)
            try:
                ub_build.build(ext.go_package, os.path.dirname(target), name=ext.name, define=ext.go_define,
                               verbose=True, output=target)
            except ub_build.BuildError as e:
                raise BuildError(str(e)) from None
            finally:
                os.environ.clear()
                os.environ.update(saved)


# The modules usmbridge's library packages import, by the directory of
# _gosrc that carries them, and the packages of each they need (None: all).
# x/text gives pyext's name rule Unicode's NFKC (pyext/names.go).
CARRIED = {
    "purego": ("github.com/ebitengine/purego", None),
    "text": ("golang.org/x/text", {"unicode/norm", "transform"}),
}


class BuildPyWithGoSource(build_py):
    """build_py that also puts usmbridge's Go source in the package
    (usmbridge/_gosrc/usmbridge: the library packages, no tests) with the
    modules it needs (_gosrc/purego and _gosrc/text, from Go's module
    cache: CARRIED), so that an installed usmbridge builds users' extension
    modules without a Go module proxy (python -m usmbridge.build)."""

    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "usmbridge", "_gosrc")
        shutil.rmtree(dest, ignore_errors=True)
        copy_go_module(SOURCE_ROOT, os.path.join(dest, "usmbridge"), keep=[m for m, _ in CARRIED.values()])
        for name, (path, packages) in CARRIED.items():
            copy_go_module(go_module_dir(path), os.path.join(dest, name), packages=packages)


# Directories of the repository that are not library source (gonum is a
# module of its own, which no extension module needs).
NOT_LIBRARY = {"examples", "test", "python", "scripts", "docs", "build", "dist", ".git", ".cache", ".venv", ".ci", "gonum"}


def copy_go_module(src, dest, packages=None, keep=()):
    """Copy a Go module's go.mod and LICENSE and the non-test Go, C, header
    and assembly files of its packages (no testdata; only those named in
    packages, when given). Its go.mod keeps only the requirements of the
    modules in keep: usmbridge's loses those only its tests have, a carried
    module's all (the packages carried import only the standard library and
    each other), so that the copies need nothing but one another."""
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        dirs[:] = sorted(d for d in dirs if d != "testdata" and not d.startswith(".")
                         and not (rel == "." and d in NOT_LIBRARY))
        if packages is not None and rel != "." and rel.replace(os.sep, "/") not in packages:
            continue
        for f in files:
            if (f.endswith((".go", ".c", ".h", ".s")) and not f.endswith("_test.go") and (packages is None or rel != ".")) \
                    or (rel == "." and f in ("go.mod", "LICENSE")):
                os.makedirs(os.path.join(dest, rel), exist_ok=True)
                shutil.copyfile(os.path.join(root, f), os.path.join(dest, rel, f))
    gomod = os.path.join(dest, "go.mod")
    with open(gomod) as f:
        text = f.read()

    def kept(line):
        return any(m in line for m in keep)

    text = re.sub(r"(?m)^require \(\n(.*?)^\)\n", lambda m: "require (\n" + "".join(
        l + "\n" for l in m.group(1).splitlines() if kept(l)) + ")\n", text, flags=re.S)
    text = re.sub(r"(?m)^require [^(\n][^\n]*\n", lambda m: m.group(0) if kept(m.group(0)) else "", text)
    with open(gomod, "w") as f:
        f.write(text)


def go_module_dir(path):
    """Where Go's module cache holds the version of path usmbridge's go.mod
    requires (downloading it if needed)."""
    try:
        go = ub_build._go()
    except ub_build.BuildError as e:
        raise BuildError(str(e)) from None
    r = subprocess.run([go, "mod", "download", "-json", path], cwd=SOURCE_ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise BuildError("go mod download %s failed:\n%s%s" % (path, r.stdout, r.stderr))
    return json.loads(r.stdout)["Dir"]


# The glibc to link against with zig cc (e.g. "2.28"), or None for the
# system's C compiler.
GLIBC = os.environ.get("USMBRIDGE_GLIBC") or None
if GLIBC and not re.fullmatch(r"2\.\d+", GLIBC):
    raise BuildError("USMBRIDGE_GLIBC=%r: expected a glibc version such as 2.28" % GLIBC)
ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(platform.machine().lower())


def zig_env(env, tmp):
    """Point cgo at zig cc for GLIBC, through a wrapper script in tmp.

    zig brings its own libc headers, so /usr/include must not be on the
    include path: Debian's pyconfig.h includes <ARCH-linux-gnu/python3.X/
    pyconfig.h> from there, which is copied into tmp instead. zig's linker
    (lld) allows undefined symbols in a shared object by default and does
    not know GNU ld's --unresolved-symbols, which the Go package asks for:
    the wrapper drops it. UBSan (zig's default in debug C) would need its
    runtime in the module, so it is off.
    """
    try:
        import ziglang  # noqa: F401
    except ImportError:
        raise BuildError("USMBRIDGE_GLIBC=%s builds with zig cc, and the Python package ziglang is not "
                         "installed in the build environment (the build backend asks for it; with "
                         "--no-isolation: pip install ziglang==0.17.1); unset USMBRIDGE_GLIBC to build "
                         "with the system's C compiler" % GLIBC) from None
    if ARCH is None:
        raise BuildError("USMBRIDGE_GLIBC: no zig target for machine %r" % platform.machine())
    include = sysconfig.get_paths()["include"]
    extra = os.path.join(tmp, "include")
    with open(os.path.join(include, "pyconfig.h")) as f:
        for sub in re.findall(r"#\s*include\s*<([^>]+)/pyconfig\.h>", f.read()):
            src = os.path.join(os.path.dirname(include), sub)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(extra, sub), dirs_exist_ok=True)
    cc = os.path.join(tmp, "zig-cc")
    with open(cc, "w") as f:
        f.write('#!/bin/sh\n'
                'for a; do shift; [ "$a" = "-Wl,--unresolved-symbols=ignore-all" ] || set -- "$@" "$a"; done\n'
                'exec %s -m ziglang cc -target %s-linux-gnu.%s -fno-sanitize=undefined "$@"\n'
                % (shlex.quote(sys.executable), ARCH, GLIBC))
    os.chmod(cc, 0o755)
    env["CC"] = cc
    env["CGO_CFLAGS"] = "-I%s -I%s -O2 -Wno-macro-redefined" % (include, extra)


def plat_name():
    """The wheel's platform tag under USMBRIDGE_GLIBC: manylinux_2_28_x86_64."""
    return "manylinux_%s_%s" % (GLIBC.replace(".", "_"), ARCH)


setup(
    ext_modules=[ub_build.GoExtension("usmbridge._ext", GO_PACKAGE, stubs=False)],
    cmdclass={"build_ext": GoBuildExt, "build_py": BuildPyWithGoSource},
    options={"bdist_wheel": {"plat_name": plat_name()}} if GLIBC else {},
)
