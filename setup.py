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
import platform
import re
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError

# The Go package (package main) whose c-shared build is the extension module.
GO_PACKAGE = "./pybridge/ext"


class BuildError(CompileError):
    """The build cannot go on; the message says why and what to install.

    A CompileError, so setuptools prints it as one "error:" line.
    """


class GoBuildExt(build_ext):
    """build_ext that builds Go extensions with go build -buildmode=c-shared."""

    def build_extension(self, ext):
        target = os.path.abspath(self.get_ext_fullpath(ext.name))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        env = go_env(self.compiler)
        go = env.pop("_GO")
        # Go writes a C header beside -o; building in a temporary directory
        # keeps it out of the wheel.
        with tempfile.TemporaryDirectory(prefix="usmbridge-build-") as tmp:
            if GLIBC:
                zig_env(env, tmp)
            out = os.path.join(tmp, os.path.basename(target))
            cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, GO_PACKAGE]
            self.announce("running " + " ".join(shlex.quote(c) for c in cmd), level=2)
            try:
                subprocess.run(cmd, cwd=SOURCE_ROOT, env=env, check=True)
            except subprocess.CalledProcessError as e:
                raise BuildError("go build -buildmode=c-shared of %s failed (exit status %d); "
                                 "its output is above" % (GO_PACKAGE, e.returncode)) from None
            shutil.copyfile(out, target)


def go_env(compiler):
    """The environment for go build, with cgo on and this Python's headers.

    Raises BuildError when Go, a C compiler or Python.h is missing.
    """
    go = os.environ.get("GO") or shutil.which("go")
    if not go or not shutil.which(go):
        raise BuildError("usmbridge's extension module is written in Go, and no `go` command was found "
                         "on PATH (or in $GO): install Go (https://go.dev/dl/, the version go.mod names)")
    env = dict(os.environ)
    # A test run or a shell may have exported CGO_ENABLED=0; the extension
    # module is cgo by nature.
    env["CGO_ENABLED"] = "1"
    cc = env.get("CC") or subprocess.run([go, "env", "CC"], env=env, capture_output=True,
                                         text=True).stdout.strip() or "cc"
    if not GLIBC and not shutil.which(shlex.split(cc)[0]):
        raise BuildError("cgo needs a C compiler and %r was not found: install one (Debian: "
                         "apt-get install gcc) or set CC" % cc)
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        raise BuildError("Python.h is not in %s, the include directory of the Python that builds "
                         "(%s): install its headers (Debian: libpython3.X-dev)" % (include, sys.executable))
    env["CGO_CFLAGS"] = ("-I%s %s" % (include, env.get("CGO_CFLAGS", ""))).strip()
    env["_GO"] = go
    return env


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


SOURCE_ROOT = os.path.dirname(os.path.abspath(__file__))

setup(
    # sources is empty: build_extension runs go build on GO_PACKAGE instead.
    ext_modules=[Extension("usmbridge._ext", sources=[])],
    cmdclass={"build_ext": GoBuildExt},
    options={"bdist_wheel": {"plat_name": plat_name()}} if GLIBC else {},
)
