"""Reads Apptainer definition files with spython (Singularity Python's
parser) and prints, as one JSON list, what it read of each: the From
header, the %files, %environment and %labels lines and the %post lines
(each stripped by spython), or the error it raised."""

import json
import sys

from spython.main.parse.parsers import SingularityParser
from spython.logger import bot

bot.level = 0  # no warnings on stdout

out = []
for path in sys.argv[1:]:
    entry = {"file": path, "error": None}
    try:
        parser = SingularityParser(path)
        layers = list(parser.recipe.values())
        if len(layers) != 1:
            raise ValueError("%d layers" % len(layers))
        r = layers[0]
        entry.update(
            fromHeader=r.fromHeader,
            files=r.files,
            environ=r.environ,
            labels=r.labels,
            install=r.install,
        )
    except Exception as e:  # noqa: BLE001 - every failure is a finding
        entry["error"] = "%s: %s" % (type(e).__name__, e)
    out.append(entry)
json.dump(out, sys.stdout)
