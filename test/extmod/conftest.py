"""A test of extmod that hangs (a deadlock between the GIL and a goroutine)
fails with every thread's stack instead of holding up the run."""
import faulthandler
import os

import pytest

HANG_SECONDS = int(os.environ.get("USMBRIDGE_HANG_SECONDS", "600"))


@pytest.fixture(autouse=True)
def _hang_guard():
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
