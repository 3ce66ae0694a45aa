# What mypy --strict must refuse, one error a line (test/stubs_test.go
# counts them): the types behind names that shadow the stub's imports.
import hostilé

hostilé.naïve("inf")
s: str = hostilé.Plan().int()
hostilé.Plan().Optional("2")
t: hostilé.Token = hostilé.Plan().Plan()
hostilé.Plan().self = "x"
hostilé.ends(d="3")
hostilé.any_n(3)
w: str = hostilé.make_any(1)
