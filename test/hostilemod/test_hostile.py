"""hostilé, a module of names, docs and defaults that once broke pyext
modules or their stubs (issue 41; hostilemod.go): it imports by its
non-ASCII name, help() renders it, inspect.signature reads every
signature, and its stub (HOSTILE_STUB, which python -m usmbridge.build
--stubs wrote) says what the module says: the same parameters, defaults
and docstrings."""
import ast
import inspect
import math
import os
import pydoc

import numpy as np
import pytest

import hostilé

HEADER = {"Array", "ForkError", "_DLPackProducer", "_SUAIProducer", "_SyclDeviceLike", "_SyclQueueLike"}


def same(a, b):
    """Equal, or both nan."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def test_import_by_name():
    assert hostilé.__name__ == "hostilé"
    assert hostilé.naïve is getattr(hostilé, "na\u00efve")
    assert hostilé.ñ(x=0.5) == 0.5 and type(hostilé.Größe).__name__ == "type"
    assert hostilé.match() and hostilé.case() and hostilé.type()
    assert hostilé.any_n(hostilé.make_any(3)) == 3 and hostilé.any_n(None) == -1 and type(hostilé.make_any(1)) is hostilé.Any
    for name in ["Optional", "np", "Tuple", "int", "property", "typing"]:
        x = np.arange(3.0)
        assert np.asarray(getattr(hostilé, name)(x)).tolist() == [0.0, 1.0, 2.0]


def test_help_renders():
    text = pydoc.render_doc(hostilé, renderer=pydoc.plaintext)
    for name in ["naïve", "Plan", "Größe", "größe", "where"]:
        assert name in text
    assert "A token: its doc began with a signature of its own." in text


def test_defaults_are_the_values():
    x, y, z = np.asarray(hostilé.naïve()).tolist()
    assert x == math.inf and y == -math.inf and math.isnan(z)
    sig = inspect.signature(hostilé.naïve)
    assert sig.parameters["x"].default == math.inf
    assert sig.parameters["y"].default == -math.inf
    assert math.isnan(sig.parameters["z"].default)
    ends = inspect.signature(hostilé.ends).parameters
    assert [ends[p].default for p in "abcd"] == [2**64 - 1, -(2**63), -128, 0]
    assert inspect.signature(hostilé.texts).parameters["s"].default == "it's \"quoted\" \\ a\nb\x00c é \u2028 😀"
    assert hostilé.texts() == "it's \"quoted\" \\ a\nb\x00c é \u2028 😀'"
    plan = inspect.signature(hostilé.Plan).parameters
    assert math.isnan(plan["a"].default) and plan["name"].default == '"""'
    assert plan["name"].kind is inspect.Parameter.KEYWORD_ONLY
    assert hostilé.where() == "cpu"


def test_the_model_beside_hostile_names():
    p = hostilé.Plan(2.0, name="p")
    assert hostilé.Plan.staticmethod(3) == 3 and p.classmethod() is True
    assert hostilé.Plan.overload(np.ones(1, "f4")) == 32 and p.overload(np.ones(1)) == 64
    assert list(p.Iterator()) == [] and list(hostilé.count(2)) == []
    assert hostilé.pair(np.array([1.5])) == (1.5, 1) and hostilé.kind(np.ones(1, "f4")) == "float32"
    assert hostilé.choose("\\") == "\\" and hostilé.Final_value == "x" and hostilé.limits == (1, 2)
    assert issubclass(hostilé.Error, ValueError)


def test_members_named_like_types():
    p = hostilé.Plan(2.0, name="p")
    assert p.int() == 7 and p.Optional() == 1 and type(p.Plan()) is hostilé.Plan
    assert np.asarray(p.Array()).tolist() == [2.0]
    assert p.property(None) is False and p.float == 2.0 and p.größe == "p"
    p.self = 3.0
    assert p.self == 3.0
    v = getattr(hostilé, "__Vec")()
    assert p.np(v) is v
    assert hostilé.token(1) == hostilé.token(1)
    with pytest.raises(TypeError):
        hash(hostilé.token(1))


def stub_tree():
    with open(os.environ["HOSTILE_STUB"], encoding="utf-8") as f:
        text = f.read()
    compile(text, "hostilé.pyi", "exec")  # stricter than ast.parse: duplicate parameters
    return ast.parse(text)


def stub_default(node):
    return eval(compile(ast.Expression(node), "<default>", "eval"), {"__builtins__": {}})


def stub_params(fn, method):
    """The parameters of a def of the stub as (name, kind, default)."""
    a = fn.args
    out = []
    pos = a.posonlyargs + a.args
    defaults = [inspect.Parameter.empty] * (len(pos) - len(a.defaults)) + [stub_default(d) for d in a.defaults]
    for i, (arg, d) in enumerate(zip(pos, defaults)):
        kind = inspect.Parameter.POSITIONAL_ONLY if i < len(a.posonlyargs) else inspect.Parameter.POSITIONAL_OR_KEYWORD
        out.append((arg.arg, kind, d))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.empty if d is None else stub_default(d)))
    return out[1:] if method else out


def module_params(obj, method):
    ps = list(inspect.signature(obj).parameters.values())
    if method:
        ps = ps[1:]
    return [(p.name, p.kind, p.default) for p in ps]


def check_params(stub, real, where):
    assert [(n, k) for n, k, _ in stub] == [(n, k) for n, k, _ in real], where
    for (n, _, d), (_, _, e) in zip(stub, real):
        # The stub writes "..." for what has no literal (an array default).
        assert d is Ellipsis or same(d, e), "%s: parameter %s: the stub's default %r, the module's %r" % (where, n, d, e)


def check_doc(node, obj, where):
    want = inspect.cleandoc(obj.__doc__) if obj.__doc__ else ""
    assert (ast.get_docstring(node, clean=True) or "") == want, where


def overload_arm(node, seen):
    """Whether node is an @overload def after the first of its name: its
    docstring is the first's (seen holds the names met)."""
    arm = any((isinstance(d, ast.Name) and d.id == "overload") or (isinstance(d, ast.Attribute) and d.attr == "overload")
              for d in node.decorator_list)
    again = arm and node.name in seen
    seen.add(node.name)
    return again


def test_stub_says_what_the_module_says():
    tree = stub_tree()
    check_doc(tree, hostilé, "module")
    seen = 0
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            fn = getattr(hostilé, node.name)
            check_params(stub_params(node, False), module_params(fn, False), node.name)
            if not overload_arm(node, names):
                check_doc(node, fn, node.name)
            seen += 1
        elif isinstance(node, ast.ClassDef) and node.name not in HEADER:
            cls = getattr(hostilé, node.name)
            check_doc(node, cls, node.name)
            members = set()
            for member in node.body:
                if not isinstance(member, ast.FunctionDef) or any(
                        isinstance(d, ast.Attribute) and d.attr == "setter" for d in member.decorator_list):
                    continue
                where = node.name + "." + member.name
                if member.name == "__init__":
                    check_params(stub_params(member, True), module_params(cls, False), where)
                    continue
                attr = inspect.getattr_static(cls, member.name)
                if isinstance(attr, property) or type(attr).__name__ == "getset_descriptor":
                    check_doc(member, attr, where)
                    continue
                # A static method's stub and signature have no receiver; a
                # method's and a class method's drop theirs.
                static = any(getattr(d, "id", getattr(d, "attr", "")) == "staticmethod" for d in member.decorator_list)
                if member.name != "__eq__":  # the stub's operand is any object (call.c's operand_refused)
                    check_params(stub_params(member, not static), module_params(attr, not static), where)
                if not overload_arm(member, members):
                    check_doc(member, attr, where)
                seen += 1
    assert seen > 30
