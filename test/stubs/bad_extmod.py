# What mypy --strict must refuse, one error a line (test/stubs_test.go
# counts them): a wrong argument type, an unknown keyword, a read-only
# property set, a wrong result type, a Token where a Plan goes.
import extmod

extmod.Plan("2")
extmod.Plan(2.0, nom="p")
extmod.Plan(1.0).runs = 3
s: str = extmod.Plan(1.0).a
extmod.combine(extmod.token(1))
