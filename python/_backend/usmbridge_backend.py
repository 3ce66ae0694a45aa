"""The PEP 517 build backend of usmbridge: setuptools' own, plus one build
requirement when asked for a manylinux wheel.

With USMBRIDGE_GLIBC set (e.g. 2.28), setup.py links the extension module
with `zig cc` against that glibc, and this backend asks the build frontend
for the ziglang package (ZIGLANG, PyPI's zig toolchain) alongside
setuptools, so `USMBRIDGE_GLIBC=2.28 python -m build --wheel` stays one
command. Without it nothing changes: `pip install .` uses the system's C
compiler and never downloads ziglang (about 400 MB installed).
"""
import os

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F401,F403 (the PEP 517 hooks)

ZIGLANG = "ziglang==0.17.1"


def _zig(reqs):
    return list(reqs) + ([ZIGLANG] if os.environ.get("USMBRIDGE_GLIBC") else [])


def get_requires_for_build_wheel(config_settings=None):
    return _zig(_orig.get_requires_for_build_wheel(config_settings))


def get_requires_for_build_editable(config_settings=None):
    return _zig(_orig.get_requires_for_build_editable(config_settings))
