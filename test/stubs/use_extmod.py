# A user of extmod's class, which mypy --strict must accept with the stub
# `python -m usmbridge.build --stubs` writes (test/stubs_test.go).
import numpy as np

import extmod

p = extmod.Plan(2.0, name="p")
out: extmod.Array = p.run(np.arange(3.0))
p.a = 3.0
p.scale(1.5)
q: extmod.Plan = extmod.combine(p, None).scaled(2.0).itself()
runs: int = q.runs + len(out)
t: extmod.Token = extmod.token(1)
ident: int = t.id
same: bool = t == extmod.token(1) or t != 3 or t == None  # noqa: E711
next_t: extmod.Token = t + 1
first: float = extmod.ascending(np.arange(3.0))
kept: int = extmod.held_count()
try:
    extmod.fail("value")
except extmod.ForkError:
    pass
# The rest of the class and function model (issue 44).
s = extmod.Series(np.arange(3.0))
s32 = extmod.Series(np.arange(3.0, dtype=np.float32))
ramp: extmod.Series = extmod.Series.ramp(3)
count: int = len(s) + len(ramp)
item: float = s[0]
values: list[float] = [x for x in s]
has: bool = 2.0 in s
total: float = extmod.Series.total(np.ones(2, np.float32)) + extmod.Series.total(np.ones(2))
kind: str = extmod.Series.kind()
with s as entered:
    same_series: extmod.Series = entered
lo, hi = extmod.minmax(np.arange(3.0))
spread: float = hi - lo
reduced: float = extmod.reduce(np.arange(3.0), "max") + extmod.reduce(np.arange(3.0), mode="mean")
maybe: float | None = extmod.twice(None)
version: str = extmod.__version__
modes: tuple[str, ...] = extmod.MODES
steps: list[int] = list(extmod.count_up(3))
where: str = extmod.where("cpu") + extmod.where((14, 0))
try:
    extmod.raise_error("shape")
except extmod.ShapeError as e:
    err: extmod.Error = e


class Sub(extmod.Series):
    def __init__(self, n: int) -> None:
        super().__init__(np.arange(float(n)))
