# What mypy --strict must refuse, one error a line (test/stubs_test.go
# counts them): a wrong argument type, an unknown keyword, a read-only
# property set, a wrong result type, a Token where a Plan goes; a str
# outside its choices, a float for a device, a str for an int, a tuple or
# an Optional[float] for a str, an attribute of the wrong type, an int
# used as a str, a class method given an argument it does not take.
import extmod

extmod.Plan("2")
extmod.Plan(2.0, nom="p")
extmod.Plan(1.0).runs = 3
s: str = extmod.Plan(1.0).a
extmod.combine(extmod.token(1))
extmod.reduce(extmod.Series.ramp(2).stored(), "median")
extmod.where(3.5)
extmod.Series.ramp("3")
t: str = extmod.minmax(extmod.Series.ramp(2).stored())
f: str = extmod.twice(1.0)
v: int = extmod.__version__
for i in extmod.count_up(2): i.upper()
extmod.Series.kind(3)
