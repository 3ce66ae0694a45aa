"""Go types as Python classes (pyext.NewClass), and functions as Python
documents them: extmod.Plan (a constructor, methods, properties, __repr__,
an io.Closer) and extmod.Token (no constructor). test/extension_test.go
builds extmod and runs this file."""
import copy
import gc
import inspect
import os
import pydoc
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import extmod

HERE = os.path.dirname(os.path.abspath(__file__))


def test_constructor_methods_properties():
    p = extmod.Plan(2.0)
    assert type(p) is extmod.Plan and p.a == 2.0 and p.name == "plan" and p.runs == 0
    assert extmod.Plan(1, name="x").name == "x"
    assert np.asarray(p.run(np.arange(3.0))).tolist() == [0.0, 2.0, 4.0] and p.runs == 1
    p.scale(1.5)
    assert p.a == 3.0
    p.a = 4  # an int is a float, as for a parameter
    assert p.a == 4.0 and repr(p) == 'Plan(4, name="plan")'
    q = p.scaled(0.5)
    assert type(q) is extmod.Plan and q.a == 2.0 and q is not p
    assert extmod.combine(p, q).a == 6.0 and extmod.combine(p).a == 4.0
    # Method, of any arity: five parameters besides self
    assert p.poly(2.0, 1.0, 1.0, 1.0, 1.0) == 4.0 * 15 and p.poly(1.0, 1.0, 0.0, 0.0) == 4.0
    assert str(inspect.signature(p.poly)) == "(t, x0, x1, x2, x3=0.0)"


def test_argument_errors_name_the_method():
    p = extmod.Plan(2.0)
    with pytest.raises(TypeError, match=r"Plan\(\) missing required argument 'a'"):
        extmod.Plan()
    with pytest.raises(TypeError, match=r"Plan\(\) takes at most 1 positional argument"):
        extmod.Plan(1, "x")
    with pytest.raises(TypeError, match=r"Plan\(\) argument 'a' must be float, not str"):
        extmod.Plan("x")
    with pytest.raises(TypeError, match=r"Plan.run\(\) argument 'x' must be an array of float64, got float32"):
        p.run(np.ones(2, "f4"))
    with pytest.raises(ValueError, match=r"Plan.run\(\) argument 'x' must have 1 dimension, got 2"):
        p.run(np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"Plan.run\(\) got some positional-only arguments passed as keyword arguments: 'self'"):
        extmod.Plan.run(self=p, x=np.ones(2))
    with pytest.raises(TypeError, match=r"Plan.a\(\) argument 'a' must be float, not str"):
        p.a = "x"
    with pytest.raises(TypeError, match="cannot delete attribute 'a'"):
        del p.a
    with pytest.raises(AttributeError):
        p.runs = 3
    with pytest.raises(AttributeError):
        p.other = 1  # no __dict__
    with pytest.raises(TypeError, match=r"combine\(\) argument 'p' must be extmod.Plan, not extmod.Token"):
        extmod.combine(extmod.token(1))


def test_module_argument_errors():
    # pyext.ArgValueError and ArgTypeError: CPython's wording, naming the
    # function (or constructor, or method) Python called.
    with pytest.raises(ValueError, match=r"^ascending\(\) argument 'x' must ascend, got 0 after 1$"):
        extmod.ascending(np.array([1.0, 0.0]))
    with pytest.raises(TypeError, match=r"^ascending\(\) argument 'x' must not be empty$"):
        extmod.ascending(np.zeros(0))
    assert extmod.ascending(np.array([1.0, 2.0])) == 1.0
    with pytest.raises(ValueError, match=r"^Plan\(\) argument 'name' must not be empty$"):
        extmod.Plan(1, name="")
    with pytest.raises(ValueError, match=r"^Plan.scale\(\) argument 'k' must be positive, got -1$"):
        extmod.Plan(1).scale(-1)


def test_wrong_self_is_a_type_error():
    run = extmod.Plan.__dict__["run"]
    for bad in (3, None, extmod.token(1), object()):
        with pytest.raises(TypeError, match=r"descriptor 'run' for 'extmod.Plan' objects doesn't apply to a"):
            run(bad, np.ones(2))
        with pytest.raises(TypeError):
            extmod.Plan.a.__get__(bad)
        with pytest.raises(TypeError):
            extmod.Plan.a.__set__(bad, 1.0)
    with pytest.raises(TypeError, match="missing required argument 'self'"):
        run()


def test_the_same_value_is_the_same_object():
    p = extmod.Plan(1)
    assert p.itself() is p and p.itself().itself() is p
    w = weakref.ref(p)
    assert w() is p
    closed = extmod.closed_plans()
    del p
    assert w() is None
    assert extmod.closed_plans() == closed + 1, "the Go value is closed once, when its object goes"


# A class of a zero-size Go type (struct{}): Go gives every zero-size
# allocation one address, so its values cannot be told apart. Each object
# is its own, and each is closed once when it goes (issue 41: Zero() is
# Zero() held, and two constructions were closed once).
def test_zero_size_objects_are_each_their_own():
    gc.collect()
    closes = extmod.zero_closes()
    a, b = extmod.Zero(), extmod.Zero()
    assert a is not b and type(a) is extmod.Zero
    c = a.itself()
    assert c is not a, "a zero-size value has no identity to find its object by"
    del a, b, c
    assert extmod.zero_closes() == closes + 3


# Methods of one name over other element types are overloads, as functions
# are (issue 41: "class Box: kind defined twice" at import), for the
# typed MethodNR and Method's any arity alike.
def test_methods_overload_on_element_types():
    b = extmod.Box(7)
    assert b.kind(np.ones(2, "f4")) == "float32" and b.kind(np.ones(2)) == "float64"
    with pytest.raises(TypeError, match=r"Box.kind\(\) argument 'x' must be an array of float32 or float64, got int32"):
        b.kind(np.ones(2, "i4"))
    assert b.first(np.array([2], "f4"), 1) == 3.007 and b.first(np.array([5], "i4"), k=2) == 7.007
    assert b.first(np.array([5], "i4")) == 5.007
    with pytest.raises(TypeError, match=r"Box.first\(\) argument 'x' must be an array of float32 or int32, got float64"):
        b.first(np.ones(1))
    assert str(inspect.signature(b.first)) == "(x, k=0)"


# An error from the Go value's Close, and a panic in it, go to the
# unraisable hook; the panic is the user's, named by the class's method as
# a method's panic is (it read "usmbridge: internal error: Go panic in
# Close").
@pytest.mark.parametrize("name,exc,msg", [
    ("fail-close", RuntimeError, "this plan fails to close"),
    ("panic-close", RuntimeError, "Go panic in Plan.Close(): this plan panics in Close"),
])
def test_close_failures_go_to_the_unraisable_hook(name, exc, msg):
    seen = []
    old, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        p = extmod.Plan(1, name=name)
        del p
    finally:
        sys.unraisablehook = old
    assert len(seen) == 1 and type(seen[0].exc_value) is exc and str(seen[0].exc_value) == msg, seen


def test_objects_are_collected_and_leak_nothing():
    gc.collect()
    closed = extmod.closed_plans()
    for _ in range(1000):
        p = extmod.Plan(1)
        p.scaled(2).itself()
    del p
    gc.collect()
    assert extmod.closed_plans() == closed + 2000


def test_class_refuses_what_it_cannot_do():
    # (Python may subclass a class: test_model.py.)
    with pytest.raises(TypeError, match="cannot create 'extmod.Token' instances"):
        extmod.Token()
    t = extmod.token(7)
    assert t.id == 7 and type(t) is extmod.Token
    with pytest.raises(TypeError, match="cannot create"):
        type(extmod.scalars)()
    with pytest.raises(TypeError):
        extmod.Plan.__new__(int, 1)
    with pytest.raises(TypeError, match="cannot pickle 'extmod.Plan' object"):
        copy.copy(extmod.Plan(1))  # no __getstate__: the constructor needs its arguments


def test_panic_in_a_method_is_runtime_error():
    with pytest.raises(RuntimeError, match=r"Go panic in Plan.boom\(\): plan boom"):
        extmod.Plan(1).boom()


def test_python_documents_functions_and_classes():
    assert str(inspect.signature(extmod.scalars)) == "(i, f, b, s='default')"
    assert str(inspect.signature(extmod.Plan)) == "(a, *, name='plan')"
    assert str(inspect.signature(extmod.Plan.run)) == "(self, /, x)"
    assert str(inspect.signature(extmod.Plan(1).run)) == "(x)"
    assert extmod.scalars.__name__ == "scalars" and extmod.scalars.__module__ == "extmod"
    assert extmod.Plan.run.__qualname__ == "Plan.run" and extmod.Plan.__module__ == "extmod"
    assert extmod.Plan.__doc__ == "y = a*x as a Go value: a class of the module."
    assert extmod.Plan.a.__doc__ == "The factor."
    assert repr(extmod.scalars) == "<built-in function scalars>"
    text = pydoc.render_doc(extmod.scalars, renderer=pydoc.plaintext)
    assert "scalars(i, f, b, s='default')\n    Echo the scalars as a tuple." in text
    assert "PyCapsule" not in text
    text = pydoc.render_doc(extmod, renderer=pydoc.plaintext)
    assert "class Plan" in text and "run(self, /, x)" in text and "PyCapsule" not in text
    assert "combine(p, q=None)" in text


# A method called on an object the garbage collector cleared (its tp_clear
# ran: a finalizer of a cycle may still reach it) raises TypeError, never
# crashes; its value is closed once. Python cannot call tp_clear, so the
# child calls the class's slot through ctypes, at the offset CPython's
# PyTypeObject has on 64-bit builds from 3.10 on (checked against
# tp_flags first), with the GIL held (PYFUNCTYPE).
CLEARED = """
import ctypes, gc, sys
import numpy as np
import extmod
T = extmod.Plan
assert ctypes.c_ulong.from_address(id(T) + 168).value == T.__flags__, "PyTypeObject layout"
clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(ctypes.c_void_p.from_address(id(T) + 192).value)
p = T(2.0)
closed = extmod.closed_plans()
assert clear(p) == 0
assert extmod.closed_plans() == closed + 1
for call in (lambda: p.run(np.ones(2)), lambda: p.a, lambda: repr(p), lambda: extmod.combine(p)):
    try:
        call()
    except TypeError as e:
        assert "Go value is gone" in str(e), e
    else:
        raise AssertionError("a cleared object was used")
assert clear(p) == 0 and extmod.closed_plans() == closed + 1, "cleared twice, closed once"
del p
gc.collect()
assert extmod.closed_plans() == closed + 1
print("ok")
"""


def test_cleared_object_raises_type_error():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(CLEARED)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)


# A binary special method defined in Go is one of Python's: an operand of
# another type than its parameter takes is NotImplemented, so == and !=
# fall back to identity (a == None is False, a in [1, a] is True) and +
# raises Python's own TypeError; a class with __eq__ and no __hash__ is
# unhashable. (The method raised "must be extmod.Token, not int" for
# a == 3, and equal tokens hashed apart.)
def test_binary_special_methods_return_not_implemented():
    a, b = extmod.token(1), extmod.token(1)
    assert a == b and not (a != b) and a != extmod.token(2)
    assert a != 3 and not (a == None) and a != "x"  # noqa: E711
    assert a in [1, "x", a] and [1, a].index(a) == 1
    assert a.__eq__(object()) is NotImplemented
    assert (a + 2).id == 3
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'extmod.Token' and 'str'"):
        a + "x"
    with pytest.raises(TypeError, match="unhashable type: 'extmod.Token'"):
        hash(a)
    assert extmod.Token.__hash__ is None
    # Called by name, with the wrong number of arguments, it still says so.
    with pytest.raises(TypeError):
        a.__eq__()


# A module made again after it left sys.modules (del sys.modules[...],
# then import) names the class the first import made: objects made before
# are still of it, and their methods, their repr and the functions taking
# them work with either module object. (Each import made a class of its
# own, and objects of the first could no longer be used: "combine()
# argument 'p' must be extmod.Plan, not extmod.Plan".)
REIMPORT = """
import importlib, sys
import numpy as np
import extmod as first
p = first.Plan(2.0)
del sys.modules["extmod"]
second = importlib.import_module("extmod")
assert second is not first, "the import made no new module"
assert second.Plan is first.Plan
assert repr(p) == 'Plan(2, name="plan")', repr(p)
assert np.asarray(p.run(np.ones(2))).tolist() == [2.0, 2.0]
assert second.combine(p).a == 2.0 and first.combine(second.Plan(1.0), p).a == 3.0
print("ok")
"""


def test_a_module_imported_again_keeps_its_classes():
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(REIMPORT)], env=dict(os.environ), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)


def test_repr_rows_align_under_the_first():
    # NumPy indents its rows under "array("; the Array's repr moves them
    # under "extmod.Array(" (issue 29: the docs showed them so, the repr
    # did not).
    a = extmod.same(np.arange(8.0).reshape(2, 2, 2))
    assert repr(a) == ("extmod.Array([[[0., 1.],\n"
                       "               [2., 3.]],\n"
                       "\n"
                       "              [[4., 5.],\n"
                       "               [6., 7.]]])")
