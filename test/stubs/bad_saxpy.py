# What mypy --strict must refuse, one error a line (test/stubs_test.go
# counts them): a str for a float, an int and a list for arrays, a str
# result as an int, a misspelt keyword.
import saxpy

saxpy.saxpy("2", saxpy.ramp(2), saxpy.ramp(2))
saxpy.saxpy(2.0, 1, saxpy.ramp(2))
saxpy.saxpy(2.0, saxpy.ramp(2), [1.0])
s: int = saxpy.path(saxpy.ramp(2), saxpy.ramp(2))
saxpy.ramp(n=3, devices="cpu")
