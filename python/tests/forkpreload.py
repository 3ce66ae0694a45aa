"""A module that uses usmbridge while it is imported, for forkcheck.py's
forkserver-preloaded scenario: a forkserver that preloads it runs the Go
runtime before it forks its workers."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np
import usmbridge as ub

ub.from_dlpack(np.zeros(1))
