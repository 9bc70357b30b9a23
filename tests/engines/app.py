"""What `sclc run` runs in the engines test: one line per fact it checks."""
import os
import pathlib
import subprocess
import sys

import six

print("user", os.getuid(), subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip())
print("python", sys.prefix, "six", six.__version__)
print("jq", subprocess.run(["jq", "--version"], capture_output=True, text=True).stdout.strip())
cache = pathlib.Path(os.environ["APP_CACHE"]) / "probe"
cache.write_text("ok")
print("cache", cache.read_text())
print("token", os.environ.get("APP_TOKEN", "<unset>"))
print("data", pathlib.Path("/data/hello.txt").read_text().strip())
print("build-secret-mounted", os.path.exists("/run/secrets/pypi.netrc"))
