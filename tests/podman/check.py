"""The env's command: checks what the image gives the runtime user."""

import os
import sys

assert os.getuid() == 1001, os.getuid()
assert os.stat(__file__).st_uid == 1001, "COPY --chown: check.py is owned by the runtime user"
assert os.getcwd() == "/workspace", os.getcwd()
assert os.environ["SMOKE_CACHE"] == "/cache/smoke"
assert os.stat("/cache/smoke").st_uid == 1001, "the writable folder is owned by the runtime user"
print("check-ok", sys.executable)
