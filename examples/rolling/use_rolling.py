# A user of examples/rolling, which mypy --strict must accept with the stub
# `python -m usmbridge.build --stubs` writes, but for its last line, a
# deliberate mistake mypy must report (rolling_test.go).
import numpy as np

import rolling

w = rolling.Window(8, device="cpu")
w.push(np.arange(3, dtype=np.float32))
mean, var = w.stats()
spread: float = var**0.5 + mean
n: int = len(w) + w.size
same: rolling.Window = rolling.Window.of(np.ones(2, np.float32))
version: str = rolling.__version__
m = rolling.rolling_mean(np.arange(4.0), 2, out=None)
try:
    rolling.Window(0)
except rolling.WindowError as e:
    reason: str = str(e)
w.push(1.5)
