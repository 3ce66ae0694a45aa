"""Builds usmbridge._ext, the Go half of the Python package, for setuptools.

The metadata is in pyproject.toml; this file only adds the build step that
setuptools cannot express declaratively: `go build -buildmode=c-shared` of
the Go package that defines the extension module. Being a build_ext step,
the wheel is platform-tagged (cpXY-cpXY-linux_x86_64) like any C extension,
and `pip install -e .` (build_ext --inplace) works the same way.

What the build needs on the machine: Go (the version go.mod names, or a
toolchain Go may download), a C compiler for cgo, and the headers of the
Python that runs the build (Python.h; Debian: libpython3.X-dev).
"""
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
    if not shutil.which(shlex.split(cc)[0]):
        raise BuildError("cgo needs a C compiler and %r was not found: install one (Debian: "
                         "apt-get install gcc) or set CC" % cc)
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        raise BuildError("Python.h is not in %s, the include directory of the Python that builds "
                         "(%s): install its headers (Debian: libpython3.X-dev)" % (include, sys.executable))
    env["CGO_CFLAGS"] = ("-I%s %s" % (include, env.get("CGO_CFLAGS", ""))).strip()
    env["_GO"] = go
    return env


SOURCE_ROOT = os.path.dirname(os.path.abspath(__file__))

setup(
    # sources is empty: build_extension runs go build on GO_PACKAGE instead.
    ext_modules=[Extension("usmbridge._ext", sources=[])],
    cmdclass={"build_ext": GoBuildExt},
)
