# What mypy --strict must refuse, one error a line (test/stubs_test.go
# counts them): a str for a float, out= given by position, an int for an
# array, a str for Moments' n, a float count.
import linalg

linalg.axpby("2", linalg.Moments(2).mean(), 1.0, linalg.Moments(2).mean())
linalg.axpby(2.0, linalg.Moments(2).mean(), 1.0, linalg.Moments(2).mean(), linalg.Moments(2).mean())
linalg.Moments(2).update(3)
linalg.Moments("2")
c: float = linalg.Moments(2).count.real + "x"
