# A user of examples/linalg, which mypy --strict must accept with the stub
# `python -m usmbridge.build --stubs` writes (test/stubs_test.go).
import numpy as np
import linalg

x = np.arange(4.0)
y = np.ones(4)
r = linalg.axpby(2.0, x, 3.0, y)
out = np.zeros(4)
linalg.axpby(1.0, x, 1.0, y, out=out)
m = linalg.Moments(4)
m.update(x)
n: int = m.count
mean: linalg.Array = m.mean()
k: int = mean.shape[0]
