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
