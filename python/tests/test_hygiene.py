"""The C half behaves as a well-made extension type (issue 24): Arrays take
part in the garbage collector, sub-interpreters get ImportError instead of
a module that would serve the wrong interpreter, a call made from a
finaliser at interpreter exit works, and an exception a SUAI dict raises
while it is read reaches the caller as itself. Each case that must be the
process's first use of the module runs in a fresh interpreter."""
import gc
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import usmbridge as ub

HERE = os.path.dirname(os.path.abspath(__file__))


def child(code):
    r = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r)\n" % os.path.join(HERE, "..")
                        + textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def test_cycle_through_the_base_is_collected():
    dpctl = pytest.importorskip("dpctl")
    import dpctl.memory as dm
    mem = dm.MemoryUSMShared(64, queue=dpctl.SyclQueue("opencl:cpu"))

    class W:
        @property
        def __sycl_usm_array_interface__(self):
            return mem.__sycl_usm_array_interface__

    w = W()
    w.a = ub.asarray(w)  # w -> a -> (its base) w
    ref = weakref.ref(w)
    del w
    gc.collect()
    assert ref() is None, "the Array's reference to its producer is visible to the collector"


def test_cycle_through_usm_ndarray_is_collected():
    dpt = pytest.importorskip("dpnp.tensor")
    x = dpt.arange(8, dtype="f4")
    a = ub.asarray(x)
    nd = a.__usm_ndarray__  # its memory holds a: a -> nd -> memory -> a
    ref = weakref.ref(a)
    del a, nd
    gc.collect()
    assert ref() is None


def test_sub_interpreter_first_gets_import_error():
    # The sub-interpreter is made with the legacy settings, which let it
    # load single-phase modules (3.12 and 3.13 refuse them in an isolated
    # one before the module runs), so the module's own refusal is tested.
    # The private module is _xxsubinterpreters up to 3.12, _interpreters
    # from 3.13 on, whose run_string returns the exception it raised.
    code, out = child("""
        import sys
        script = "import sys; sys.path[:0] = %r; import usmbridge; usmbridge.from_dlpack" % sys.path[:1]
        if sys.version_info >= (3, 13):
            import _interpreters as interpreters
            sub = interpreters.create(interpreters.new_config("legacy"))
            exc = interpreters.run_string(sub, script)
            if exc is not None:
                print("sub:", exc.formatted)
        else:
            import _xxsubinterpreters as interpreters
            sub = interpreters.create(isolated=False) if sys.version_info >= (3, 12) else interpreters.create()
            try:
                interpreters.run_string(sub, script)
            except Exception as e:
                print("sub:", type(e).__name__, e)
        import numpy as np, usmbridge as ub
        print("main:", np.from_dlpack(ub.from_dlpack(np.arange(3.0))).tolist())
        """)
    assert code == 0, out
    assert "sub: " in out and "ImportError" in out and "cannot be imported in a sub-interpreter" in out, out
    assert "main: [0.0, 1.0, 2.0]" in out, out


def test_calls_from_a_finaliser_at_exit():
    code, out = child("""
        import numpy as np, usmbridge as ub
        ub.from_dlpack(np.arange(1.0))  # loaded before exit
        class Late:
            def __del__(self, ub=ub, np=np):
                a = ub.from_dlpack(np.arange(3.0))
                b = ub.from_dlpack(np.arange(3.0), copy=True)
                print("at exit:", np.from_dlpack(a).tolist(), np.from_dlpack(b).tolist(), flush=True)
        late = Late()
        """)
    assert code == 0, out
    assert "at exit: [0.0, 1.0, 2.0] [0.0, 1.0, 2.0]" in out, out


class Boom(Exception):
    pass


class Key:
    """A key that collides with 'shape' and raises when compared."""

    def __init__(self, exc):
        self.exc = exc

    def __hash__(self):
        return hash("shape")

    def __eq__(self, other):
        raise self.exc


@pytest.mark.parametrize("exc", [Boom("in __eq__"), KeyboardInterrupt(), MemoryError()],
                         ids=["exception", "KeyboardInterrupt", "MemoryError"])
def test_suai_key_lookup_errors_propagate(exc):
    dpctl = pytest.importorskip("dpctl")
    import dpctl.memory as dm
    mem = dm.MemoryUSMShared(64, queue=dpctl.SyclQueue("opencl:cpu"))
    d = dict(mem.__sycl_usm_array_interface__)

    class P:
        @property
        def __sycl_usm_array_interface__(self):
            bad = {Key(exc): 0}
            bad.update(d)
            return bad

    with pytest.raises(type(exc)) as info:
        ub.asarray(P())
    assert info.value is exc
    with pytest.raises(type(exc)):
        dm.as_usm_memory(P())  # dpctl raises it too


@pytest.mark.parametrize("how", ["view", "go"])
def test_capsule_dropped_while_raising_keeps_the_exception(how):
    # A consumer that refuses a tensor raises, then drops the capsule
    # (mpi4py does for a read-only array it was asked to write): the
    # capsule's destructor runs with that exception pending and must leave
    # it there. list.sort drops the keys it made when a key call raises.
    a = ub.from_dlpack(np.arange(4.0))
    kw = {"max_version": (1, 0)} if how == "view" else {"max_version": (1, 0), "copy": True}
    refused = ValueError("the consumer refused it")

    def key(i):
        if i == 1:
            raise refused
        return a.__dlpack__(**kw)

    with pytest.raises(ValueError) as e:
        sorted([0, 1], key=key)
    assert e.value is refused
