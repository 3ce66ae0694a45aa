# A user of hostilé (test/hostilemod), whose names shadow what a stub
# imports (Optional, np, int, property) and whose members are named like
# types and like their own class; mypy --strict must accept it with the
# stub `python -m usmbridge.build --stubs` writes (test/stubs_test.go).
import numpy as np

import hostilé

x: hostilé.Array = hostilé.naïve()
y: hostilé.Array = hostilé.Optional(np.arange(3.0)) or hostilé.np(x) or hostilé.int(x)
n: str = hostilé.ends(1, 2, d=3) + hostilé.texts() + hostilé.where((14, 0))
f: float = hostilé.ñ()
p = hostilé.Plan(name="p")
i: int = p.int() + p.Optional(2)
q: hostilé.Plan = p.Plan()
a: hostilé.Array = p.Array()
b: bool = p.property(None) and hostilé.match() and hostilé.type()
p.self = 2.0
s: float = p.self + p.float
g: str = p.größe
v: hostilé.__Vec = p.np(None)
k: int = hostilé.Größe().größe(x, n=3)
t: bool = hostilé.token(1) == hostilé.token(2)
u: hostilé._ArrayLike | None = None
an: hostilé.Any = hostilé.make_any(3)
m: int = hostilé.any_n(an) + hostilé.any_n(None) + an.n
