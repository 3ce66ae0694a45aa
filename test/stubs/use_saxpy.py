# A user of examples/saxpy, which mypy --strict must accept with the stub
# `python -m usmbridge.build --stubs` writes (test/stubs_test.go).
import numpy as np
import saxpy

x = np.ones(8, "f4")
y = np.zeros(8, "f4")
saxpy.saxpy(2.0, x, y)
r: saxpy.Array = saxpy.ramp(4, device="cpu")
n: int = r.shape[0] + len(r)
how: str = saxpy.path(r, memoryview(bytearray(16)))
z = np.from_dlpack(saxpy.ramp(3))
