"""pip's own reading of requirements files, for the differential test in
requirements.rs. Reads a JSON list of cases (each the file's bytes as a
list of ints) on stdin and prints, per case, pip's reading in the same
rendering as the Rust side: one line per logical line,
`LINENO|ARGS|OPT=VALUE OPT ...|IGNORED WORDS`, or `error` where pip's parser
raises (later lines are not read). Uses RequirementsFileParser._parse_file
(no recursion into -r/-c files), recording every option optparse processes.
"""
import json
import optparse
import os
import sys
import tempfile

from pip._internal.req import req_file

log = []
_process = optparse.Option.process


def process(self, opt, value, values, parser):
    log.append(self.get_opt_string() if value is None else f"{self.get_opt_string()}={value}")
    return _process(self, opt, value, values, parser)


optparse.Option.process = process
_parse_args = optparse.OptionParser.parse_args
rest = []


def parse_args(self, args=None, values=None):
    o, r = _parse_args(self, args, values)
    rest[:] = r
    return o, r


optparse.OptionParser.parse_args = parse_args

out = []
for data in json.load(sys.stdin):
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, "wb") as f:
        f.write(bytes(data))
    lines = []
    parser = req_file.RequirementsFileParser(None, req_file.get_line_parser(None))
    it = parser._parse_file(path, False)
    while True:
        log.clear()
        rest.clear()
        try:
            line = next(it)
        except StopIteration:
            break
        except Exception:
            lines.append("error")
            break
        lines.append(f"{line.lineno}|{line.args}|{' '.join(log)}|{' '.join(rest)}")
    os.unlink(path)
    out.append("\n".join(lines))
print(json.dumps(out))
