"""The package's face: version, docstrings, and type stubs that match the module."""
import ast
import importlib.metadata
import inspect
import os
import re

import usmbridge as ub


def test_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", ub.__version__)
    try:
        installed = importlib.metadata.version("usmbridge")
    except importlib.metadata.PackageNotFoundError:
        return  # running from the source tree
    assert installed == ub.__version__


def test_docstrings_say_what_the_functions_take():
    assert "device" in ub.from_dlpack.__doc__ and "copy" in ub.from_dlpack.__doc__
    assert "__sycl_usm_array_interface__" in ub.asarray.__doc__
    assert "__dlpack__" in ub.Array.__doc__
    for name in ("shape", "dtype", "strides", "usm_type", "device", "readonly"):
        assert getattr(ub.Array, name).__doc__, name


def _stub():
    path = os.path.join(os.path.dirname(ub.__file__), "__init__.pyi")
    with open(path) as f:
        return ast.parse(f.read())


def test_stubs_match_the_module():
    tree = _stub()
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert top == set(ub.__all__)
    array = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Array")
    stubbed = {n.name for n in array.body if isinstance(n, ast.FunctionDef)}
    public = {n for n in dir(ub.Array) if not n.startswith("_")} | {"__sycl_usm_array_interface__", "__dlpack__", "__dlpack_device__", "__array__", "__len__", "__buffer__", "__usm_ndarray__"}
    assert stubbed == public


def test_stub_signatures_match_the_functions():
    tree = _stub()
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        params = inspect.signature(getattr(ub, fn.name)).parameters
        stub = fn.args
        assert [a.arg for a in stub.posonlyargs] == [p for p, v in params.items() if v.kind is v.POSITIONAL_ONLY], fn.name
        assert [a.arg for a in stub.kwonlyargs] == [p for p, v in params.items() if v.kind is v.KEYWORD_ONLY], fn.name
